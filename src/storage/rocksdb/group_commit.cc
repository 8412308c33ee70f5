// RocksKv's group commit: batches queue here, and one thread at a time writes everything queued
// as one WriteBatch (one WAL append, and with sync_writes one fsync). That thread is the
// committer, or, for deferrable batches (KvBatch::set_deferrable) queued on a thread that runs an
// event loop (base/turn_end.h: an HTTP worker), that thread itself at the end of its loop turn:
// it writes the batches of its whole turn (and whatever else is queued) as one group and runs
// their callbacks, so that a send needs no thread hand-off at all (docs/benchmarks.md, "Issue
// 20", second session). The committer hands its callbacks to a completion thread and writes the
// next group. Until a batch is written, reads see it through the overlay. Callers never write
// under their own locks (a loop writes at its turn's end, outside every handler), and many
// requests share one write. A failed write fails every queued batch, empties the overlay (reads
// see only what is durable) and refuses new batches until ResumeAfterFailure. While RocksDB
// refuses writes (rocks_faults.cc) and resuming cannot help yet, new batches are refused at once.
#include <rocksdb/options.h>

#include <algorithm>

#include "base/log.h"
#include "base/turn_end.h"
#include "storage/rocksdb/rocks_kv_impl.h"

namespace chronoq::storage {
namespace {

// Groups a loop thread writes in a row at most (what others queued while it wrote) before it
// hands the queue to the committer and goes back to its own connections.
constexpr int kLoopRounds = 4;

// Deferrable batches a loop thread queues before it asks to write them without waiting for the
// end of its turn: a turn of many ready connections would otherwise hold all their answers (and
// the clients, which then send their next requests in one burst) until its end.
constexpr int kTurnBatches = 8;
thread_local int t_deferred = 0;  // deferrable batches this thread queued since its last flush

// The overlay's largest bucket array that a write clears at once (clear() zeroes all of it): one
// left large by a burst is emptied key by key instead.
constexpr size_t kClearBuckets = 1024;

// The stores (Impl::uid, never reused) for which this thread's loop has a flush posted and not yet
// run; one left behind by a loop that stopped before its turn's end matches no later store.
thread_local std::vector<uint64_t> t_flush_posted;

}  // namespace

std::optional<Status> RocksKv::Impl::Enqueue(KvBatch batch, UniqueFunction<void(Status)> done) {
  if (stopped.load()) {
    // Refused at once while the store cannot write (the disk is still full): the caller reloads
    // only what it touched, instead of every batch failing later in the committer.
    if (std::optional<Status> refusal = WriteRefusal()) return refusal;
  }
  base::MutexLock lock(mu);
  if (failed) return failure;
  if (stop) return Unavailable("the store is closing");
  uint64_t id = next_id++;
  // Written at this thread's turn end (FlushAtTurnEnd), unless the writes stopped (the committer
  // resumes them) or sync_writes (an fsync would hold the loop's other connections).
  const bool defer =
      batch.deferrable() && !options.sync_writes && !stopped.load() && base::HasTurnEnd();
  queue.push_back(Queued{std::move(batch), std::move(done), id});
  for (const KvBatch::Op& op : queue.back().batch.ops()) {
    if (op.kind == KvBatch::Kind::kAdd) continue;  // not read through the overlay (kv.h)
    const OverlayKey key = OverlayKey::Of(op.cf, op.key);
    auto [it, inserted] = overlay.try_emplace(key, Overlay{&op, id});
    if (!inserted) {
      // The key points into the older batch, which goes once written: re-key it to this one.
      overlay.erase(it);
      overlay.emplace(key, Overlay{&op, id});
    }
  }
  if (!defer) {
    // The committer waits while the queue is empty or another thread writes (which takes it).
    if (!writing) cv.Signal();
    return std::nullopt;
  }
  if (std::find(t_flush_posted.begin(), t_flush_posted.end(), uid) == t_flush_posted.end()) {
    t_flush_posted.push_back(uid);
    base::RunAtTurnEnd([this] { FlushAtTurnEnd(); });
  }
  if (++t_deferred >= kTurnBatches) base::EndTurnSoon();
  return std::nullopt;
}

void RocksKv::Impl::FlushAtTurnEnd() {
  t_flush_posted.erase(std::find(t_flush_posted.begin(), t_flush_posted.end(), uid));
  t_deferred = 0;
  DisablePerfCounting();
  rocksdb::WriteOptions wo;
  wo.sync = options.sync_writes;
  std::deque<Queued> group;
  {
    base::MutexLock lock(mu);
    // Another thread writes: it takes what is queued once its write is done.
    if (writing || queue.empty()) return;
    if (stopped.load()) {
      cv.Signal();  // the committer resumes the store first
      return;
    }
    writing = true;
    group.swap(queue);
  }
  for (int round = 1;; ++round) {
    WriteGroup(wo, group, /*complete_inline=*/true);
    base::MutexLock lock(mu);
    if (queue.empty() || stop || stopped.load() || round == kLoopRounds) {
      writing = false;
      if (!queue.empty() || stop) cv.Signal();  // the rest is the committer's
      return;
    }
    group.swap(queue);
  }
}

void RocksKv::Impl::StartCommitter() {
  completer = std::thread([this] { CompleterLoop(); });
  committer = std::thread([this] { CommitterLoop(); });
}

void RocksKv::Impl::StopCommitter() {
  {
    base::MutexLock lock(mu);
    stop = true;
  }
  cv.SignalAll();
  if (committer.joinable()) committer.join();
  {
    base::MutexLock lock(done_mu);
    done_stop = true;
  }
  done_cv.SignalAll();
  if (completer.joinable()) completer.join();
}

void RocksKv::Impl::Complete(std::deque<Queued>& group, const Status& s) {
  if (group.empty()) return;
  bool was_empty;
  {
    base::MutexLock lock(done_mu);
    was_empty = completions.empty();
    for (Queued& q : group) completions.emplace_back(std::move(q.done), s);
  }
  if (was_empty) done_cv.Signal();
}

void RocksKv::Impl::CompleterLoop() {
  for (;;) {
    std::deque<std::pair<UniqueFunction<void(Status)>, Status>> batch;
    {
      base::MutexLock lock(done_mu);
      while (!done_stop && completions.empty()) done_cv.Wait(done_mu);
      if (completions.empty()) return;  // stopping, and every callback has run
      batch.swap(completions);
    }
    for (auto& [done, status] : batch) done(std::move(status));
  }
}

void RocksKv::Impl::CommitterLoop() {
  DisablePerfCounting();
  rocksdb::WriteOptions wo;
  wo.sync = options.sync_writes;
  for (;;) {
    std::deque<Queued> group;
    {
      base::MutexLock lock(mu);
      if (stopped.load()) {
        // And retry resuming at least once a second meanwhile.
        const auto retry_at = std::chrono::steady_clock::now() + std::chrono::seconds(1);
        while (!stop && (queue.empty() || writing) && cv.WaitUntil(mu, retry_at)) {
        }
      } else {
        while (!stop && (queue.empty() || writing)) cv.Wait(mu);
      }
      while (writing) cv.Wait(mu);        // stopping: a loop thread finishes its write
      if (stop && queue.empty()) return;  // stopping, and everything is written
      writing = true;
      group.swap(queue);
    }
    MaybeResume();
    if (!group.empty()) {
      WriteGroup(wo, group, /*complete_inline=*/false);
    }
    base::MutexLock lock(mu);
    writing = false;
  }
}

void RocksKv::Impl::WriteGroup(const rocksdb::WriteOptions& wo, std::deque<Queued>& group,
                               bool complete_inline) {
  std::vector<const KvBatch*> batches;
  batches.reserve(group.size());
  for (const Queued& q : group) batches.push_back(&q.batch);
  // One buffer per writing thread, kept from group to group (write_batch_rep.h).
  thread_local WriteBatchRep rep;
  rep.Clear(GroupWriteBatchBytes(batches));
  AppendGroupToWriteBatch(batches, cf_ids, &rep);
  rocksdb::WriteBatch wb = rep.Release();
  Status s = FromRocks(db->Write(wo, &wb), "writing to the store");
  std::deque<Queued> also_failed;
  {
    base::MutexLock lock(mu);
    if (s.ok() && queue.empty() && overlay.bucket_count() <= kClearBuckets) {
      // Nothing was queued meanwhile: every entry is this group's (the overlay holds the keys of
      // the queue and of the group being written, and only one thread writes), and a clear frees
      // them without hashing each key again.
      overlay.clear();
    } else if (s.ok()) {
      for (const Queued& q : group) {
        for (const KvBatch::Op& op : q.batch.ops()) {
          if (op.kind == KvBatch::Kind::kAdd) continue;
          auto it = overlay.find(OverlayKey::Of(op.cf, op.key));
          if (it != overlay.end() && it->second.id == q.id) overlay.erase(it);
        }
      }
    } else {
      failed = true;
      failure = s;
      overlay.clear();
      also_failed.swap(queue);
    }
  }
  if (!s.ok()) {
    // The owner hears first, so that its recovery is under way before any client hears.
    base::MutexLock lock(handler_mu);
    if (on_failure) on_failure(s);
  }
  if (complete_inline) {
    for (Queued& q : group) q.done(s);
    for (Queued& q : also_failed) q.done(s);
    group.clear();
  } else {
    Complete(group, s);
    Complete(also_failed, s);
  }
}

std::optional<std::optional<std::string>> RocksKv::Impl::OverlayGet(Cf cf, std::string_view key) {
  base::MutexLock lock(mu);
  if (overlay.empty()) return std::nullopt;
  auto it = overlay.find(OverlayKey::Of(cf, key));
  if (it == overlay.end()) return std::nullopt;
  const KvBatch::Op& op = *it->second.op;
  return op.kind == KvBatch::Kind::kPut ? std::optional<std::string>(op.value) : std::nullopt;
}

void RocksKv::Impl::OverlayGetMany(Cf cf, const std::vector<std::string>& keys,
                                   std::vector<std::optional<std::string>>* out,
                                   std::vector<size_t>* unknown) {
  base::MutexLock lock(mu);
  for (size_t i = 0; i < keys.size(); ++i) {
    auto it = overlay.empty() ? overlay.end() : overlay.find(OverlayKey::Of(cf, keys[i]));
    if (it == overlay.end()) {
      unknown->push_back(i);
      continue;
    }
    const KvBatch::Op& op = *it->second.op;
    if (op.kind == KvBatch::Kind::kPut) (*out)[i] = op.value;
  }
}

std::vector<std::pair<std::string, std::optional<std::string>>> RocksKv::Impl::OverlayRange(
    Cf cf, const std::string& lower, const std::string& upper) {
  std::vector<std::pair<std::string, std::optional<std::string>>> out;
  base::MutexLock lock(mu);
  if (overlay.empty()) return out;
  for (const auto& [k, o] : overlay) {
    if (k.cf != cf || k.key < lower || (!upper.empty() && k.key >= upper)) continue;
    const KvBatch::Op& op = *o.op;
    out.emplace_back(std::string(k.key), op.kind == KvBatch::Kind::kPut
                                             ? std::optional<std::string>(op.value)
                                             : std::nullopt);
  }
  std::sort(out.begin(), out.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  return out;
}

void RocksKv::SetFailureHandler(UniqueFunction<void(Status)> handler) {
  base::MutexLock lock(impl_->handler_mu);  // waits for a call in progress
  impl_->on_failure = std::move(handler);
}

void RocksKv::ResumeAfterFailure() {
  std::deque<Impl::Queued> stale;
  {
    base::MutexLock lock(impl_->mu);
    stale.swap(impl_->queue);
    impl_->overlay.clear();
    impl_->failed = false;
    impl_->failure = Status::Ok();
  }
  for (Impl::Queued& q : stale)
    q.done(Unavailable("write dropped while recovering from a failure"));
}

}  // namespace chronoq::storage
