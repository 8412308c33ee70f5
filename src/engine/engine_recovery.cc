// Start-up recovery and rebuilds of the Engine (engine.h): the in-memory state is a cache of the
// store, reloaded from it at start and after a failed write. Only what is due within the memory
// horizon and what is being consumed is read; far messages are counted from the histogram.
#include "base/log.h"
#include "engine/engine.h"

namespace chronoq::engine {

using core::MessageRecord;

namespace {
constexpr const char* kLog = "cq.engine";
// After a failed write, a topic's timer waits this long before writing what time ended.
constexpr Millis kWriteRetryDelay{1000};
}  // namespace

Status Engine::RecoverTopic(const std::string& name, TimePoint now, Slot* slot) {
  // Built one millisecond in the past, so that the first Advance finalizes what ended meanwhile.
  auto t = std::make_unique<Topic>(name, now - Millis(1));
  const TimePoint at = t->processed();
  const IndexKey cursor{SaturatingAdd(now, options_.memory_horizon), 0};
  t->set_cursor(cursor);
  auto hold = [&](MessageRecord&& rec) {
    t->Insert(std::move(rec), at);
    return true;
  };
  CQ_RETURN_IF_ERROR(
      store_->ScanVis(name, storage::VisKind::kDelivered, kTimeMin, 0, kTimeMax, hold));
  CQ_RETURN_IF_ERROR(
      store_->ScanVis(name, storage::VisKind::kPending, kTimeMin, 0, cursor.t, hold));
  CQ_RETURN_IF_ERROR(store_->ScanHist(name, [&](TimePoint trigger, int64_t n) {
    if (trigger >= cursor.t) t->AddFar(trigger, n, at);
  }));
  if (slot->timer != 0) scheduler_->Cancel(slot->timer);
  slot->timer = 0;
  slot->timer_at = kTimeMax;
  slot->topic = std::move(t);
  return Status::Ok();
}

Status Engine::Recover() {
  const TimePoint now = clock_->Now();
  {
    CQ_ASSIGN_OR_RETURN(std::optional<std::string> seq, store_->GetMeta("seq"));
    base::MutexLock lock(seq_mu_);
    // Every sequence number used before is below the last reservation written, and no use runs
    // ahead of a reservation by more than a block: start a block past it.
    next_seq_ = (seq ? static_cast<uint64_t>(storage::DecodeCounter(*seq)) : 0) + kSeqBlock;
    reserved_seq_ = 0;  // the first allocation writes a new reservation
  }
  // Before any topic: what Recover's first Advance ends may be a dead letter of a stored layer.
  CQ_RETURN_IF_ERROR(LoadTopicConfigs());
  std::vector<std::string> names;
  CQ_RETURN_IF_ERROR(store_->ListTopics([&](const std::string& n) { names.push_back(n); }));
  size_t held = 0;
  int64_t far = 0;
  std::vector<DeadLetterKey> dead_letters;  // of what ended while the server was down
  for (const std::string& name : names) {
    Shard& shard = ShardFor(name);
    base::MutexLock lock(shard.mu);
    Slot& slot = shard.topics[name];
    CQ_RETURN_IF_ERROR(RecoverTopic(name, now, &slot));
    held += slot.topic->live_count();
    far += slot.topic->far_count();
    Effects fx{name, {}, 0, false};
    Batch batch = store_->NewBatch();
    Advance(slot, fx, batch);
    std::optional<Status> outcome;
    CommitFor(
        &slot, std::move(batch), [](Status) {}, &outcome);
    Reschedule(slot);
    for (DeadLetterKey& k : fx.dead_letters) dead_letters.push_back(std::move(k));
  }
  DeliverDeadLetters(std::move(dead_letters));
  CQ_LOG_INFO(kLog, "recovered {} topics: {} messages held in memory, {} far messages on disk",
              names.size(), held, far);
  NotePurgeTime(now);  // the first purge finds where retention stands
  // Push leases that ran out while the process was down, and pushes due meanwhile: the push
  // scheduler hears of them (a listener set later hears it then, SetReadyListener).
  AnnouncePushWork();
  return Status::Ok();
}

void Engine::RebuildTopic(Slot& slot) {
  std::string name = slot.topic->name();
  const TimePoint now = clock_->Now();
  Status s = RecoverTopic(name, now, &slot);
  if (!s.ok()) {
    CQ_LOG_ERROR(kLog, "reloading topic '{}' from the store failed: {}", name, s.ToString());
  }
  slot.write_retry_at = SaturatingAdd(now, kWriteRetryDelay);
  Reschedule(slot);
}

void Engine::OnAsyncCommitFailure(Status s) {
  CQ_LOG_ERROR(kLog, "storage write failed, reloading state from the store: {}", s.ToString());
  if (!rebuilding_.exchange(true)) {
    base::MutexLock lock(rebuild_mu_);
    rebuild_timer_ = scheduler_->Schedule(clock_->Now(), [this] { Rebuild(); });
  }
}

void Engine::LockAllShards() {
  for (auto& shard : shards_) shard->mu.Lock();
}

void Engine::UnlockAllShards() {
  for (auto& shard : shards_) shard->mu.Unlock();
}

void Engine::Rebuild() {
  {
    base::MutexLock lock(rebuild_mu_);
    rebuild_timer_ = 0;
  }
  // Stop the world: every pending write failed, and memory may hold changes the store refused.
  LockAllShards();
  std::vector<std::string> names;
  Status s = store_->ListTopics([&](const std::string& n) { names.push_back(n); });
  // A configuration change in a failed write may be in memory only.
  Status cs = LoadTopicConfigs();
  if (!cs.ok()) CQ_LOG_ERROR(kLog, "reloading topic configurations failed: {}", cs.ToString());
  for (auto& shard : shards_) {
    shard->mu.AssertHeld();
    for (auto& [name, slot] : shard->topics) {
      if (slot.timer != 0) scheduler_->Cancel(slot.timer);
    }
    shard->topics.clear();
  }
  const TimePoint now = clock_->Now();
  for (const std::string& name : names) {
    Shard& shard = ShardFor(name);
    shard.mu.AssertHeld();
    Slot& slot = shard.topics[name];
    Status ts = RecoverTopic(name, now, &slot);
    if (!ts.ok()) CQ_LOG_ERROR(kLog, "reloading topic '{}' failed: {}", name, ts.ToString());
    slot.write_retry_at = SaturatingAdd(now, kWriteRetryDelay);
  }
  {
    base::MutexLock lock(seq_mu_);
    reserved_seq_ = 0;  // reservations in the failed writes may be lost: write a new one
  }
  store_->kv()->ResumeAfterFailure();
  for (auto& shard : shards_) {
    shard->mu.AssertHeld();
    for (auto& [name, slot] : shard->topics) {
      if (slot.topic) Reschedule(slot);
    }
  }
  rebuilding_.store(false);  // with the shards still locked: a failure from now on rebuilds again
  UnlockAllShards();
  if (!s.ok()) CQ_LOG_ERROR(kLog, "listing topics failed during the reload: {}", s.ToString());
  // Takes refused by the failed writes are due again in memory too.
  AnnouncePushWork();
}

}  // namespace chronoq::engine
