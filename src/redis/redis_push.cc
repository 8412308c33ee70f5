// The push lane of the Redis backend (redis_backend.h; docs/push.md, docs/redis.md "Push
// lane"): TakePush, and how every node keeps watching every topic that may have push work.
//
// The lane itself is in the scripts (levels 10..19 of the same sorted sets; kPull with the lane
// argument takes it). What is here is the namespace's push set: a sorted set of the topics that
// may have push work, scored by the time a node last listed them. A topic is listed before the
// first script that can put push work in it runs (a send of a message with its own callback; a
// setTopicConfig that gives the topic a callback), so a node that dies in between leaves at most
// a listed topic with nothing to push. Every node reads the set when its listener is set and
// after a lost subscription, and hears of topics new to it through the publications
// (kPubPushLane). A topic whose push lane is empty and that has no callback leaves the set once
// no node listed it for kPushUnlistAfter (a send that listed it before then has run its script
// long since, so the check that found the lane empty saw its message).
#include <fmt/format.h>

#include "core/callback.h"
#include "redis/redis_backend.h"
#include "redis/script_reply.h"

namespace chronoq::redis {

using backend::Callback;
using core::Message;
using core::MsgStatus;

namespace {

// A node that listed a topic this recently does not list it again before a send.
constexpr Millis kPushListFresh{60'000};
// A topic leaves the push set only when no node listed it for this long (far beyond a command's
// timeout: no send that listed it before is still on its way to its script).
constexpr Millis kPushUnlistAfter{600'000};
// A node tries to take a topic off the set at most this often.
constexpr Millis kUnlistEvery{60'000};

// KEYS[1] the push set; ARGV: topic, the time before which its listing is old. Removes the topic
// when its score is older. Returns 1 when the topic is not listed (any more), else 0.
constexpr std::string_view kUnlistScript = R"lua(
local s = redis.call('ZSCORE', KEYS[1], ARGV[1])
if not s then return 1 end
if tonumber(s) < tonumber(ARGV[2]) then
  redis.call('ZREM', KEYS[1], ARGV[1])
  return 1
end
return 0
)lua";

}  // namespace

std::string RedisBackend::PushKey() const { return fmt::format("cq:{{{}}}:push", options_.ns); }

void RedisBackend::NotifyPush(const std::string& topic) {
  if (backend::ReadyListener* l = listener_.load()) l->OnPushReady(topic);
}

bool RedisBackend::PushWatched(const std::string& topic, bool add) {
  base::MutexLock lock(mu_);
  if (add) push_watched_.insert(topic);
  return push_watched_.contains(topic);
}

void RedisBackend::TakePush(std::string topic, int32_t max, Millis lease_margin,
                            Callback<Result<backend::PushTake>> done) {
  const TimePoint now = clock_->Now();
  // The pull script on the push lane: leases and retry intervals are computed in it, from each
  // message's callback and the topic's as stored at this moment (core::PushLease,
  // core::RetryIntervalOf).
  std::vector<std::string> args = {Ms(now),
                                   std::to_string(std::max(1, max)),
                                   "",
                                   std::to_string(options_.retention.count()),
                                   "1",  // the push lane
                                   std::to_string(std::max<int64_t>(0, lease_margin.count())),
                                   std::to_string(core::kDefaultCallbackTimeout.count())};
  Eval(kPullScript, topic, std::move(args),
       AfterReplicas(topic, [this, topic, done = std::move(done)](Result<RedisReply> r) mutable {
         if (!r.has_value()) return done(r.error());
         const auto& e = r->elements;
         if (r->type != RedisReply::Type::kArray || e.size() < 3 ||
             (e.size() - 3) % kRecordFields != 0) {
           return done(Unexpected(*r, "the push take"));
         }
         backend::PushTake take;
         take.topic_callback = CallbackOfBytes(Str(e[2]));
         take.messages.reserve((e.size() - 3) / kRecordFields);
         for (size_t i = 3; i < e.size(); i += kRecordFields) {
           take.messages.push_back(Message{ParseRecord(topic, e, i), MsgStatus::kConsuming});
         }
         const std::string next = Str(e[1]);
         ArmWake(topic, next);
         // Only this node knows when the leases it took end: should it die, the other nodes
         // take the messages again then.
         if (!take.messages.empty()) Publish(topic, kPubPushLane, next);
         done(std::move(take));
       }));
}

void RedisBackend::EnsurePushListed(const std::string& topic, bool force,
                                    UniqueFunction<void(Status)> then) {
  const TimePoint now = clock_->Now();
  {
    base::MutexLock lock(mu_);
    push_watched_.insert(topic);
    auto it = push_listed_.find(topic);
    if (!force && it != push_listed_.end() && it->second <= now &&
        now - it->second < kPushListFresh) {
      lock.Unlock();
      return then(Status::Ok());
    }
    ++inflight_;  // the destructor waits for the answer, which uses this
  }
  // With --redis-wait-replicas, on the replicas too: a failover must not lose the listing of a
  // topic whose push work the replicas then have.
  conn_->Command(PushKey(), {"ZADD", PushKey(), Ms(now), topic},
                 AfterReplicasOf(PushKey(), [this, topic, now,
                                             then = std::move(then)](Result<RedisReply> r) mutable {
                   Status s;
                   if (!r.has_value()) {
                     s = Status(r.error().code(),
                                fmt::format("cannot list topic '{}' for push delivery: {}", topic,
                                            r.error().message()));
                   } else if (r->is_error()) {
                     s = Unexpected(*r, "listing a push topic");
                   } else {
                     base::MutexLock lock(mu_);
                     push_listed_[topic] = now;
                   }
                   then(std::move(s));
                   base::MutexLock lock(mu_);
                   if (--inflight_ == 0) idle_.SignalAll();
                 }));
}

void RedisBackend::RefreshPushTopics(bool announce) {
  {
    base::MutexLock lock(mu_);
    if (closing_) return;
    ++inflight_;
  }
  // When this fails (Redis unreachable), the subscription's return reads it again.
  conn_->Command(PushKey(), {"ZRANGE", PushKey(), "0", "-1"},
                 [this, announce](Result<RedisReply> r) {
                   if (r.has_value() && r->type == RedisReply::Type::kArray) {
                     for (const RedisReply& t : r->elements) {
                       const std::string topic = Str(t);
                       PushWatched(topic, /*add=*/true);
                       CheckTopic(topic, nullptr, /*timer=*/false, announce);
                     }
                   }
                   base::MutexLock lock(mu_);
                   if (--inflight_ == 0) idle_.SignalAll();
                 });
}

void RedisBackend::MaybeUnlist(const std::string& topic) {
  const TimePoint now = clock_->Now();
  {
    base::MutexLock lock(mu_);
    if (closing_) return;
    auto [it, first] = unlist_tried_.try_emplace(topic, now);
    if (!first) {
      if (it->second <= now && now - it->second < kUnlistEvery) return;
      it->second = now;
    }
    ++inflight_;
  }
  conn_->Command(
      PushKey(),
      {"EVAL", std::string(kUnlistScript), "1", PushKey(), topic, Ms(now - kPushUnlistAfter)},
      [this, topic, now](Result<RedisReply> r) {
        base::MutexLock lock(mu_);
        auto listed = push_listed_.find(topic);
        // Listed by this node since the call was sent: it stays watched.
        const bool relisted = listed != push_listed_.end() && listed->second >= now;
        if (r.has_value() && r->type == RedisReply::Type::kInteger && r->integer == 1 &&
            !relisted) {
          push_watched_.erase(topic);
          push_listed_.erase(topic);
          unlist_tried_.erase(topic);
        }
        if (--inflight_ == 0) idle_.SignalAll();
      });
}

}  // namespace chronoq::redis
