// Dead letters and redrive of the Redis backend (redis_backend.h; API-EXTENSIONS.md section 4;
// docs/redis.md "Dead letters"). A dead-letter topic is usually on another Cluster slot, so a
// move is two scripts: the script that ends the message writes an outbox entry in the source
// slot with the end (atomic), then this node stores the message in the target slot
// (idempotently) and removes the entry. Whichever node finds an entry left over finishes it.
#include <fmt/format.h>

#include <map>
#include <memory>

#include "redis/redis_backend.h"
#include "redis/script_reply.h"

namespace chronoq::redis {

namespace {

// Outbox entries read per script call.
constexpr int kOutboxBatch = 200;
// An entry older than this was left by a node that did not finish it (or is still finishing it:
// the second step is idempotent either way).
constexpr Millis kOutboxStale{2000};
// How long the target keeps the marker of a moved entry once the entry is gone (lua_common.h
// CQ_LUA_INBOX): far longer than a move in flight can take (commands time out after a second).
constexpr Millis kMarkerLinger{60'000};

// One outbox entry: its member and its fields.
struct OutboxEntry {
  std::string member;
  std::map<std::string, std::string> f;
};

std::vector<OutboxEntry> ParseOutbox(const RedisReply& r) {
  std::vector<OutboxEntry> out;
  for (const RedisReply& x : r.elements) {
    if (x.elements.size() != 2) continue;
    OutboxEntry e{Str(x.elements[0]), {}};
    const auto& kv = x.elements[1].elements;
    for (size_t i = 0; i + 1 < kv.size(); i += 2) e.f[Str(kv[i])] = Str(kv[i + 1]);
    out.push_back(std::move(e));
  }
  return out;
}

// Counts the answers of several groups; the last one runs `then`.
struct Countdown {
  explicit Countdown(int n, UniqueFunction<void(bool)> t) : left(n), then(std::move(t)) {}
  base::Mutex mu;
  int left CQ_GUARDED_BY(mu);
  bool moved CQ_GUARDED_BY(mu) = false;
  UniqueFunction<void(bool)> then;
  void Arrive(bool m) CQ_EXCLUDES(mu) {
    bool any;
    {
      base::MutexLock lock(mu);
      moved |= m;
      if (--left > 0) return;
      any = moved;
    }
    then(any);
  }
};

}  // namespace

void RedisBackend::FlushOutbox(const std::string& topic, bool fresh, UniqueFunction<void()> then) {
  bool run = false;
  {
    base::MutexLock lock(mu_);
    if (!closing_) {
      auto [it, first] = flushing_.try_emplace(topic);
      if (first) {
        run = true;
        if (then) it->second.waiters.push_back(std::move(then));
      } else if (fresh) {
        // The flush in flight may have read the outbox before this entry was written: one more
        // run after it, and `then` waits for that one.
        it->second.again = true;
        if (then) it->second.next_waiters.push_back(std::move(then));
      }
    }
  }
  if (run) return RunFlush(topic, fresh);
  if (then) then();  // closing, or a recovery flush already running
}

void RedisBackend::RecoverOutboxes() {
  {
    base::MutexLock lock(mu_);
    if (closing_) return;
    ++inflight_;  // the destructor waits for the answer, which uses this
  }
  conn_->Command(TopicsKey(), {"ZRANGE", TopicsKey(), "0", "-1"}, [this](Result<RedisReply> r) {
    if (r.has_value() && r->type == RedisReply::Type::kArray) {
      for (const RedisReply& t : r->elements) FlushOutbox(Str(t), /*fresh=*/false);
    }
    base::MutexLock lock(mu_);
    if (--inflight_ == 0) idle_.SignalAll();
  });
}

void RedisBackend::RunFlush(const std::string& topic, bool fresh) {
  const TimePoint now = clock_->Now();
  const TimePoint upto = fresh ? now : now - kOutboxStale;
  auto finished = [this, topic](bool more) {
    std::vector<UniqueFunction<void()>> waiters;
    bool again;
    {
      base::MutexLock lock(mu_);
      auto it = flushing_.find(topic);
      if (it == flushing_.end()) return;
      waiters = std::move(it->second.waiters);
      again = (more || it->second.again) && !closing_;
      if (again) {
        it->second.waiters = std::move(it->second.next_waiters);
        it->second.next_waiters.clear();
        it->second.again = false;
      } else {
        for (auto& w : it->second.next_waiters) waiters.push_back(std::move(w));
        flushing_.erase(it);
      }
    }
    for (auto& w : waiters) w();
    if (again) RunFlush(topic, true);
  };
  Eval(kOutboxReadScript, topic, {Ms(upto), std::to_string(kOutboxBatch)},
       [this, topic, fresh, now, finished](Result<RedisReply> r) mutable {
         if (!r.has_value() || r->type != RedisReply::Type::kArray) return finished(false);
         std::vector<OutboxEntry> entries = ParseOutbox(*r);
         const bool full = entries.size() == static_cast<size_t>(kOutboxBatch);
         // Dead letters by target topic; redrives (left over only: a live redrive finishes its
         // own) by source topic.
         std::map<std::string, std::vector<OutboxEntry>> dead, redrives;
         for (OutboxEntry& e : entries) {
           if (e.f["k"] == "dl") dead[e.f["to"]].push_back(std::move(e));
           if (e.f["k"] == "rd" && !fresh) redrives[e.f["dy"]].push_back(std::move(e));
         }
         const int groups = static_cast<int>(dead.size() + redrives.size());
         if (groups == 0) return finished(false);
         auto count = std::make_shared<Countdown>(
             groups, [finished, full](bool moved) mutable { finished(moved && full); });
         for (auto& group : dead) {
           const std::string& target = group.first;  // captured: not a structured binding
           std::vector<OutboxEntry>& list = group.second;
           std::vector<std::string> args = {Ms(now), std::to_string(options_.retention.count()),
                                            topic};
           std::vector<std::string> members;
           for (OutboxEntry& e : list) {
             for (const char* k : {"id", "p", "pr", "le", "ds", "dr", "de"}) {
               args.push_back(std::move(e.f[k]));
             }
             args.push_back(e.member);
             args.push_back(std::move(e.f["cb"]));  // absent in entries written before: none
             members.push_back(std::move(e.member));
           }
           Eval(kDeadLetterInScript, target, std::move(args),
                [this, topic, target, members = std::move(members),
                 count](Result<RedisReply> in) mutable {
                  if (!in.has_value() || in->type != RedisReply::Type::kArray ||
                      in->elements.size() != members.size() + 1) {
                    return count->Arrive(false);  // the entries stay: moved on later
                  }
                  const std::string next = Str(in->elements[0]);
                  if (!next.empty()) {  // consumable now in the dead-letter topic
                    RegisterTopic(target, clock_->Now(), [] {});  // listed (getTopicInfoList)
                    News(target);
                    NotifyReady(target);
                    Publish(target, kPubPullReady, next);
                    ArmWake(target, next);
                  }
                  std::vector<std::string> tokens;
                  for (const std::string& m : members) tokens.push_back(topic + "\n" + m);
                  Eval(kOutboxDoneScript, topic, std::move(members),
                       [this, target, tokens = std::move(tokens),
                        count](Result<RedisReply> d) mutable {
                         if (d.has_value() && !d->is_error()) {
                           ReleaseMarkers(target, std::move(tokens));
                         }
                         count->Arrive(d.has_value());
                       });
                });
         }
         for (auto& [delay, list] : redrives) {
           std::vector<RedriveItem> items;
           for (OutboxEntry& e : list) {
             items.push_back(RedriveItem{std::move(e.member), std::move(e.f["id"]),
                                         std::move(e.f["p"]), std::move(e.f["pr"]),
                                         std::move(e.f["to"]), std::move(e.f["cb"])});
           }
           RedriveMove(
               topic, std::move(items), Millis(ToInt(delay)),
               [count](Result<std::vector<RedisReply>> a) { count->Arrive(a.has_value()); });
         }
       });
}

void RedisBackend::ReleaseMarkers(const std::string& topic, std::vector<std::string> tokens) {
  if (tokens.empty()) return;
  // One more minute: a node that read the entry before it was removed may still repeat the move.
  std::vector<std::string> cmd = {"ZADD", Prefix(topic) + "in", "XX"};
  const std::string until = Ms(clock_->Now() + kMarkerLinger);
  for (std::string& t : tokens) {
    cmd.push_back(until);
    cmd.push_back(std::move(t));
  }
  CountedCommand(Prefix(topic), std::move(cmd));
}

void RedisBackend::RedriveMove(const std::string& topic, std::vector<RedriveItem> items,
                               Millis delay,
                               backend::Callback<Result<std::vector<RedisReply>>> done) {
  // One source topic per call of the walk's messages (usually all the same).
  std::map<std::string, std::vector<size_t>> by_source;
  for (size_t i = 0; i < items.size(); ++i) by_source[items[i].source].push_back(i);
  struct Gather {
    base::Mutex mu;
    size_t left CQ_GUARDED_BY(mu) = 0;
    Status error CQ_GUARDED_BY(mu);
    std::vector<RedisReply> answers CQ_GUARDED_BY(mu);
    backend::Callback<Result<std::vector<RedisReply>>> done;
  };
  auto g = std::make_shared<Gather>();
  {
    base::MutexLock lock(g->mu);
    g->left = by_source.size();
    g->answers.resize(items.size());
  }
  g->done = std::move(done);
  auto arrive = [g](Status s, std::vector<size_t> at, std::vector<RedisReply> answers) {
    std::vector<RedisReply> all;
    Status error;
    {
      base::MutexLock lock(g->mu);
      if (!s.ok()) g->error = std::move(s);
      for (size_t i = 0; i < at.size() && i < answers.size(); ++i) {
        g->answers[at[i]] = std::move(answers[i]);
      }
      if (--g->left > 0) return;
      all = std::move(g->answers);
      error = std::move(g->error);
    }
    if (!error.ok()) return g->done(std::move(error));
    g->done(std::move(all));
  };
  const TimePoint now = clock_->Now();
  for (auto& group : by_source) {
    const std::string& source = group.first;  // captured: not a structured binding
    const std::vector<size_t>& at = group.second;
    std::vector<std::string> args = {Ms(now), std::to_string(options_.retention.count()),
                                     std::to_string(delay.count())};
    std::vector<std::string> members;
    bool own_callback = false;
    for (size_t i : at) {
      args.push_back(items[i].msg_id);
      args.push_back(items[i].payload);
      args.push_back(items[i].priority);
      args.push_back(fmt::format("{}\n{}", topic, items[i].member));
      args.push_back(items[i].callback);
      own_callback |= !items[i].callback.empty();
      members.push_back(items[i].member);
    }
    auto in = [this, topic, source, at, args = std::move(args), members = std::move(members),
               arrive](Status listed) mutable {
      if (!listed.ok()) return arrive(std::move(listed), {}, {});
      Eval(
          kRedriveInScript, source, std::move(args),
          [this, topic, source, at, members = std::move(members),
           arrive](Result<RedisReply> in) mutable {
            if (!in.has_value()) return arrive(in.error(), {}, {});
            const auto& e = in->elements;
            if (in->type != RedisReply::Type::kArray || e.size() != at.size() + 1) {
              return arrive(Unexpected(*in, "redriveMsg"), {}, {});
            }
            const std::string next = Str(e[0]);
            if (!next.empty()) {
              // Harmless when it is consumable only after the delay.
              bool pull = false, push = false;
              for (size_t i = 1; i < e.size(); ++i) {
                const auto& x = e[i].elements;
                if (x.size() == 2 && x[0].str == "NEW") (Str(x[1]) == "1" ? push : pull) = true;
              }
              if (pull) {
                News(source);
                NotifyReady(source);
              }
              if (push) {
                PushWatched(source, /*add=*/true);
                NotifyPush(source);
              }
              Publish(source,
                      (pull ? kPubPullReady : 0) | (push ? kPubPushReady | kPubPushLane : 0), next);
              ArmWake(source, next);
            }
            std::vector<std::string> args = {Ms(clock_->Now())};
            std::vector<RedisReply> answers(e.begin() + 1, e.end());
            std::vector<std::string> tokens;  // the markers the source keeps (kRedriveIn)
            for (size_t i = 0; i < members.size(); ++i) {
              const std::string tag = answers[i].elements.empty() ? "" : answers[i].elements[0].str;
              const bool taken = tag == "NEW" || tag == "DONE";
              args.push_back(members[i]);
              args.push_back(taken ? "done" : "back");
              if (taken) tokens.push_back(topic + "\n" + members[i]);
            }
            // The dead letters the source did not take come back (atomically with the entry's
            // removal); until this runs, the outbox keeps them.
            Eval(kRedriveDoneScript, topic, std::move(args),
                 [this, topic, source, tokens = std::move(tokens), at = std::move(at),
                  answers = std::move(answers), arrive](Result<RedisReply> d) mutable {
                   if (!d.has_value()) return arrive(d.error(), {}, {});
                   if (!d->is_error()) ReleaseMarkers(source, std::move(tokens));
                   if (d->type == RedisReply::Type::kArray && !d->elements.empty() &&
                       d->elements[0].integer > 0) {
                     News(topic);
                     NotifyReady(topic);
                     Publish(topic, kPubPullReady, "");
                   }
                   arrive(Status::Ok(), std::move(at), std::move(answers));
                 });
          });
    };
    // A message with its own callback goes back to the push lane: its topic is listed first.
    if (!own_callback) {
      in(Status::Ok());
    } else {
      EnsurePushListed(source, /*force=*/false, std::move(in));
    }
  }
}

void RedisBackend::Redrive(backend::RedriveRequest req, backend::Callback<Result<int64_t>> done) {
  const TimePoint now = clock_->Now();
  std::vector<std::string> args = {Ms(now), std::to_string(options_.retention.count()),
                                   req.msg_id.value_or(""), std::to_string(std::max(1, req.limit)),
                                   std::to_string(std::max<int64_t>(0, req.delay.count()))};
  const std::string topic = req.topic;
  Eval(kRedriveOutScript, topic, std::move(args),
       [this, req = std::move(req), now, done = std::move(done)](Result<RedisReply> r) mutable {
         if (!r.has_value()) return done(r.error());
         const auto& e = r->elements;
         if (r->type != RedisReply::Type::kArray || e.empty()) {
           return done(Unexpected(*r, "redriveMsg"));
         }
         const std::string id = req.msg_id.value_or("");
         if (e[0].str == "NF") return done(NotFoundError(req.topic, id));
         if (e[0].str == "IS" && e.size() == 1 + kRecordFields) {
           core::MessageRecord rec = ParseRecord(req.topic, e, 1);
           const core::MsgStatus st = core::StatusAt(rec, now);
           return done(InvalidState(fmt::format(
               "message '{}' cannot be redriven: it is {} (status {}){}", id, core::StatusName(st),
               static_cast<int>(st), rec.dead_letter ? "" : " and not a dead letter")));
         }
         if (e[0].str != "OK") return done(Unexpected(*r, "redriveMsg"));
         std::vector<RedriveItem> items;
         for (size_t i = 1; i < e.size(); ++i) {
           const auto& x = e[i].elements;
           if (x.size() != 6) return done(Unexpected(*r, "redriveMsg"));
           items.push_back(
               RedriveItem{Str(x[0]), Str(x[1]), Str(x[2]), Str(x[3]), Str(x[4]), Str(x[5])});
         }
         if (items.empty()) return done(int64_t{0});
         std::string source = items.front().source;
         const bool named = req.msg_id.has_value();
         RedriveMove(req.topic, std::move(items), req.delay,
                     [id, named, source,
                      done = std::move(done)](Result<std::vector<RedisReply>> a) mutable {
                       if (!a.has_value()) return done(a.error());
                       int64_t moved = 0;
                       for (const RedisReply& x : *a) {
                         const std::string tag = x.elements.empty() ? "" : x.elements[0].str;
                         if (tag == "NEW" || tag == "DONE") ++moved;
                         if (!named) continue;
                         if (tag == "FULL" && x.elements.size() == 3) {
                           return done(core::TopicFull(source, x.elements[1].integer,
                                                       x.elements[2].integer));
                         }
                         if (tag == "EXISTS") {
                           return done(InvalidState(fmt::format(
                               "message '{}' cannot be redriven: topic '{}' holds a message "
                               "with that msgId in life",
                               id, source)));
                         }
                       }
                       done(moved);
                     });
       });
}

}  // namespace chronoq::redis
