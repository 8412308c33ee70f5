// Topic configuration of the Engine (engine.h; API-EXTENSIONS.md section 4): the stored layer of
// each topic, held in memory (configs_) and in the store's `meta` entries, resolved over the
// node-local layers by ConfigOf.
#include <thread>

#include "base/log.h"
#include "core/state_machine.h"
#include "engine/answer.h"
#include "engine/engine.h"

namespace chronoq::engine {

using core::MessageRecord;
using core::MsgStatus;

core::TopicConfig Engine::StoredConfig(const std::string& topic) const {
  base::MutexLock lock(config_mu_);
  auto it = configs_.find(topic);
  return it == configs_.end() ? core::TopicConfig{} : it->second;
}

core::EffectiveTopicConfig Engine::ConfigOf(const std::string& topic) const {
  const core::TopicDefaults* d = topic_defaults_.load();
  return (d != nullptr ? *d : core::TopicDefaults::ServerOnly())
      .Resolve(topic, StoredConfig(topic));
}

const core::EffectiveTopicConfig& Engine::ConfigOf(Slot& slot) const {
  // The version is read before resolving: a change committed meanwhile bumps it again, and the
  // next operation resolves once more.
  const uint64_t version = config_version_.load(std::memory_order_acquire);
  if (slot.config_version != version) {
    slot.config = ConfigOf(slot.topic->name());
    slot.config_version = version;
  }
  return slot.config;
}

Status Engine::LoadTopicConfigs() {
  std::unordered_map<std::string, core::TopicConfig> loaded;
  CQ_RETURN_IF_ERROR(store_->ScanTopicConfigs(
      [&](std::string topic, core::TopicConfig c) { loaded.emplace(std::move(topic), c); }));
  base::MutexLock lock(config_mu_);
  configs_ = std::move(loaded);
  NoteHistoryTopics();
  config_version_.fetch_add(1, std::memory_order_acq_rel);
  return Status::Ok();
}

bool Engine::KnownIdle(const std::string& topic) {
  // A paused topic delivers nothing, and resuming it wakes the listener (WriteTopicConfig).
  return ConfigOf(topic).paused;
}

void Engine::WriteTopicConfig(const std::string& topic, const core::TopicConfig& after,
                              Answer<Status>& answer) {
  const bool was_paused = ConfigOf(topic).paused;
  Batch batch = store_->NewBatch();
  if (after.empty()) {
    store_->DeleteTopicConfig(batch, topic);
  } else {
    store_->PutTopicConfig(batch, topic, after);
  }
  answer.Set(Status::Ok());
  std::optional<Status> outcome;
  if (CommitFor(nullptr, std::move(batch), answer.OnDurable(), &outcome)) {
    base::MutexLock lock(config_mu_);
    if (after.empty()) {
      configs_.erase(topic);
    } else {
      configs_[topic] = after;
    }
    NoteHistoryTopics();
    config_version_.fetch_add(1, std::memory_order_acq_rel);
  }
  if (was_paused && !ConfigOf(topic).paused) {
    // Resumed: parked long polls pull again, and the push lane's messages are due.
    bool push_work = false;
    {
      Shard& shard = ShardFor(topic);
      base::MutexLock lock(shard.mu);
      const Slot* slot = Find(shard, topic);
      push_work = slot != nullptr && slot->topic->push_live_count() > 0;
    }
    if (ReadyListener* l = listener_.load()) {
      l->OnReady(topic);
      if (push_work) l->OnPushReady(topic);
    }
  }
  if (outcome) answer.Finish(*outcome);
}

void Engine::SetTopicConfig(std::string topic, core::TopicConfig change,
                            Callback<Result<core::TopicConfig>> done) {
  // One change at a time: each is a read-modify-write of the stored layer.
  base::MutexLock lock(config_write_mu_);
  core::TopicConfig after = core::Overlay(change, StoredConfig(topic));
  Answer<Status> answer([after, done = std::move(done)](Status s) mutable {
    if (s.ok()) {
      done(after);
    } else {
      done(std::move(s));
    }
  });
  WriteTopicConfig(topic, after, answer);
}

void Engine::GetTopicConfig(std::string topic, Callback<Result<core::TopicConfig>> done) {
  done(StoredConfig(topic));
}

void Engine::DeleteTopicConfig(std::string topic, Callback<Status> done) {
  base::MutexLock lock(config_write_mu_);
  Answer<Status> answer(std::move(done));
  WriteTopicConfig(topic, core::TopicConfig{}, answer);
}

namespace {

// How long a purge waits at most, before a chunk, for the store to catch up with its background
// work (MessageStore::WriteBacklog): the bulk of a purge must not make RocksDB stop every
// writer, other topics' included, while its memtables wait for a flush.
constexpr std::chrono::milliseconds kPurgeBacklogWaitMax{200};

// Waits for one write to be durable (its outcome known at once, or later from the committer).
class Durable {
 public:
  UniqueFunction<void(Status)> Callback() {
    return [this](Status s) {
      base::MutexLock lock(mu_);
      outcome_ = std::move(s);
      cv_.SignalAll();
    };
  }
  Status Wait(std::optional<Status> known) {
    if (known) return *std::move(known);
    base::MutexLock lock(mu_);
    while (!outcome_) cv_.Wait(mu_);
    return *std::move(outcome_);
  }

