#include "tests/testutil/fake_backend.h"

#include <fmt/format.h>

#include <algorithm>

namespace chronoq::testutil {

using core::Message;
using core::MsgStatus;

namespace {

FakeBackend::Call MakeCall(std::string op, std::string topic = {}, std::string msg_id = {}) {
  FakeBackend::Call c;
  c.op = std::move(op);
  c.topic = std::move(topic);
  c.msg_id = std::move(msg_id);
  return c;
}

Status NotFoundError(const std::string& topic, const std::string& msg_id) {
  return NotFound(fmt::format("message '{}' not found in topic '{}'", msg_id, topic));
}

}  // namespace

std::optional<Status> FakeBackend::Begin(Call call) {
  std::lock_guard lock(mu_);
  calls_.push_back(std::move(call));
  return std::exchange(fail_next_, std::nullopt);
}

void FakeBackend::Answer(UniqueFunction<void()> answer) {
  {
    std::lock_guard lock(mu_);
    if (held_) {
      pending_.push_back(std::move(answer));
      return;
    }
  }
  answer();
}

void FakeBackend::NotifyReady(const std::string& topic) {
  backend::ReadyListener* l;
  {
    std::lock_guard lock(mu_);
    l = listener_;
  }
  if (l != nullptr) l->OnReady(topic);
}

void FakeBackend::Send(core::NewMessage m, backend::Callback<Result<backend::Sent>> done) {
  Call c = MakeCall("send", m.topic, m.msg_id);
  c.send = m;
  if (std::optional<Status> f = Begin(std::move(c))) {
    return Answer([done = std::move(done), s = *f]() mutable { done(s); });
  }
  backend::Sent sent;
  {
    std::lock_guard lock(mu_);
    if (m.msg_id.empty()) m.msg_id = fmt::format("gen{}", next_id_++);
    auto key = std::make_pair(m.topic, m.msg_id);
    auto it = messages_.find(key);
    if (it != messages_.end() && core::InLife(it->second.message.status)) {
      sent = backend::Sent{it->second.message, true};
    } else {
      Message msg;
      msg.record.topic = m.topic;
      msg.record.msg_id = m.msg_id;
      msg.record.payload = m.payload;
      msg.record.max_retry = m.max_retry;
      msg.record.trigger_time = TimePoint(m.delay);  // a marker: the fake has no clock
      msg.record.expire_time = TimePoint(m.delay + m.ttl);
      msg.status = m.delay.count() <= 0 ? MsgStatus::kReady : MsgStatus::kWaiting;
      messages_[key] = Entry{msg, next_order_++};
      sent = backend::Sent{std::move(msg), false};
    }
  }
  const bool ready = !sent.existing && sent.message.status == MsgStatus::kReady;
  std::string topic = sent.message.record.topic;
  Answer([done = std::move(done), sent = std::move(sent)]() mutable { done(std::move(sent)); });
  if (ready) NotifyReady(topic);
}

void FakeBackend::Pull(backend::PullRequest req,
                       backend::Callback<Result<std::vector<Message>>> done) {
  Call c = MakeCall("pull", req.topic);
  c.pull = req;
  if (std::optional<Status> f = Begin(std::move(c))) {
    return Answer([done = std::move(done), s = *f]() mutable { done(s); });
  }
  std::vector<Message> out;
  {
    std::lock_guard lock(mu_);
    std::vector<Entry*> ready;
    for (auto& [key, e] : messages_) {
      if (key.first == req.topic && e.message.status == MsgStatus::kReady) ready.push_back(&e);
    }
    std::sort(ready.begin(), ready.end(),
              [](const Entry* a, const Entry* b) { return a->order < b->order; });
    for (Entry* e : ready) {
      if (out.size() >= static_cast<size_t>(std::max(1, req.batch))) break;
      e->message.status = MsgStatus::kConsuming;
      ++e->message.record.retry;
      out.push_back(e->message);
    }
  }
  Answer([done = std::move(done), out = std::move(out)]() mutable { done(std::move(out)); });
}

void FakeBackend::Ack(std::string topic, std::string msg_id, bool ack,
                      backend::Callback<Status> done) {
  Call c = MakeCall("ack", topic, msg_id);
  c.flag = ack;
  std::optional<Status> f = Begin(std::move(c));
  Status s;
  bool ready = false;
  if (f) {
    s = *f;
  } else {
    std::lock_guard lock(mu_);
    auto it = messages_.find({topic, msg_id});
    if (it == messages_.end()) {
      s = NotFoundError(topic, msg_id);
    } else if (it->second.message.status != MsgStatus::kConsuming) {
      s = InvalidState(fmt::format("message '{}' is not consuming", msg_id));
    } else {
      it->second.message.status = ack ? MsgStatus::kConsumeOk : MsgStatus::kReady;
      ready = !ack;
    }
  }
  Answer([done = std::move(done), s]() mutable { done(s); });
  if (ready) NotifyReady(topic);
}

void FakeBackend::Delete(std::string topic, std::string msg_id, bool release,
                         backend::Callback<Status> done) {
  Call c = MakeCall("delete", topic, msg_id);
  c.flag = release;
  std::optional<Status> f = Begin(std::move(c));
  Status s;
  if (f) {
    s = *f;
  } else {
    std::lock_guard lock(mu_);
    auto it = messages_.find({topic, msg_id});
    if (it == messages_.end()) {
      s = NotFoundError(topic, msg_id);
    } else if (!core::InLife(it->second.message.status)) {
      s = InvalidState(fmt::format("message '{}' has ended", msg_id));
    } else if (release) {
      messages_.erase(it);
    } else {
      it->second.message.status = MsgStatus::kDelete;
    }
  }
  Answer([done = std::move(done), s]() mutable { done(s); });
}

void FakeBackend::Get(std::string topic, std::string msg_id,
                      backend::Callback<Result<Message>> done) {
  std::optional<Status> f = Begin(MakeCall("get", topic, msg_id));
  Result<Message> r = f ? Result<Message>(*f) : Result<Message>(Status::Ok());
  if (!f) {
    std::lock_guard lock(mu_);
    auto it = messages_.find({topic, msg_id});
    r = it == messages_.end() ? Result<Message>(NotFound(fmt::format(
                                    "message '{}' not found in topic '{}'", msg_id, topic)))
                              : Result<Message>(it->second.message);
  }
  Answer([done = std::move(done), r = std::move(r)]() mutable { done(std::move(r)); });
}

void FakeBackend::GetTopicInfo(std::string topic, backend::Callback<Result<core::TopicInfo>> done) {
  std::optional<Status> f = Begin(MakeCall("info", topic));
  core::TopicInfo info;
  info.topic = topic;
  if (!f) {
    std::lock_guard lock(mu_);
    for (auto& [key, e] : messages_) {
      if (key.first != topic) continue;
      info.waiting += e.message.status == MsgStatus::kWaiting;
      info.ready += e.message.status == MsgStatus::kReady;
      info.consuming += e.message.status == MsgStatus::kConsuming;
    }
  }
  Result<core::TopicInfo> r = f ? Result<core::TopicInfo>(*f) : Result<core::TopicInfo>(info);
  Answer([done = std::move(done), r = std::move(r)]() mutable { done(std::move(r)); });
}

void FakeBackend::ListTopics(backend::Callback<Result<std::vector<core::TopicInfo>>> done) {
  std::optional<Status> f = Begin(MakeCall("list"));
  std::map<std::string, core::TopicInfo> topics;
  if (!f) {
    std::lock_guard lock(mu_);
    for (auto& [key, e] : messages_) {
      core::TopicInfo& info = topics[key.first];
      info.topic = key.first;
      info.waiting += e.message.status == MsgStatus::kWaiting;
      info.ready += e.message.status == MsgStatus::kReady;
      info.consuming += e.message.status == MsgStatus::kConsuming;
    }
  }
  std::vector<core::TopicInfo> list;
  for (auto& [name, info] : topics) list.push_back(std::move(info));
  using R = Result<std::vector<core::TopicInfo>>;
  R r = f ? R(*f) : R(std::move(list));
  Answer([done = std::move(done), r = std::move(r)]() mutable { done(std::move(r)); });
}

void FakeBackend::SetReadyListener(backend::ReadyListener* listener) {
  std::lock_guard lock(mu_);
  listener_ = listener;
}

void FakeBackend::SetEventSink(backend::EventSink* sink) {
  std::lock_guard lock(mu_);
  sink_ = sink;
}

std::vector<FakeBackend::Call> FakeBackend::calls() {
  std::lock_guard lock(mu_);
  return calls_;
}

void FakeBackend::FailNext(Status s) {
  std::lock_guard lock(mu_);
  fail_next_ = std::move(s);
}

void FakeBackend::Hold() {
  std::lock_guard lock(mu_);
  held_ = true;
}

void FakeBackend::Release() {
  std::deque<UniqueFunction<void()>> pending;
  {
    std::lock_guard lock(mu_);
    held_ = false;
    pending.swap(pending_);
  }
  for (auto& answer : pending) answer();
}

void FakeBackend::MakeReady(const std::string& topic, const std::string& msg_id) {
  {
    std::lock_guard lock(mu_);
    auto it = messages_.find({topic, msg_id});
    if (it == messages_.end() || it->second.message.status != MsgStatus::kWaiting) return;
    it->second.message.status = MsgStatus::kReady;
  }
  NotifyReady(topic);
}

void FakeBackend::Emit(const std::string& topic, const backend::TopicEvents& e) {
  backend::EventSink* sink;
  {
    std::lock_guard lock(mu_);
    sink = sink_;
  }
  if (sink != nullptr) sink->OnEvents(topic, e);
}

bool FakeBackend::has_listener() {
  std::lock_guard lock(mu_);
  return listener_ != nullptr;
}

bool FakeBackend::has_sink() {
  std::lock_guard lock(mu_);
  return sink_ != nullptr;
}

// Issue 14's operations: not faked yet.
void FakeBackend::SendBatch(std::vector<core::NewMessage>,
                            backend::Callback<Result<std::vector<backend::Sent>>> done) {
  done(Internal("not faked"));
}
void FakeBackend::AckBatch(std::string, std::vector<backend::AckItem>,
                           backend::Callback<Result<std::vector<Status>>> done) {
  done(Internal("not faked"));
}
void FakeBackend::Update(backend::UpdateRequest, backend::Callback<Result<Message>> done) {
  done(Internal("not faked"));
}
void FakeBackend::Touch(std::string, std::string, Millis, backend::Callback<Result<Message>> done) {
  done(Internal("not faked"));
}
void FakeBackend::Count(std::string, std::string, int64_t,
                        backend::Callback<Result<Message>> done) {
  done(Internal("not faked"));
}
void FakeBackend::List(backend::ListRequest, backend::Callback<Result<backend::ListPage>> done) {
  done(Internal("not faked"));
}

}  // namespace chronoq::testutil
