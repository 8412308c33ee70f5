// The namespace's sweep set (docs/redis.md "Format 4", "Ended records"): a layout-4 topic keeps
// its ended records as fields of hash buckets, which no PEXPIRE deletes, so a topic that stops
// getting requests would keep them. Every script that trims answers when the oldest end it left
// runs out (TakeStats); the node adds the topic to `cq:{<ns>}:sweep` with that score (ZADD LT,
// at most once per topic per second unless earlier); every node, once a second while the set
// holds topics, runs the wake script with the sweep flag on up to kSweepBatch topics whose time
// came, and rescores them (XX) or removes them when nothing is left to delete. Any node may sweep
// any topic: the trim is idempotent. A round that finds the set empty arms no next one: the
// rounds start again when this node lists a topic, a script of a layout-4 topic answers on it, or
// it (re)subscribes.
#include <fmt/format.h>

#include <cstdlib>

#include "redis/redis_backend.h"
#include "redis/script_reply.h"

namespace chronoq::redis {

std::string RedisBackend::SweepKey() const { return fmt::format("cq:{{{}}}:sweep", options_.ns); }

void RedisBackend::NoteSweep(const std::string& topic, int64_t at_ms) {
  const TimePoint now = clock_->Now();
  {
    base::MutexLock lock(mu_);
    if (closing_) return;
    auto [it, fresh] = sweep_noted_.try_emplace(topic, SweepNoted{now, at_ms});
    if (!fresh) {
      SweepNoted& n = it->second;
      if (now - n.when < kSweepEvery && now >= n.when && at_ms >= n.at) return;
      n = SweepNoted{now, at_ms};
    }
  }
  CountedCommand(SweepKey(), {"ZADD", SweepKey(), "LT", std::to_string(at_ms), topic});
  ArmSweep();
}

void RedisBackend::ArmSweep() {
  base::MutexLock lock(mu_);
  ++sweep_arms_;
  if (closing_ || sweep_timer_ != 0) return;
  sweep_timer_ = scheduler_->Schedule(clock_->Now() + kSweepEvery, [this] { Sweep(); });
}

void RedisBackend::Sweep() {
  const TimePoint now = clock_->Now();
  uint64_t arms;
  {
    base::MutexLock lock(mu_);
    if (closing_) return;
    // The next round is due a second from this one whatever this one takes; a round still
    // running then (a slow Redis) makes it skip its turn.
    sweep_timer_ = scheduler_->Schedule(now + kSweepEvery, [this] { Sweep(); });
    if (sweeps_left_ > 0) return;
    sweeps_left_ = 1;  // the reading
    ++inflight_;       // Flush and the destructor wait for the round
    arms = sweep_arms_;
  }
  // The first topics of the set, due or not: an empty set means the namespace has nothing to
  // sweep, and the rounds stop until this node lists a topic or a script of a layout-4 topic
  // answers on it (TakeStats): a node of a namespace without layout-4 topics reads the set once
  // at its start (and after a reconnection), not every second.
  conn_->Command(SweepKey(),
                 {"ZRANGEBYSCORE", SweepKey(), "-inf", "+inf", "WITHSCORES", "LIMIT", "0",
                  std::to_string(kSweepBatch)},
                 [this, now, arms](Result<RedisReply> r) {
                   std::vector<std::string> topics;
                   bool empty = false;
                   if (r.has_value() && r->type == RedisReply::Type::kArray) {
                     empty = r->elements.empty();
                     for (size_t i = 0; i + 1 < r->elements.size(); i += 2) {
                       const double at = std::strtod(Str(r->elements[i + 1]).c_str(), nullptr);
                       if (at <= static_cast<double>(ToEpochMs(now))) {
                         topics.push_back(Str(r->elements[i]));
                       }
                     }
                   }
                   {
                     base::MutexLock lock(mu_);
                     sweeps_left_ += static_cast<int>(topics.size());
                     // Nothing listed, and nothing asked for rounds since this one began.
                     if (empty && arms == sweep_arms_ && sweep_timer_ != 0) {
                       scheduler_->Cancel(sweep_timer_);
                       sweep_timer_ = 0;
                     }
                   }
                   for (const std::string& t : topics) SweepTopic(t, now);
                   SweepDone();
                   base::MutexLock lock(mu_);
                   if (--inflight_ == 0) idle_.SignalAll();
                 });
}

void RedisBackend::SweepDone() {
  base::MutexLock lock(mu_);
  --sweeps_left_;
}

void RedisBackend::SweepTopic(const std::string& topic, TimePoint now) {
  Eval(kWakeScript, topic, {Ms(now), std::to_string(options_.retention.count()), "1"},
       [this, topic](Result<RedisReply> r) {
         if (!r.has_value() || r->type != RedisReply::Type::kArray || r->elements.size() != 7) {
           return SweepDone();  // left in the set: the next round tries again
         }
         const std::string next = Str(r->elements[6]);
         // (A time another node noted after this script ran is lost by the ZREM: that topic
         // is noted again at its next end.)
         std::vector<std::string> cmd = {"ZADD", SweepKey(), "XX", next, topic};
         if (next.empty()) cmd = {"ZREM", SweepKey(), topic};
         CountedCommand(SweepKey(), std::move(cmd));
         SweepDone();
       });
}

}  // namespace chronoq::redis
