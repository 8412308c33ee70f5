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

backend::Sent FakeBackend::StoreLocked(core::NewMessage m) {
  if (m.msg_id.empty()) m.msg_id = fmt::format("gen{}", next_id_++);
  auto key = std::make_pair(m.topic, m.msg_id);
  auto it = messages_.find(key);
  if (it != messages_.end() && core::InLife(it->second.message.status)) {
    return backend::Sent{it->second.message, true};
  }
  Message msg;
  msg.record.topic = m.topic;
  msg.record.msg_id = m.msg_id;
  msg.record.payload = m.payload;
  core::ResolveDefaults(m, ConfigLocked(m.topic));
  msg.record.max_retry = *m.max_retry;
  msg.record.priority = m.priority;
  msg.record.count_trigger = m.count_trigger;
  msg.record.callback = m.callback;
  // Markers: the fake has no clock.
  msg.record.trigger_time = m.trigger_time.value_or(TimePoint(m.delay));
  msg.record.expire_time = TimePoint(m.delay + *m.ttl);
  msg.status = !m.trigger_time && m.delay.count() <= 0 ? MsgStatus::kReady : MsgStatus::kWaiting;
  messages_[key] = Entry{msg, next_order_++};
  return backend::Sent{std::move(msg), false};
}

void FakeBackend::Send(core::NewMessage m, backend::Callback<Result<backend::Sent>> done) {
  Call c = MakeCall("send", m.topic, m.msg_id);
  {
    std::lock_guard lock(mu_);
    core::ResolveDefaults(m, ConfigLocked(m.topic));
  }
  c.send = m;
  if (std::optional<Status> f = Begin(std::move(c))) {
    return Answer([done = std::move(done), s = *f]() mutable { done(s); });
  }
  backend::Sent sent;
  {
    std::lock_guard lock(mu_);
    sent = StoreLocked(std::move(m));
  }
  const bool ready = !sent.existing && sent.message.status == MsgStatus::kReady;
  std::string topic = sent.message.record.topic;
  Answer([done = std::move(done), sent = std::move(sent)]() mutable { done(std::move(sent)); });
  if (ready) NotifyReady(topic);
}

void FakeBackend::TakePush(std::string /*topic*/, int32_t /*max*/, Millis /*lease_margin*/,
                           backend::Callback<Result<backend::PushTake>> done) {
  done(backend::PushTake{});
}

