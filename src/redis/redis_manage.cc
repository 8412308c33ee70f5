// RedisBackend's writes of many messages and its message management (API-EXTENSIONS.md
// sections 2-3, issue 14): SendBatch (and Send, a batch of one), AckBatch (and Ack), Update,
// Touch, Count. Each is one script (scripts.cc, scripts_manage.cc), so atomic on the topic.
#include <fmt/format.h>

#include <memory>
#include <optional>

#include "base/random.h"
#include "core/state_machine.h"
#include "redis/key_id.h"
#include "redis/redis_backend.h"
#include "redis/script_reply.h"

namespace chronoq::redis {

using backend::Callback;
using core::Message;
using core::MessageRecord;
using core::MsgStatus;

namespace {

// Waits for two answers: the script's and the topic's registration (where the topics key lives,
// which in a cluster is another node than the topic's), so that an answered send is listed (a
// failed send leaves an empty topic listed for a while).
template <typename T>
struct Join {
  base::Mutex mu;
  int left CQ_GUARDED_BY(mu) = 2;
  std::optional<T> answer CQ_GUARDED_BY(mu);
  Callback<T> done;  // run by the last to arrive, without the lock
  void Arrive(std::optional<T> a) CQ_EXCLUDES(mu) {
    std::optional<T> out;
    {
      base::MutexLock lock(mu);
      if (a) answer = std::move(a);
      if (--left > 0) return;
      out = std::move(answer);
    }
    done(std::move(*out));
  }
};

// The answer of update, touch and count: {'NF'}, {'IS', record...} (refused: `refusal` words why,
// as the state machine does) or {'OK', record...}.
template <typename Refusal>
Result<MessageRecord> OneRecord(const RedisReply& r, const std::string& topic,
                                const std::string& msg_id, std::string_view what, Refusal refusal) {
  const auto& e = r.elements;
  if (r.type != RedisReply::Type::kArray || e.empty()) return Unexpected(r, what);
  if (e[0].str == "NF" && e.size() == 1) return NotFoundError(topic, msg_id);
  if (e.size() != 1 + kRecordFields) return Unexpected(r, what);
  MessageRecord rec = ParseRecord(topic, e, 1);
  if (e[0].str == "OK") return rec;
  if (e[0].str != "IS") return Unexpected(r, what);
  Status s = refusal(rec);
  return s.ok() ? InvalidState(fmt::format("message '{}' cannot be {}", msg_id, what)) : s;
}

}  // namespace

void RedisBackend::Send(core::NewMessage m, Callback<Result<backend::Sent>> done) {
  std::vector<core::NewMessage> one;
  one.push_back(std::move(m));
  SendBatch(std::move(one),
            [done = std::move(done)](Result<std::vector<Result<backend::Sent>>> r) mutable {
              if (!r.has_value()) return done(r.error());
              done(std::move(r->front()));
            });
}

void RedisBackend::SendBatch(std::vector<core::NewMessage> msgs,
                             Callback<Result<std::vector<Result<backend::Sent>>>> done) {
  if (msgs.empty()) return done(std::vector<Result<backend::Sent>>());
  const TimePoint now = clock_->Now();
  const std::string topic = msgs.front().topic;
  std::vector<MessageRecord> recs;
  recs.reserve(msgs.size());
  std::vector<std::string> args;  // the items' arguments; RunSends puts now and retention first
  // A node that creates topics in layout 4 also sends each msgId's key id and record bucket
  // (key_id.h), so a layout-4 topic's send script does no hex or hash work (scripts.cc kSend).
  const bool key_ids = options_.record_format == 4;
  args.reserve((key_ids ? 11 : 9) * msgs.size());
  bool own_callback = false;
  size_t payload_bytes = 0;
  for (core::NewMessage& m : msgs) {
    if (m.msg_id.empty()) m.msg_id = base::NewMsgId();
    // The script resolves what the request left out from the topic's configuration.
    std::string ttl = m.ttl ? std::to_string(m.ttl->count()) : std::string();
    std::string max_retry = m.max_retry ? std::to_string(*m.max_retry) : std::string();
    if (!m.ttl) m.ttl = Millis(0);  // the answer brings the expire time and maxRetry
    if (!m.max_retry) m.max_retry = 0;
    MessageRecord rec = core::CreateRecord(std::move(m), now, 0);
    args.push_back(rec.msg_id);
    args.push_back(rec.payload);  // a copy: the answer has the payload too
    payload_bytes += rec.payload.size();
    args.push_back(Ms(rec.produce_time));
    args.push_back(Ms(rec.trigger_time));
    args.push_back(std::move(ttl));
    args.push_back(std::move(max_retry));
    args.push_back(std::to_string(rec.priority));
    args.push_back(std::to_string(rec.count_trigger));
    // The script decides the lane (core::ResolveDefaults): this callback, else the topic's.
    args.push_back(CallbackBytes(rec.callback));
    if (key_ids) {
      std::string kid = KeyIdOf(rec.msg_id);
      args.push_back(std::to_string(RecordBucketOf(kid)));
      args.push_back(std::move(kid));
    }
    own_callback |= rec.callback.has_value();
    recs.push_back(std::move(rec));
  }
  using Answer = Result<std::vector<Result<backend::Sent>>>;
  auto join = std::make_shared<Join<Answer>>();
  join->done = std::move(done);
  TouchTopic(topic, now, /*add=*/true, [join] { join->Arrive(std::nullopt); });
  SendPart part{std::move(args), std::move(recs), payload_bytes,
                [join](Answer a) { join->Arrive(std::move(a)); }};
  if (!own_callback) return QueueSend(topic, std::move(part));
  // A message with its own callback goes to the push lane: its topic is in the push set before
  // the script runs (a topic whose own callback decides is listed when that is set).
  EnsurePushListed(topic, /*force=*/false,
                   [this, topic, part = std::move(part)](Status listed) mutable {
                     if (!listed.ok()) return part.done(std::move(listed));
                     QueueSend(topic, std::move(part));
                   });
}

void RedisBackend::Ack(std::string topic, std::string msg_id, bool ack, Callback<Status> done) {
  std::vector<backend::AckItem> one;
  one.push_back(backend::AckItem{std::move(msg_id), ack, "", false, 0});
  AckBatch(std::move(topic), std::move(one),
           [done = std::move(done)](Result<std::vector<Status>> r) mutable {
             if (!r.has_value()) return done(r.error());
             done(std::move(r->front()));
           });
}

void RedisBackend::AckBatch(std::string topic, std::vector<backend::AckItem> items,
                            Callback<Result<std::vector<Status>>> done) {
  if (items.empty()) return done(std::vector<Status>());
  const TimePoint now = clock_->Now();
  std::vector<std::string> args;  // the items' arguments; RunMerged puts now and the rest first
  args.reserve(4 * items.size());
  for (const backend::AckItem& it : items) {
    args.push_back(it.msg_id);
    args.push_back(it.ack ? "1" : it.release ? "r" : "0");
    args.push_back(it.ack || it.release ? std::string() : it.reason);
    args.push_back(std::to_string(std::max<int64_t>(0, it.attempt)));
  }
  QueueAck(topic, AckPart{std::move(args), std::move(items), std::move(done)});
  TouchTopic(topic, now, /*add=*/false, nullptr);
}

void RedisBackend::Answer(const std::string& topic, MessageRecord rec, TimePoint now,
                          bool changed_visibility, Callback<Result<Message>> done) {
  const MsgStatus st = core::StatusAt(rec, now);
  if (changed_visibility) {
    const bool ready = st == MsgStatus::kReady;
    if (ready && rec.push) NotifyPush(topic);
    if (ready && !rec.push) {
      News(topic);
      NotifyReady(topic);
    }
    // What other nodes need: ready now, or a new time at which it will be.
    const std::string next = Ms(ready ? core::NaturalEndTime(rec) : rec.visible_at);
    ArmWake(topic, next);
    Publish(topic,
            rec.push ? kPubPushLane | (ready ? kPubPushReady : 0) : (ready ? kPubPullReady : 0),
            next);
  }
  done(Message{std::move(rec), st});
}

void RedisBackend::Update(backend::UpdateRequest req, Callback<Result<Message>> done) {
  const TimePoint now = clock_->Now();
  const core::MessageUpdate& u = req.update;
  std::vector<std::string> args = {req.msg_id, Ms(now), std::to_string(options_.retention.count())};
  auto field = [&args](std::string name, std::string value) {
    args.push_back(std::move(name));
    args.push_back(std::move(value));
  };
  if (u.trigger_time) field("tt", Ms(std::max(*u.trigger_time, now)));
  if (u.payload) field("p", *u.payload);
  if (u.ttl) field("ttl", std::to_string(u.ttl->count()));
  if (u.max_retry) field("mr", std::to_string(*u.max_retry));
  if (u.priority) field("pr", std::to_string(*u.priority));
  const bool moves = u.trigger_time.has_value() || u.priority.has_value();
  const std::string topic = req.topic;  // `req` moves into the callback below
  Eval(kUpdateScript, topic, std::move(args),
       AfterReplicas(topic, [this, req = std::move(req), now, moves,
                             done = std::move(done)](Result<RedisReply> r) mutable {
         if (!r.has_value()) return done(r.error());
         Result<MessageRecord> rec =
             OneRecord(*r, req.topic, req.msg_id, "updated", [&](const MessageRecord& old) {
               Result<MessageRecord> next = core::ApplyUpdate(old, req.update, now);
               return next.has_value() ? Status::Ok() : next.error();
             });
         if (!rec.has_value()) return done(rec.error());
         Answer(req.topic, std::move(*rec), now, moves, std::move(done));
       }));
}

void RedisBackend::Touch(std::string topic, std::string msg_id, std::optional<Millis> timeout,
                         Callback<Result<Message>> done) {
  const TimePoint now = clock_->Now();
  // For the refusal's wording only: the script resolves the topic's when `timeout` is absent.
  const Millis ack_timeout = timeout.value_or(LocalConfigOf(topic).ack_timeout);
  std::vector<std::string> args = {msg_id, Ms(now), std::to_string(options_.retention.count()),
                                   timeout ? std::to_string(timeout->count()) : std::string()};
  Eval(kTouchScript, topic, std::move(args),
       AfterReplicas(topic, [this, topic, msg_id, now, ack_timeout,
                             done = std::move(done)](Result<RedisReply> r) mutable {
         if (!r.has_value()) return done(r.error());
         core::Event event{core::EventKind::kTouch, ack_timeout};
         Result<MessageRecord> rec =
             OneRecord(*r, topic, msg_id, "touched", [&](const MessageRecord& old) {
               Result<MessageRecord> next = core::Apply(old, event, now);
               return next.has_value() ? Status::Ok() : next.error();
             });
         if (!rec.has_value()) return done(rec.error());
         // The delivering node's timer was at the old deadline: this node looks at the new one.
         ArmWake(topic, Ms(rec->visible_at));
         Answer(topic, std::move(*rec), now, false, std::move(done));
       }));
}

void RedisBackend::Count(std::string topic, std::string msg_id, int64_t count,
                         Callback<Result<Message>> done) {
  const TimePoint now = clock_->Now();
  std::vector<std::string> args = {msg_id, std::to_string(count), Ms(now),
                                   std::to_string(options_.retention.count())};
  Eval(kCountScript, topic, std::move(args),
       AfterReplicas(topic, [this, topic, msg_id, now, count,
                             done = std::move(done)](Result<RedisReply> r) mutable {
         if (!r.has_value()) return done(r.error());
         core::Event event{core::EventKind::kCount, Millis(0), count};
         Result<MessageRecord> rec =
             OneRecord(*r, topic, msg_id, "counted", [&](const MessageRecord& old) {
               Result<MessageRecord> next = core::Apply(old, event, now);
               return next.has_value() ? Status::Ok() : next.error();
             });
         if (!rec.has_value()) return done(rec.error());
         const bool reached = rec->count_trigger > 0 && rec->count >= rec->count_trigger;
         Answer(topic, std::move(*rec), now, reached, std::move(done));
       }));
}

}  // namespace chronoq::redis
