// RedisBackend's sends and acks after the request is built (redis_manage.cc SendBatch,
// AckBatch): coalesced per topic into few scripts (group commit, coalescer.h, docs/redis.md
// "Sizing"; one RunMerged for both kinds), each request answered from its items of the merged
// reply, and the topics key written once per topic per interval instead of once per operation.
#include <fmt/format.h>

#include <utility>

#include "core/state_machine.h"
#include "redis/redis_backend.h"
#include "redis/script_reply.h"

namespace chronoq::redis {

using core::Message;
using core::MessageRecord;
using core::MsgStatus;

namespace {

// The prologue of AnswerSends and AnswerAcks: when the merged script failed or answered
// something else than an item per request item, every request is told why (true).
template <typename Size>
bool FailedAll(std::vector<Size>& parts, const Result<RedisReply>& r, std::string_view what) {
  size_t total = 0;
  for (const Size& p : parts) total += p.items();
  Status failed = BatchReplyError(r, total, what);
  if (failed.ok()) return false;
  for (Size& p : parts) p.part.done(failed);
  return true;
}

// One item's answer of the ack script: MoveOutcome, and {'AT', record...} (another attempt)
// worded by core::CheckAttempt.
Status AckOutcome(const RedisReply& item, const std::string& topic, const backend::AckItem& it,
                  TimePoint now) {
  const auto& e = item.elements;
  if (item.type == RedisReply::Type::kArray && e.size() == 1 + kRecordFields && e[0].str == "AT") {
    Status s = core::CheckAttempt(ParseRecord(topic, e, 1), it.attempt);
    return s.ok() ? Unexpected(item, "acked") : s;
  }
  using K = core::EventKind;
  core::Event event{it.ack ? K::kAck : it.release ? K::kRelease : K::kNack};
  if (it.release) event.retry_interval = core::kReleaseBackoff;
  return MoveOutcome(item, topic, it.msg_id, event, now,
                     it.ack       ? "acked"
                     : it.release ? "released"
                                  : "nacked");
}

}  // namespace

void RedisBackend::TouchTopic(const std::string& topic, TimePoint now, bool add,
                              UniqueFunction<void()> then) {
  {
    base::MutexLock lock(mu_);
    auto it = topic_listed_.find(topic);
    if (it != topic_listed_.end() && now - it->second < kTopicListedFor && now >= it->second) {
      lock.Unlock();
      if (then) then();
      return;
    }
  }
  std::vector<std::string> cmd = {"ZADD", TopicsKey()};
  if (!add) cmd.push_back("XX");
  cmd.push_back(Ms(now));
  cmd.push_back(topic);
  conn_->Command(TopicsKey(), std::move(cmd),
                 [this, topic, now, add, then = std::move(then)](Result<RedisReply> r) mutable {
                   // Only an answered ZADD without XX is sure to have listed the topic.
                   if (add && r.has_value() && !r->is_error()) {
                     base::MutexLock lock(mu_);
                     TimePoint& at = topic_listed_[topic];
                     if (at < now) at = now;
                   }
                   if (then) then();
                 });
}

void RedisBackend::QueueSend(const std::string& topic, SendPart part) {
  std::vector<SendSize> run = sends_.Admit(topic, SendSize{std::move(part)});
  if (!run.empty())
    RunMerged(kSendScript, &sends_, &RedisBackend::AnswerSends, topic, std::move(run));
}

void RedisBackend::QueueAck(const std::string& topic, AckPart part) {
  std::vector<AckSize> run = acks_.Admit(topic, AckSize{std::move(part)});
  if (!run.empty()) RunMerged(kAckScript, &acks_, &RedisBackend::AnswerAcks, topic, std::move(run));
}

template <typename Size>
void RedisBackend::RunMerged(ScriptId id, Coalescer<Size>* queue, AnswerMerged<Size> answer,
                             const std::string& topic, std::vector<Size> parts) {
  const TimePoint now = clock_->Now();
  std::vector<std::string> args = {Ms(now), std::to_string(options_.retention.count())};
  if (id == kAckScript) args.push_back(std::to_string(core::kReleaseBackoff.count()));
  size_t size = args.size();
  for (const Size& p : parts) size += p.args().size();
  args.reserve(size);
  for (Size& p : parts) {
    for (std::string& a : p.args()) args.push_back(std::move(a));
    p.args().clear();
  }
  Eval(id, topic, std::move(args),
       AfterReplicas(topic, [this, id, queue, answer, topic, parts = std::move(parts),
                             now](Result<RedisReply> r) mutable {
         // The next merged script goes first, so that Redis has work meanwhile.
         std::vector<Size> next = queue->Done(topic);
         if (!next.empty()) RunMerged(id, queue, answer, topic, std::move(next));
         (this->*answer)(topic, std::move(parts), now, std::move(r));
       }));
}

void RedisBackend::AnswerSends(const std::string& topic, std::vector<SendSize> parts, TimePoint now,
                               Result<RedisReply> r) {
  if (FailedAll(parts, r, "send")) return;
  Status failed;
  const auto& e = r->elements;
  std::vector<std::vector<Result<backend::Sent>>> outs(parts.size());
  bool ready = false, due = false, push = false;
  size_t at = 1;
  for (size_t k = 0; k < parts.size() && failed.ok(); ++k) {
    std::vector<Result<backend::Sent>>& out = outs[k];
    out.reserve(parts[k].part.recs.size());
    for (MessageRecord& rec : parts[k].part.recs) {
      const auto& item = e[at++].elements;
      if (!item.empty() && item[0].str == "EXISTS" && item.size() == 1 + kRecordFields) {
        MessageRecord old = ParseRecord(topic, item, 1);
        MsgStatus st = core::StatusAt(old, now);
        out.push_back(backend::Sent{Message{std::move(old), st}, true});
        continue;
      }
      if (item.size() == 3 && item[0].str == "FULL") {
        out.push_back(core::TopicFull(topic, item[1].integer, item[2].integer));
        continue;
      }
      if (item.size() != 5 || item[0].str != "NEW") {
        failed = Unexpected(*r, "send");
        break;
      }
      rec.seq = static_cast<uint64_t>(ToInt(Str(item[1])));
      rec.expire_time = FromEpochMs(ToInt(Str(item[2])));
      rec.max_retry = static_cast<int32_t>(ToInt(Str(item[3])));
      rec.push = Str(item[4]) == "1";
      MsgStatus st = core::StatusAt(rec, now);
      push |= rec.push;
      (rec.push ? due : ready) |= st == MsgStatus::kReady;
      out.push_back(backend::Sent{Message{std::move(rec), st}, false});
    }
  }
  if (!failed.ok()) {
    for (SendSize& p : parts) p.part.done(failed);
    return;
  }
  const std::string next = Str(e[0]);
  if (push) PushWatched(topic, /*add=*/true);
  if (ready) {
    News(topic);
    NotifyReady(topic);
  }
  if (due) NotifyPush(topic);
  if (!next.empty()) {
    ArmWake(topic, next);
    Publish(topic,
            (ready ? kPubPullReady : 0) | (due ? kPubPushReady : 0) | (push ? kPubPushLane : 0),
            next);
  }
  for (size_t k = 0; k < parts.size(); ++k) parts[k].part.done(std::move(outs[k]));
}

void RedisBackend::AnswerAcks(const std::string& topic, std::vector<AckSize> parts, TimePoint now,
                              Result<RedisReply> r) {
  if (FailedAll(parts, r, "ack")) return;
  const auto& e = r->elements;
  bool ready = false, due = false, pending = false, push = false;
  backend::TopicEvents events;
  std::vector<std::vector<Status>> outs(parts.size());
  size_t at = 1;
  for (size_t k = 0; k < parts.size(); ++k) {
    outs[k].reserve(parts[k].part.items.size());
    for (const backend::AckItem& it : parts[k].part.items) {
      const RedisReply& item = e[at++];
      outs[k].push_back(AckOutcome(item, topic, it, now));
      if (!outs[k].back().ok() || item.elements.size() != 3) continue;
      const std::string& what = item.elements[1].str;
      const bool in_push = item.elements[2].str == "1";
      if (what == "READY") (in_push ? due : ready) = true;
      if (what == "READY" || what == "WAITING") {
        pending = true;
        push |= in_push;
      }
      if (what == "EXHAUSTED") ++events.retries_exhausted;
    }
  }
  Report(topic, events);  // the nacks of last deliveries
  const std::string next = Str(e[0]);
  if (ready) {
    News(topic);
    NotifyReady(topic);
  }
  if (due) NotifyPush(topic);
  // Nacked or released for later: the other nodes' long polls and push lanes need the time
  // (this node may be gone by then).
  if (pending) {
    Publish(topic,
            (ready ? kPubPullReady : 0) | (due ? kPubPushReady : 0) | (push ? kPubPushLane : 0),
            next);
  }
  ArmWake(topic, next);
  for (size_t k = 0; k < parts.size(); ++k) parts[k].part.done(std::move(outs[k]));
}

}  // namespace chronoq::redis
