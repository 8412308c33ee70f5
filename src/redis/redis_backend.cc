#include "redis/redis_backend.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <charconv>
#include <cstdlib>
#include <future>
#include <memory>
#include <optional>

#include "base/random.h"
#include "core/state_machine.h"
#include "redis/script_reply.h"
#include "redis/scripts.h"
#include "redis/sha1.h"

namespace chronoq::redis {

using backend::Callback;
using core::Message;
using core::MessageRecord;
using core::MsgStatus;

namespace {

// The source of each script, by RedisBackend::ScriptId.
std::string_view Source(RedisBackend::ScriptId id) {
  static const std::array<std::string_view, RedisBackend::kScriptCount> sources = {
      scripts::kSend,        scripts::kPull,         scripts::kAck,        scripts::kDelete,
      scripts::kGet,         scripts::kInfo,         scripts::kWake,       scripts::kUpdate,
      scripts::kTouch,       scripts::kCount,        scripts::kList,       scripts::kConfigSet,
      scripts::kConfigGet,   scripts::kConfigDelete, scripts::kPurge,      scripts::kOutboxRead,
      scripts::kOutboxDone,  scripts::kDeadLetterIn, scripts::kRedriveOut, scripts::kRedriveIn,
      scripts::kRedriveDone, scripts::kImport,       scripts::kHistory,
  };
  return sources[id];
}

// The name Redis gives each script (EVALSHA).
const std::string& Digest(RedisBackend::ScriptId id) {
  static const std::array<std::string, RedisBackend::kScriptCount> digests = [] {
    std::array<std::string, RedisBackend::kScriptCount> d;
    for (int i = 0; i < RedisBackend::kScriptCount; ++i) {
      d[i] = Sha1Hex(Source(static_cast<RedisBackend::ScriptId>(i)));
    }
    return d;
  }();
  return digests[id];
}

}  // namespace

RedisBackend::RedisBackend(RedisBackendOptions options, CommandSink* conn, const base::Clock* clock,
                           base::Scheduler* scheduler)
    : options_(std::move(options)),
      history_args_(HistoryArgs(options_.retention, options_.history_max_entries, options_.node) +
                    fmt::format("\n{}", options_.record_format)),
      conn_(conn),
      clock_(clock),
      scheduler_(scheduler) {}

void RedisBackend::Report(const std::string& topic, const backend::TopicEvents& e) {
  if (e.empty()) return;
  if (backend::EventSink* sink = sink_.load()) sink->OnEvents(topic, e);
}

std::pair<int64_t, int64_t> RedisBackend::TakeStats(const std::string& topic, RedisReply& r) {
  if (r.type != RedisReply::Type::kArray || r.elements.empty() ||
      r.elements[0].type != RedisReply::Type::kArray || r.elements[0].elements.size() < 8) {
    return {0, 0};
  }
  const auto& st = r.elements[0].elements;
  // Layout 4: when the oldest ended record its trims left runs out (the sweep set).
  const std::string sweep = st.size() > 8 ? Str(st[8]) : std::string();
  // Any answer of a layout-4 topic (nine statistics) also starts the rounds: a node that has
  // not listed a topic itself then still sweeps what a node that died listed.
  if (!sweep.empty()) {
    NoteSweep(topic, ToInt(sweep));
  } else if (st.size() > 8) {
    ArmSweep();
  }
  const int64_t triggered = st[0].integer, gap_sum = st[1].integer, gap_max = st[2].integer;
  const int64_t timeouts = st[3].integer, ended = st[4].integer, exhausted = st[5].integer;
  const int64_t dead_lettered = st[6].integer, outbox = st[7].integer;
  r.elements.erase(r.elements.begin());
  backend::TopicEvents e;
  e.triggered = triggered;
  e.ready_gap_sum_ms = gap_sum;
  e.ready_gap_max_ms = gap_max;
  e.ack_timeouts = timeouts;
  e.expired = ended - exhausted;
  e.retries_exhausted = exhausted;
  e.dead_lettered = dead_lettered;
  Report(topic, e);
  return {dead_lettered, outbox};
}

RedisBackend::~RedisBackend() {
  base::MutexLock lock(mu_);
  closing_ = true;
  for (auto& [topic, w] : wakeups_) scheduler_->Cancel(w.timer);
  wakeups_.clear();
  if (sweep_timer_ != 0) scheduler_->Cancel(sweep_timer_);
  while (inflight_ > 0) idle_.Wait(mu_);
}

std::string RedisBackend::Prefix(const std::string& topic) const {
  return fmt::format("cq:{{{}:{}}}:", options_.ns, topic);
}
std::string RedisBackend::TopicsKey() const { return fmt::format("cq:{{{}}}:topics", options_.ns); }

void RedisBackend::Eval(ScriptId id, const std::string& topic, std::vector<std::string> args,
                        RedisConnection::Done done) {
  bool load;
  {
    base::MutexLock lock(mu_);
    ++inflight_;
    load = !loaded_[id];
    loaded_[id] = true;
  }
  // The first use sends the script ahead on the same connection, so the EVALSHA behind it finds
  // it: a burst of first calls then costs one copy of the source, not one per call. (Not
  // counted in inflight_: its answer comes before the EVALSHA's, which is.)
  if (load) {
    conn_->Command(Prefix(topic), {"SCRIPT", "LOAD", std::string(Source(id))},
                   [](Result<RedisReply>) {});
  }
  // The node-local layers of the topic's configuration go first (lua_common.h), so that every
  // script resolves the stored layer over them itself, atomically.
  args.insert(args.begin(), EncodeLocalConfig(LocalConfigOf(topic)) + history_args_);
  std::vector<std::string> cmd;
  cmd.reserve(args.size() + 4);
  cmd.push_back("EVALSHA");
  cmd.push_back(Digest(id));
  cmd.push_back("1");
  cmd.push_back(Prefix(topic));
  for (const std::string& a : args) cmd.push_back(a);
  auto finish = [this, topic, done = std::move(done)](Result<RedisReply> r) mutable {
    if (r.has_value() && r->error_kind() == "MIGRATING") {
      // lua_common.h: `chronoq redis-migrate` holds the topic (code 503, gRPC UNAVAILABLE).
      r = Status(Errc::kTryLater,
                 fmt::format("topic '{}' is being migrated to redis-format 4 (chronoq "
                             "redis-migrate); try again when the migration is done",
                             topic));
    }
    auto [dead_lettered, outbox] =
        r.has_value() ? TakeStats(topic, *r) : std::pair<int64_t, int64_t>{0, 0};
    auto answer = [this, done = std::move(done), r = std::move(r)]() mutable {
      done(std::move(r));
      base::MutexLock lock(mu_);
      if (--inflight_ == 0) idle_.SignalAll();
    };
    if (dead_lettered > 0) {
      // Dead letters written just now: the operation is answered once they are in their
      // dead-letter topics (or failed to get there and wait in the outbox), so whoever saw it
      // end finds its dead letter.
      return FlushOutbox(topic, /*fresh=*/true, std::move(answer));
    }
    // Left by a node that did not finish them: moved on once old enough not to be in flight.
    if (outbox > 0) FlushOutbox(topic, /*fresh=*/false);
    answer();
  };
  conn_->Command(
      Prefix(topic), std::move(cmd),
      [this, id, topic, args = std::move(args),
       finish = std::move(finish)](Result<RedisReply> r) mutable {
        if (r.has_value() && r->is_error() && r->error_kind() == "NOSCRIPT") {
          // The server does not have it (restart, SCRIPT FLUSH, another cluster
          // master): send the source, which it then keeps.
          std::vector<std::string> again = {"EVAL", std::string(Source(id)), "1", Prefix(topic)};
          for (std::string& a : args) again.push_back(std::move(a));
          conn_->Command(Prefix(topic), std::move(again), std::move(finish));
          return;
        }
        finish(std::move(r));
      });
}

void RedisBackend::Flush(UniqueFunction<void()> done) { FlushRound(std::move(done), 0); }

void RedisBackend::FlushRound(UniqueFunction<void()> done, int round) {
  conn_->Flush([this, done = std::move(done), round]() mutable {
    bool more;
    {
      base::MutexLock lock(mu_);
      more = inflight_ > 0 && !closing_ && round < 50;
    }
    if (!more) return done();
    FlushRound(std::move(done), round + 1);  // answers that sent more commands: those too
  });
}

void RedisBackend::CountedCommand(const std::string& key, std::vector<std::string> cmd) {
  {
    base::MutexLock lock(mu_);
    ++inflight_;
  }
  conn_->Command(key, std::move(cmd), [this](Result<RedisReply>) {
    base::MutexLock lock(mu_);
    if (--inflight_ == 0) idle_.SignalAll();
  });
}

void RedisBackend::RegisterTopic(const std::string& topic, TimePoint now,
                                 UniqueFunction<void()> then) {
  {
    base::MutexLock lock(mu_);
    ++inflight_;
  }
  conn_->Command(TopicsKey(), {"ZADD", TopicsKey(), Ms(now), topic},
                 [this, then = std::move(then)](Result<RedisReply>) mutable {
                   then();
                   base::MutexLock lock(mu_);
                   if (--inflight_ == 0) idle_.SignalAll();
                 });
}

void RedisBackend::NotifyReady(const std::string& topic) {
  if (backend::ReadyListener* l = listener_.load()) l->OnReady(topic);
}

void RedisBackend::SetReadyListener(backend::ReadyListener* listener) {
  listener_.store(listener);
  // Push work left by this node before a restart, or by any node: tell the new listener.
  if (listener != nullptr) RefreshPushTopics(/*announce=*/true);
  if (listener != nullptr) ArmSweep();
}

void RedisBackend::ArmWake(const std::string& topic, const std::string& next_ms) {
  if (next_ms.empty()) return;
  // A sorted-set score: a double, printed in exponent form when large ("never" is ~9.2e18).
  const double score = std::strtod(next_ms.c_str(), nullptr);
  if (!(score < 4e18)) return;  // nothing changes by itself before the end of time
  TimePoint at = FromEpochMs(static_cast<int64_t>(score));
  if (at <= clock_->Now()) {
    // Already due (the news came late, e.g. a publication from another node): look now.
    News(topic);
    CheckTopic(topic, nullptr);
    return;
  }
  base::MutexLock lock(mu_);
  if (closing_) return;
  Wakeup& w = wakeups_[topic];
  if (w.timer != 0 && w.at <= at) return;
  if (w.timer != 0) scheduler_->Cancel(w.timer);
  w.at = at;
  w.timer = scheduler_->Schedule(at, [this, topic] { Wake(topic); });
}

void RedisBackend::News(const std::string& topic) {
  base::MutexLock lock(mu_);
  ++news_;
  known_idle_.erase(topic);
}

uint64_t RedisBackend::NewsSeen() {
  base::MutexLock lock(mu_);
  return news_;
}

void RedisBackend::MarkIdle(const std::string& topic, uint64_t seen) {
  base::MutexLock lock(mu_);
  if (news_ == seen && watched_.contains(topic)) known_idle_[topic] = clock_->Now();
}

bool RedisBackend::KnownIdle(const std::string& topic) {
  base::MutexLock lock(mu_);
  auto it = known_idle_.find(topic);
  return it != known_idle_.end() && !closing_ && watched_.contains(topic) &&
         clock_->Now() - it->second < Millis(1000);
}

void RedisBackend::Wake(const std::string& topic) {
  News(topic);
  {
    base::MutexLock lock(mu_);
    wakeups_.erase(topic);
    if (closing_) return;
  }
  // Waits for the script (bounded by the connection's command timeout), so that what happens at
  // this time is counted and notified at this time, and the next wake-up is armed before the
  // scheduler moves on (a test clock jumping ahead still runs every wake-up on the way).
  std::promise<void> done;
  CheckTopic(
      topic, [&done] { done.set_value(); }, /*timer=*/true);
  done.get_future().wait();
}

void RedisBackend::CheckTopic(const std::string& topic, UniqueFunction<void()> then, bool timer,
                              bool announce) {
  std::vector<UniqueFunction<void()>> thens;
  if (then) thens.push_back(std::move(then));
  {
    base::MutexLock lock(mu_);
    auto [it, first] = checks_.try_emplace(topic);
    if (!first) {
      it->second.again = true;
      it->second.again_timer |= timer;
      it->second.again_announce |= announce;
      for (auto& t : thens) it->second.thens.push_back(std::move(t));
      return;
    }
  }
  RunCheck(topic, std::move(thens), timer, announce);
}

void RedisBackend::RunCheck(const std::string& topic, std::vector<UniqueFunction<void()>> thens,
                            bool timer, bool announce) {
  TimePoint now = clock_->Now();
  const uint64_t seen = NewsSeen();
  Eval(
      kWakeScript, topic, {Ms(now), std::to_string(options_.retention.count())},
      [this, topic, seen, timer, announce, thens = std::move(thens)](Result<RedisReply> r) mutable {
        if (r.has_value() && r->type == RedisReply::Type::kArray && r->elements.size() == 6) {
          const auto& e = r->elements;
          const std::string next = Str(e[1]);
          const bool ready = e[0].integer == 1, due = e[3].integer == 1;
          const int64_t held = e[4].integer;
          if (ready) {
            NotifyReady(topic);
          } else {
            MarkIdle(topic, seen);
          }
          if (held > 0) PushWatched(topic, /*add=*/true);
          if (due || (announce && held > 0)) NotifyPush(topic);
          // A deadline or lease that ran out: only the node that delivered knew its time.
          if (timer && e[2].integer == 1 && (ready || due)) {
            Publish(topic, (ready ? kPubPullReady : 0) | (due ? kPubPushReady | kPubPushLane : 0),
                    next);
          }
          if (held == 0 && e[5].integer == 0 && PushWatched(topic)) MaybeUnlist(topic);
          ArmWake(topic, next);
        }  // else: the next operation on the topic arms a new wake-up
        std::vector<UniqueFunction<void()>> later;
        bool again = false, again_timer = false, again_announce = false;
        {
          base::MutexLock lock(mu_);
          auto it = checks_.find(topic);
          if (it != checks_.end() && it->second.again && !closing_) {
            again = true;
            again_timer = it->second.again_timer;
            again_announce = it->second.again_announce;
            later = std::move(it->second.thens);
            it->second = Check{};
          } else if (it != checks_.end()) {
            for (auto& t : it->second.thens) thens.push_back(std::move(t));
            checks_.erase(it);
          }
        }
        for (auto& t : thens) t();
        if (again) RunCheck(topic, std::move(later), again_timer, again_announce);
      });
}

RedisConnection::Done RedisBackend::AfterReplicas(const std::string& topic,
                                                  RedisConnection::Done done) {
  return AfterReplicasOf(Prefix(topic), std::move(done));
}

RedisConnection::Done RedisBackend::AfterReplicasOf(std::string key, RedisConnection::Done done) {
  if (options_.wait_replicas <= 0) return done;
  return [this, key = std::move(key), done = std::move(done)](Result<RedisReply> r) mutable {
    if (!r.has_value() || r->is_error()) return done(std::move(r));
    const int n = options_.wait_replicas;
    const int64_t ms = options_.wait_timeout.count();
    conn_->Command(key, {"WAIT", std::to_string(n), std::to_string(ms)},
                   [n, ms, r = std::move(r), done = std::move(done)](Result<RedisReply> w) mutable {
                     if (!w.has_value()) return done(w.error());
                     if (w->type != RedisReply::Type::kInteger || w->integer < n) {
                       return done(Unavailable(fmt::format(
                           "written to the Redis master, but only {} of {} replicas confirmed it "
                           "within {} ms{}",
                           w->type == RedisReply::Type::kInteger ? w->integer : 0, n, ms,
                           w->is_error() ? ": " + w->str : std::string())));
                     }
                     done(std::move(r));
                   });
  };
}

std::string RedisBackend::ReadyChannel() const {
  return fmt::format("cq:{{{}}}:ready", options_.ns);
}

// Publication: "<flags>\n<next time of change, ms, or empty>\n<topic>" (kPub* bits; before
// issue 16 the first field was "1" or "0", which reads the same).
void RedisBackend::Publish(const std::string& topic, int flags, const std::string& next_ms) {
  if (!options_.publish) return;
  CountedCommand("", {"PUBLISH", ReadyChannel(), fmt::format("{}\n{}\n{}", flags, next_ms, topic)});
}

void RedisBackend::OnPublished(std::string_view payload) {
  size_t a = payload.find('\n');
  size_t b = a == std::string_view::npos ? a : payload.find('\n', a + 1);
  if (b == std::string_view::npos || a != 1 || payload[0] < '0' || payload[0] > '7') return;
  const int flags = payload[0] - '0';
  const bool ready = (flags & kPubPullReady) != 0, due = (flags & kPubPushReady) != 0;
  std::string next(payload.substr(a + 1, b - a - 1));
  std::string topic(payload.substr(b + 1));
  if (ready) News(topic);
  bool watched = false;
  {
    base::MutexLock lock(mu_);
    watched = watched_.contains(topic);
  }
  // A topic with a push lane: every node watches it from now on.
  const bool push = PushWatched(topic, /*add=*/(flags & kPubPushLane) != 0);
  if (!watched && !push) return;  // no long poll here cares, nor any push
  if (ready && watched) NotifyReady(topic);
  if (due && push) NotifyPush(topic);
  ArmWake(topic, next);
}

void RedisBackend::OnResubscribed() {
  std::vector<std::string> topics;
  {
    base::MutexLock lock(mu_);
    for (const auto& [topic, at] : watched_) topics.push_back(topic);
    ++news_;  // publications may have been missed
    known_idle_.clear();
  }
  for (const std::string& t : topics) CheckTopic(t, nullptr);
  RecoverOutboxes();
  RefreshPushTopics(/*announce=*/false);
  ArmSweep();
}

void RedisBackend::WatchTopic(const std::string& topic) {
  const TimePoint now = clock_->Now();
  bool first;
  {
    base::MutexLock lock(mu_);
    if (closing_) return;
    // Forget topics nobody parked on for ten minutes (long polls last two at most).
    std::erase_if(watched_, [&](const auto& e) { return now - e.second > Millis(600'000); });
    for (auto it = known_idle_.begin(); it != known_idle_.end();) {
      it = watched_.contains(it->first) ? std::next(it) : known_idle_.erase(it);
    }
    first = watched_.insert_or_assign(topic, now).second;
  }
  // A topic new to this node: learn when it next changes (sends through other nodes publish).
  if (first) CheckTopic(topic, nullptr);
}

void RedisBackend::Pull(backend::PullRequest req, Callback<Result<std::vector<Message>>> done) {
  const TimePoint now = clock_->Now();
  // Absent: the script takes the topic's (stored layer over the node's).
  std::vector<std::string> args = {
      Ms(now),
      std::to_string(std::max(1, req.batch)),
      req.ack_timeout ? std::to_string(req.ack_timeout->count()) : std::string(),
      std::to_string(options_.retention.count()),
      "0",  // the pull lane
      "",
      ""};
  std::string topic = req.topic;
  const size_t batch = static_cast<size_t>(std::max(1, req.batch));
  const uint64_t seen = NewsSeen();
  Eval(kPullScript, topic, std::move(args),
       AfterReplicas(
           topic, [this, topic, batch, seen, done = std::move(done)](Result<RedisReply> r) mutable {
             if (!r.has_value()) return done(r.error());
             const auto& e = r->elements;
             if (r->type != RedisReply::Type::kArray || e.size() < 3 ||
                 (e.size() - 3) % kRecordFields != 0) {
               return done(Unexpected(*r, "pull"));
             }
             std::vector<Message> out;
             out.reserve((e.size() - 3) / kRecordFields);
             for (size_t i = 3; i < e.size(); i += kRecordFields) {
               out.push_back(Message{ParseRecord(topic, e, i), MsgStatus::kConsuming});
             }
             if (out.size() < batch) MarkIdle(topic, seen);  // it took everything consumable
             ArmWake(topic, Str(e[1]));
             done(std::move(out));
           }));
  TouchTopic(topic, now, /*add=*/false, nullptr);
}

void RedisBackend::Delete(std::string topic, std::string msg_id, bool release,
                          Callback<Status> done) {
  const TimePoint now = clock_->Now();
  std::vector<std::string> args = {msg_id, release ? "1" : "0", Ms(now),
                                   std::to_string(options_.retention.count())};
  Eval(kDeleteScript, topic, std::move(args),
       AfterReplicas(
           topic, [this, topic, msg_id, now, done = std::move(done)](Result<RedisReply> r) mutable {
             if (!r.has_value()) return done(r.error());
             Status s = MoveOutcome(*r, topic, msg_id, core::Event{core::EventKind::kDelete}, now,
                                    "deleted");
             if (s.ok() && r->elements.size() == 2) ArmWake(topic, Str(r->elements[1]));
             done(std::move(s));
           }));
}

void RedisBackend::Get(std::string topic, std::string msg_id, Callback<Result<Message>> done) {
  const TimePoint now = clock_->Now();
  std::vector<std::string> args = {msg_id, Ms(now), std::to_string(options_.retention.count())};
  Eval(kGetScript, topic, std::move(args),
       [topic, msg_id, now, done = std::move(done)](Result<RedisReply> r) mutable {
         if (!r.has_value()) return done(r.error());
         const auto& e = r->elements;
         if (r->type != RedisReply::Type::kArray) return done(Unexpected(*r, "get"));
         if (e.empty()) return done(NotFoundError(topic, msg_id));
         if (e.size() != kRecordFields) return done(Unexpected(*r, "get"));
         MessageRecord rec = ParseRecord(topic, e, 0);
         MsgStatus st = core::StatusAt(rec, now);
         done(Message{std::move(rec), st});
       });
}

void RedisBackend::GetTopicInfo(std::string topic, Callback<Result<core::TopicInfo>> done) {
  const TimePoint now = clock_->Now();
  std::vector<std::string> args = {Ms(now), std::to_string(options_.retention.count())};
  for (int b = 1; b < core::kBucketCount; ++b) {
    args.push_back(std::to_string(core::kBucketLowerBounds[b].count()));
  }
  Eval(kInfoScript, topic, std::move(args),
       [this, topic, done = std::move(done)](Result<RedisReply> r) mutable {
         if (!r.has_value()) return done(r.error());
         const auto& e = r->elements;
         if (r->type != RedisReply::Type::kArray || e.size() != core::kBucketCount + 3) {
           return done(Unexpected(*r, "getTopicInfo"));
         }
         core::TopicInfo info;
         info.topic = topic;
         for (int b = 0; b < core::kBucketCount; ++b) {
           info.buckets[b] = e[b].integer;
           info.waiting += e[b].integer;
         }
         info.ready = e[core::kBucketCount].integer;
         info.consuming = e[core::kBucketCount + 1].integer;
         ArmWake(topic, Str(e[core::kBucketCount + 2]));
         done(std::move(info));
       });
}

void RedisBackend::ListTopics(Callback<Result<std::vector<core::TopicInfo>>> done) {
  const TimePoint now = clock_->Now();
  conn_->Command(TopicsKey(), {"ZRANGE", TopicsKey(), "0", "-1", "WITHSCORES"},
                 [this, now, done = std::move(done)](Result<RedisReply> r) mutable {
                   if (!r.has_value()) return done(r.error());
                   if (r->type != RedisReply::Type::kArray || r->elements.size() % 2 != 0) {
                     return done(Unexpected(*r, "getTopicInfoList"));
                   }
                   struct Gather {
                     Gather(size_t n, Callback<Result<std::vector<core::TopicInfo>>> d)
                         : left(n), done(std::move(d)) {}
                     base::Mutex mu;
                     std::vector<core::TopicInfo> infos CQ_GUARDED_BY(mu);
                     Status error CQ_GUARDED_BY(mu);
                     size_t left CQ_GUARDED_BY(mu);
                     // Run by the last answer, without the lock.
                     Callback<Result<std::vector<core::TopicInfo>>> done;
                   };
                   const size_t n = r->elements.size() / 2;
                   if (n == 0) return done(std::vector<core::TopicInfo>());
                   auto g = std::make_shared<Gather>(n, std::move(done));
                   for (size_t i = 0; i < r->elements.size(); i += 2) {
                     std::string topic = r->elements[i].str;
                     TimePoint last_active = FromEpochMs(ToInt(r->elements[i + 1].str));
                     GetTopicInfo(topic, [this, g, now, last_active](Result<core::TopicInfo> info) {
                       std::vector<core::TopicInfo> infos;
                       Status error;
                       {
                         base::MutexLock lock(g->mu);
                         if (!info.has_value()) {
                           g->error = info.error();
                         } else if (info->waiting + info->ready + info->consuming > 0 ||
                                    now - last_active < options_.topic_inactive) {
                           g->infos.push_back(std::move(*info));
                         }
                         if (--g->left > 0) return;
                         infos = std::move(g->infos);
                         error = std::move(g->error);
                       }
                       if (!error.ok()) return g->done(std::move(error));
                       std::sort(infos.begin(), infos.end(),
                                 [](const auto& a, const auto& b) { return a.topic < b.topic; });
                       g->done(std::move(infos));
                     });
                   }
                 });
}

}  // namespace chronoq::redis
