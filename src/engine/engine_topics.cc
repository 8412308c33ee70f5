// Topic configuration of the Engine (engine.h; API-EXTENSIONS.md section 4): the stored layer of
// each topic, held in memory (configs_) and in the store's `meta` entries, resolved over the
// node-local layers by ConfigOf.
#include <mutex>

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
  return (d != nullptr ? *d : core::TopicDefaults::ServerOnly()).Resolve(topic, StoredConfig(topic));
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
    config_version_.fetch_add(1, std::memory_order_acq_rel);
  }
  if (was_paused && !ConfigOf(topic).paused) {
    // Resumed: parked long polls pull again.
    if (ReadyListener* l = listener_.load()) l->OnReady(topic);
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

// Messages deleted per shard-lock hold and per write: other topics of the shard wait at most
// one chunk, and a group commit holds at most one chunk of a purge.
constexpr size_t kPurgeChunkSize = 1000;

// What the chunks of one purge have to say once every write is durable.
class PurgeTally {
 public:
  explicit PurgeTally(Callback<Result<int64_t>> done) : done_(std::move(done)) {}
  // Counts a chunk whose write is pending; Finished(status) follows once it is durable.
  void Started() {
    std::lock_guard l(mu_);
    ++pending_;
  }
  void Finished(Status s, int64_t deleted) {
    Callback<Result<int64_t>> done;
    Result<int64_t> answer = int64_t{0};
    {
      std::lock_guard l(mu_);
      if (s.ok()) {
        deleted_ += deleted;
      } else if (first_error_.ok()) {
        first_error_ = std::move(s);
      }
      if (--pending_ > 0 || !all_started_) return;
      done = std::move(done_);
      answer = first_error_.ok() ? Result<int64_t>(deleted_) : Result<int64_t>(first_error_);
    }
    if (done) done(std::move(answer));
  }
  // No more chunks: answers once the pending ones are durable.
  void AllStarted() {
    {
      std::lock_guard l(mu_);
      all_started_ = true;
      ++pending_;
    }
    Finished(Status::Ok(), 0);
  }

 private:
  std::mutex mu_;
  int64_t pending_ = 0;
  bool all_started_ = false;
  int64_t deleted_ = 0;
  Status first_error_;
  Callback<Result<int64_t>> done_;
};

}  // namespace

void Engine::Purge(std::string topic, std::optional<core::MsgStatus> status,
                   Callback<Result<int64_t>> done) {
  auto tally = std::make_shared<PurgeTally>(std::move(done));
  Shard& shard = ShardFor(topic);
  // Near messages walk in index order from where the last chunk stopped (what is sent meanwhile
  // behind the position stays); far ones (waiting, on disk only) are read from the store.
  std::optional<PullPosition> after;
  bool near_done = false;
  // Far messages are all WAITING: none to purge for another status.
  bool far_done = status.has_value() && *status != MsgStatus::kWaiting;
  for (;;) {
    Effects fx{topic, {}, 0, false};
    size_t taken = 0;
    bool failed = false;
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
        std::vector<const MessageRecord*> recs = t.PeekReady(kTimeMax, after, kPurgeChunkSize);
        near_done = recs.size() < kPurgeChunkSize;
        for (const MessageRecord* r : recs) {
          after = Topic::PositionOf(*r);
          if (status && core::StatusAt(*r, now) != *status) continue;
          near.push_back(t.Copy(*r));
          take(near.back());
        }
      } else if (!far_done) {
        Status s = store_->ScanVis(topic, storage::VisKind::kPending, t.cursor().t, t.cursor().seq,
                                   kTimeMax, [&](MessageRecord&& r) {
                                     far.push_back(std::move(r));
                                     return far.size() < kPurgeChunkSize;
                                   });
        far_done = far.size() < kPurgeChunkSize;
        if (!s.ok()) {
          far.clear();  // what Advance ended is written all the same
          tally->Started();
          tally->Finished(s, 0);
          failed = true;
        }
        for (const MessageRecord& r : far) take(r);
      }
      {
        tally->Started();
        std::optional<Status> outcome;
        const int64_t n = static_cast<int64_t>(taken);
        if (CommitFor(
                slot, std::move(batch), [tally, n](Status st) { tally->Finished(st, n); },
                &outcome)) {
          t.Touch(now);
          for (const MessageRecord& r : near) t.Forget(r.msg_id, now);
          for (const MessageRecord& r : far) t.AddFar(r.visible_at, -1, now);
        } else {
          failed = true;
        }
        if (outcome) tally->Finished(*outcome, n);
      }
      Reschedule(*slot);
    }
    Report(fx);
    if (failed || (near_done && far_done)) break;
  }
  tally->AllStarted();
}

}  // namespace chronoq::engine