void FakeBackend::Pull(backend::PullRequest req,
                       backend::Callback<Result<std::vector<Message>>> done) {
  Call c = MakeCall("pull", req.topic);
  bool paused;
  {
    std::lock_guard lock(mu_);
    const core::EffectiveTopicConfig config = ConfigLocked(req.topic);
    req.ack_timeout = req.ack_timeout.value_or(config.ack_timeout);
    paused = config.paused;
  }
  c.pull = req;
  if (std::optional<Status> f = Begin(std::move(c))) {
    return Answer([done = std::move(done), s = *f]() mutable { done(s); });
  }
  std::vector<Message> out;
  if (!paused) {
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
  Result<Message> r = f ? Result<Message>(*f) : Result<Message>(Internal("not looked up"));
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

void FakeBackend::Recheck(const std::string& topic) {
  std::lock_guard lock(mu_);
  rechecks_.push_back(topic);
}

std::vector<std::string> FakeBackend::rechecks() {
  std::lock_guard lock(mu_);
  return rechecks_;
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

void FakeBackend::SendBatch(std::vector<core::NewMessage> msgs,
                            backend::Callback<Result<std::vector<Result<backend::Sent>>>> done) {
  Call c = MakeCall("send_batch", msgs.empty() ? std::string() : msgs.front().topic);
  {
    std::lock_guard lock(mu_);
    for (core::NewMessage& m : msgs) core::ResolveDefaults(m, ConfigLocked(m.topic));
  }
  c.batch = msgs;
  if (std::optional<Status> f = Begin(std::move(c))) {
    return Answer([done = std::move(done), s = *f]() mutable { done(s); });
  }
  std::vector<Result<backend::Sent>> out;
  bool ready = false;
  {
    std::lock_guard lock(mu_);
    for (core::NewMessage& m : msgs) {
      backend::Sent sent = StoreLocked(std::move(m));
      ready |= !sent.existing && sent.message.status == MsgStatus::kReady;
      out.push_back(std::move(sent));
    }
  }
  std::string topic = out.empty() ? std::string() : out.front()->message.record.topic;
  Answer([done = std::move(done), out = std::move(out)]() mutable { done(std::move(out)); });
  if (ready) NotifyReady(topic);
}

void FakeBackend::AckBatch(std::string topic, std::vector<backend::AckItem> items,
                           backend::Callback<Result<std::vector<Status>>> done) {
  Call c = MakeCall("ack_batch", topic);
  c.acks = items;
  if (std::optional<Status> f = Begin(std::move(c))) {
    return Answer([done = std::move(done), s = *f]() mutable { done(s); });
  }
  std::vector<Status> out;
  bool ready = false;
  {
    std::lock_guard lock(mu_);
    for (const backend::AckItem& item : items) {
      auto it = messages_.find({topic, item.msg_id});
      if (it == messages_.end()) {
        out.push_back(NotFoundError(topic, item.msg_id));
      } else if (it->second.message.status != MsgStatus::kConsuming) {
        out.push_back(InvalidState(fmt::format("message '{}' is not consuming", item.msg_id)));
      } else {
        it->second.message.status = item.ack ? MsgStatus::kConsumeOk : MsgStatus::kReady;
        if (!item.ack && !item.reason.empty()) it->second.message.record.last_error = item.reason;
        ready |= !item.ack;
        out.push_back(Status::Ok());
      }
    }
  }
  Answer([done = std::move(done), out = std::move(out)]() mutable { done(std::move(out)); });
  if (ready) NotifyReady(topic);
}

// Update, Touch and Count: one message, changed by `change` (which answers an error, or OK and
// whether the message became ready) under the lock.
template <typename Change>
void FakeBackend::ChangeOne(Call call, Change change, backend::Callback<Result<Message>> done) {
  const std::string topic = call.topic;
  const std::string msg_id = call.msg_id;
  if (std::optional<Status> f = Begin(std::move(call))) {
    return Answer([done = std::move(done), s = *f]() mutable { done(s); });
  }
  Result<Message> r = Internal("unset");
  bool ready = false;
  {
    std::lock_guard lock(mu_);
    auto it = messages_.find({topic, msg_id});
    if (it == messages_.end()) {
      r = NotFoundError(topic, msg_id);
    } else if (Status s = change(it->second.message, &ready); !s.ok()) {
      r = std::move(s);
    } else {
      r = it->second.message;
    }
  }
  Answer([done = std::move(done), r = std::move(r)]() mutable { done(std::move(r)); });
  if (ready) NotifyReady(topic);
}

void FakeBackend::Update(backend::UpdateRequest req, backend::Callback<Result<Message>> done) {
  Call c = MakeCall("update", req.topic, req.msg_id);
  c.update = req.update;
  ChangeOne(
      std::move(c),
      [u = std::move(req.update)](Message& m, bool*) {
        if (m.status != MsgStatus::kWaiting && m.status != MsgStatus::kReady) {
          return InvalidState(
              fmt::format("message '{}' is {}", m.record.msg_id, core::StatusName(m.status)));
        }
        if (u.payload) m.record.payload = *u.payload;
        if (u.priority) m.record.priority = *u.priority;
        if (u.max_retry) m.record.max_retry = *u.max_retry;
        if (u.trigger_time) m.record.trigger_time = *u.trigger_time;
        return Status::Ok();
      },
      std::move(done));
}

void FakeBackend::Touch(std::string topic, std::string msg_id, std::optional<Millis> ack_timeout,
                        backend::Callback<Result<Message>> done) {
  Call c = MakeCall("touch", std::move(topic), std::move(msg_id));
  {
    std::lock_guard lock(mu_);
    c.ack_timeout = ack_timeout.value_or(ConfigLocked(c.topic).ack_timeout);
  }
  ChangeOne(
      std::move(c),
      [](Message& m, bool*) {
        return m.status == MsgStatus::kConsuming
                   ? Status::Ok()
                   : InvalidState(fmt::format("message '{}' is {}", m.record.msg_id,
                                              core::StatusName(m.status)));
      },
      std::move(done));
}

void FakeBackend::Count(std::string topic, std::string msg_id, int64_t count,
                        backend::Callback<Result<Message>> done) {
  Call c = MakeCall("count", std::move(topic), std::move(msg_id));
  c.count = count;
  ChangeOne(
      std::move(c),
      [count](Message& m, bool* ready) {
        if (m.status != MsgStatus::kWaiting) {
          return InvalidState(
              fmt::format("message '{}' is {}", m.record.msg_id, core::StatusName(m.status)));
        }
        m.record.count += count;
        if (m.record.count_trigger > 0 && m.record.count >= m.record.count_trigger) {
          m.status = MsgStatus::kReady;
          *ready = true;
        }
        return Status::Ok();
      },
      std::move(done));
}

void FakeBackend::List(backend::ListRequest req,
                       backend::Callback<Result<backend::ListPage>> done) {
  Call c = MakeCall("list_msg", req.topic);
  c.list = req;
  if (std::optional<Status> f = Begin(std::move(c))) {
    return Answer([done = std::move(done), s = *f]() mutable { done(s); });
  }
  // Send order; the cursor is the number of matching messages already listed.
  Result<backend::ListPage> r = backend::ListPage{};
  size_t skip = 0;
  if (!req.cursor.empty()) {
    if (req.cursor.find_first_not_of("0123456789") != std::string::npos || req.cursor.size() > 9) {
      r = InvalidArgument(fmt::format("cursor is not valid: '{}'", req.cursor));
    } else {
      skip = std::stoul(req.cursor);
    }
  }
  if (r.has_value()) {
    std::lock_guard lock(mu_);
    std::vector<const Entry*> match;
    for (const auto& [key, e] : messages_) {
      const MsgStatus s = e.message.status;
      if (key.first == req.topic && (req.status ? s == *req.status : core::InLife(s))) {
        match.push_back(&e);
      }
    }
    std::sort(match.begin(), match.end(),
              [](const Entry* a, const Entry* b) { return a->order < b->order; });
    const size_t end = std::min(match.size(), skip + static_cast<size_t>(req.limit));
    for (size_t i = skip; i < end; ++i) r->messages.push_back(match[i]->message);
    if (end < match.size()) r->next_cursor = std::to_string(end);
  }
  Answer([done = std::move(done), r = std::move(r)]() mutable { done(std::move(r)); });
}

core::EffectiveTopicConfig FakeBackend::ConfigLocked(const std::string& topic) const {
  auto it = configs_.find(topic);
  const core::TopicConfig stored = it == configs_.end() ? core::TopicConfig{} : it->second;
  return (topic_defaults_ != nullptr ? *topic_defaults_ : core::TopicDefaults::ServerOnly())
      .Resolve(topic, stored);
}

void FakeBackend::SetTopicDefaults(const core::TopicDefaults* defaults) {
  std::lock_guard lock(mu_);
  topic_defaults_ = defaults;
}

void FakeBackend::SetTopicConfig(std::string topic, core::TopicConfig change,
                                 backend::Callback<Result<core::TopicConfig>> done) {
  if (std::optional<Status> f = Begin(MakeCall("set_topic_config", topic))) {
    return Answer([done = std::move(done), s = *f]() mutable { done(s); });
  }
  core::TopicConfig stored;
  bool resumed = false;
  {
    std::lock_guard lock(mu_);
    core::TopicConfig& c = configs_[topic];
    resumed = c.paused.value_or(false) && change.paused.has_value() && !*change.paused;
    c = core::Overlay(change, c);
    stored = c;
  }
  Answer([done = std::move(done), stored]() mutable { done(stored); });
  if (resumed) NotifyReady(topic);
}

void FakeBackend::GetTopicConfig(std::string topic,
                                 backend::Callback<Result<core::TopicConfig>> done) {
  if (std::optional<Status> f = Begin(MakeCall("get_topic_config", topic))) {
    return Answer([done = std::move(done), s = *f]() mutable { done(s); });
  }
  core::TopicConfig stored;
  {
    std::lock_guard lock(mu_);
    auto it = configs_.find(topic);
    if (it != configs_.end()) stored = it->second;
  }
  Answer([done = std::move(done), stored]() mutable { done(stored); });
}

void FakeBackend::DeleteTopicConfig(std::string topic, backend::Callback<Status> done) {
  if (std::optional<Status> f = Begin(MakeCall("delete_topic_config", topic))) {
    return Answer([done = std::move(done), s = *f]() mutable { done(s); });
  }
  {
    std::lock_guard lock(mu_);
    configs_.erase(topic);
  }
  Answer([done = std::move(done)]() mutable { done(Status::Ok()); });
}

void FakeBackend::Purge(std::string topic, std::optional<core::MsgStatus> status,
                        backend::Callback<Result<int64_t>> done) {
  if (std::optional<Status> f = Begin(MakeCall("purge", topic))) {
    return Answer([done = std::move(done), s = *f]() mutable { done(s); });
  }
  int64_t n = 0;
  {
    std::lock_guard lock(mu_);
    for (auto& [key, entry] : messages_) {
      MsgStatus& st = entry.message.status;
      if (key.first != topic || !core::InLife(st) || (status && st != *status)) continue;
      st = MsgStatus::kDelete;
      ++n;
    }
  }
  Answer([done = std::move(done), n]() mutable { done(n); });
}

void FakeBackend::Redrive(backend::RedriveRequest req, backend::Callback<Result<int64_t>> done) {
  if (std::optional<Status> f = Begin(MakeCall("redrive", req.topic))) {
    return Answer([done = std::move(done), s = *f]() mutable { done(s); });
  }
  Answer([done = std::move(done)]() mutable {
    done(Internal("redriveMsg is not faked; test it on a real backend"));
  });
}

}  // namespace chronoq::testutil