 private:
  base::Mutex mu_;
  base::CondVar cv_;
  std::optional<Status> outcome_ CQ_GUARDED_BY(mu_);
};

}  // namespace

void Engine::WaitForWriteBacklog() {
  // Bounded, so that a store that stays behind (compaction debt) slows a purge down without
  // stopping it: at least one chunk per kPurgeBacklogWaitMax.
  const auto until = std::chrono::steady_clock::now() + kPurgeBacklogWaitMax;
  while (store_->WriteBacklog() && std::chrono::steady_clock::now() < until) {
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
}

void Engine::Purge(std::string topic, std::optional<core::MsgStatus> status,
                   Callback<Result<int64_t>> done) {
  Shard& shard = ShardFor(topic);
  // Near messages walk in pull order from where the last chunk stopped (what is sent meanwhile
  // behind the position stays); far ones (waiting, on disk only) are read from the store in
  // (visible_at, seq) order from where the last chunk stopped, never over the entries the purge
  // deleted already. Far messages that time brings near meanwhile (the load cursor moves past
  // them) are purged by a second walk of the near ones.
  // Messages deleted per shard-lock hold and per write (EngineOptions::purge_chunk). Each chunk's
  // write is durable before the next chunk is built, so a group commit holds at most one chunk of
  // a purge: another topic's write waits for one chunk's write at most (docs/benchmarks.md).
  const size_t chunk = std::max<size_t>(1, options_.purge_chunk);
  std::optional<PullPosition> after;
  bool near_done = false;
  // Far messages are all WAITING: none to purge for another status.
  bool far_done = status.has_value() && *status != MsgStatus::kWaiting;
  std::optional<IndexKey> far_from;  // where the next far chunk starts (nullopt: the cursor)
  std::optional<IndexKey> far_start_cursor;
  int64_t purged = 0;
  Status failure;
  for (;;) {
    WaitForWriteBacklog();
    const auto chunk_start = std::chrono::steady_clock::now();
    Effects fx{topic, {}, 0, false};
    size_t taken = 0;
    Durable durable;
    std::optional<Status> outcome;
    {
      base::MutexLock lock(shard.mu);
      Slot* slot = Find(shard, topic);
      if (slot == nullptr) break;
      Topic& t = *slot->topic;
      Batch batch = store_->NewBatch();
      const TimePoint now = Advance(*slot, fx, batch);
      std::vector<MessageRecord> near;  // before, for memory
      std::vector<MessageRecord> far;
      auto take = [&](const MessageRecord& before) {
        Result<MessageRecord> next =
            core::Apply(before, core::Event{core::EventKind::kDelete}, now);
        if (!next.has_value()) return;
        WriteTransition(batch, &before, *next);
        ++taken;
      };
      if (!near_done) {
        std::vector<const MessageRecord*> recs = t.PeekReady(kTimeMax, after, chunk, Lane::kBoth);
        near_done = recs.size() < chunk;
        for (const MessageRecord* r : recs) {
          after = Topic::PositionOf(*r);
          if (status && core::StatusAt(*r, now) != *status) continue;
          near.push_back(t.Copy(*r));
          take(near.back());
        }
      } else if (!far_done) {
        if (!far_start_cursor) far_start_cursor = t.cursor();
        IndexKey from = t.cursor();
        if (far_from && from < *far_from) from = *far_from;
        Status s = store_->ScanVis(topic, storage::VisKind::kPending, from.t, from.seq, kTimeMax,
                                   [&](MessageRecord&& r) {
                                     far.push_back(std::move(r));
                                     return far.size() < chunk;
                                   });
        far_done = far.size() < chunk;
        if (!s.ok()) {
          far.clear();  // what Advance ended is written all the same
          failure = std::move(s);
        } else if (!far.empty()) {
          far_from = IndexKey{far.back().visible_at, far.back().seq + 1};
        }
        for (const MessageRecord& r : far) take(r);
        if (far_done && failure.ok() && !(t.cursor() == *far_start_cursor)) {
          // Time loaded far messages near while the far ones were purged: walk the near ones
          // again (what was purged is gone; the walk passes over the rest once more).
          near_done = false;
          after.reset();
          far_start_cursor.reset();
        }
      }
      if (CommitFor(slot, std::move(batch), durable.Callback(), &outcome)) {
        t.Touch(now);
        for (const MessageRecord& r : near) t.Forget(r.msg_id, now);
        for (const MessageRecord& r : far) t.AddFar(r.visible_at, -1, now);
      }
      Reschedule(*slot);
    }
    Report(fx);
    // One chunk in the committer at a time.
    if (Status s = durable.Wait(std::move(outcome)); !s.ok()) {
      if (failure.ok()) failure = std::move(s);
    } else {
      purged += static_cast<int64_t>(taken);
    }
    if (!failure.ok() || (near_done && far_done)) break;
    if (options_.purge_pause > 0) {
      std::this_thread::sleep_for((std::chrono::steady_clock::now() - chunk_start) *
                                  options_.purge_pause);
    }
  }
  if (!failure.ok()) return done(std::move(failure));
  done(purged);
}

}  // namespace chronoq::engine
