// RedisBackend's sends and acks after the request is built (redis_manage.cc SendBatch,
// AckBatch): coalesced per topic into few scripts (group commit, coalescer.h, docs/redis.md
// "Sizing"), and the topics key written once per topic per interval instead of once per
// operation.
#include <fmt/format.h>

#include <utility>

#include "core/state_machine.h"
#include "redis/redis_backend.h"
#include "redis/script_reply.h"

namespace chronoq::redis {

using core::Message;
using core::MessageRecord;
using core::MsgStatus;

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
  if (!run.empty()) RunSends(topic, std::move(run));
}

void RedisBackend::RunSends(const std::string& topic, std::vector<SendSize> parts) {
  const TimePoint now = clock_->Now();
  size_t size = 2;
  for (const SendSize& p : parts) size += p.part.items.size();
  std::vector<std::string> args;
  args.reserve(size);
  args.push_back(Ms(now));
  args.push_back(std::to_string(options_.retention.count()));
  for (SendSize& p : parts) {
    for (std::string& a : p.part.items) args.push_back(std::move(a));
    p.part.items.clear();
  }
  Eval(kSendScript, topic, std::move(args),
       AfterReplicas(topic,
                     [this, topic, parts = std::move(parts), now](Result<RedisReply> r) mutable {
                       // The next merged send goes first, so that Redis has work meanwhile.
                       std::vector<SendSize> next = sends_.Done(topic);
                       if (!next.empty()) RunSends(topic, std::move(next));
                       AnswerSends(topic, std::move(parts), now, std::move(r));
                     }));
}

void RedisBackend::QueueAck(const std::string& topic, AckPart part) {
  std::vector<AckSize> run = acks_.Admit(topic, AckSize{std::move(part)});
  if (!run.empty()) RunAcks(topic, std::move(run));
}

void RedisBackend::RunAcks(const std::string& topic, std::vector<AckSize> parts) {
  const TimePoint now = clock_->Now();
  std::vector<std::string> args = {Ms(now), std::to_string(options_.retention.count()),
                                   std::to_string(core::kReleaseBackoff.count())};
  for (AckSize& p : parts) {
    for (std::string& a : p.part.args) args.push_back(std::move(a));
    p.part.args.clear();
  }
  Eval(kAckScript, topic, std::move(args),
       AfterReplicas(topic,
                     [this, topic, parts = std::move(parts), now](Result<RedisReply> r) mutable {
                       std::vector<AckSize> next = acks_.Done(topic);
                       if (!next.empty()) RunAcks(topic, std::move(next));
                       AnswerAcks(topic, std::move(parts), now, std::move(r));
                     }));
}

void RedisBackend::AnswerSends(const std::string& topic, std::vector<SendSize> parts, TimePoint now,
                               Result<RedisReply> r) {
  size_t total = 0;
  for (const SendSize& p : parts) total += p.part.recs.size();
  Status failed = BatchReplyError(r, total, "send");
  if (!failed.ok()) {
    for (SendSize& p : parts) p.part.done(failed);
    return;
  }
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

}  // namespace chronoq::redis
