// Internals of RocksKv shared by its files (RocksDB types allowed here: this folder wraps them).
#pragma once

#include <rocksdb/db.h>
#include <rocksdb/env.h>
#include <rocksdb/write_batch.h>

#include <array>
#include <atomic>
#include <chrono>
#include <cstring>
#include <deque>
#include <optional>
#include <string_view>
#include <thread>
#include <unordered_map>
#include <vector>

#include "base/mutex.h"
#include "base/thread_annotations.h"
#include "storage/rocksdb/rocks_kv.h"
#include "storage/rocksdb/write_batch_rep.h"

namespace chronoq::storage {

// rocksdb::Status -> Status (kIOError, kCorruption, kUnavailable, kInternal).
Status FromRocks(const rocksdb::Status& s, std::string_view what);

// Turns RocksDB's perf-context counting off for the calling thread (once per thread): by default
// it counts every key comparison of a memtable insert or lookup in a thread-local context (a TLS
// lookup per comparison, in a shared library), which nothing here reads. Called by the threads
// that write and by every read.
void DisablePerfCounting();

// RocksDB's id of each column family, indexed by Cf.
using CfIds = std::array<uint32_t, kCfCount>;

// The batches of one group commit as one rocksdb::WriteBatch (its records): their ops in (column
// family, key) order, the ops of one key in the order they were queued, except that the counter
// additions (KvBatch::Add) to one key between two of its puts or deletes are summed and written
// once (none when they cancel out). Sends of several requests due in the same millisecond then cost
// one `hist` merge operand (one memtable insert, one WAL record) instead of one each, and the
// memtable inserts of a group go in key order (each starts its search where the last ended). The
// order of writes to different keys within one WriteBatch is invisible to readers (RocksDB applies
// the batch atomically).
void AppendGroupToWriteBatch(const std::vector<const KvBatch*>& batches, const CfIds& cf_ids,
                             WriteBatchRep* out);
// An upper bound of the bytes AppendGroupToWriteBatch writes for `batches` (a WriteBatchRep made
// with that reservation never grows its buffer while it is filled).
size_t GroupWriteBatchBytes(const std::vector<const KvBatch*>& batches);

// The info log (the data directory's LOG file), written so that a full disk only loses lines:
// RocksDB's own file logger aborts the process (a failed assertion in Debian's build) when it
// writes again after a failed write. Rolls to LOG.old.<micros> past `max_bytes`; RocksDB deletes
// old ones beyond keep_log_file_num.
std::shared_ptr<rocksdb::Logger> NewInfoLog(const std::string& dir, size_t max_bytes);

struct RocksKv::Impl {
  RocksOptions options;
  // This store among every RocksKv of the process, never reused (group_commit.cc).
  const uint64_t uid = NextUid();
  static uint64_t NextUid() {
    static std::atomic<uint64_t> next{1};
    return next.fetch_add(1);
  }
  int lock_fd = -1;
  std::unique_ptr<rocksdb::DB> db;
  std::vector<rocksdb::ColumnFamilyHandle*> cfs;  // indexed by Cf
  CfIds cf_ids{};                                 // their ids
  rocksdb::ColumnFamilyHandle* default_cf = nullptr;

  // --- group commit, group_commit.cc
  struct Queued {
    KvBatch batch;
    UniqueFunction<void(Status)> done;
    uint64_t id;
  };
  // An overlay entry points into the queued batch that last wrote the key (its Op, in the
  // `queue` or the group being written: neither moves nor changes until the entry is erased).
  // The key's hash is computed once, when the key is made (Of), and kept: a queued key is hashed
  // once to enter the map and once to leave it, not again by erase or a rehash.
  // The overlay's hash of a key: eight bytes per multiplication (std::hash of a string_view, a
  // byte-wise MurmurHash, cost twice as much for the keys of a send). Not keyed, like std::hash.
  static size_t HashKey(std::string_view key) {
    constexpr uint64_t kMul = 0x9e3779b97f4a7c15ULL;
    uint64_t h = key.size() * kMul;
    const char* p = key.data();
    size_t n = key.size();
    for (; n >= 8; p += 8, n -= 8) {
      uint64_t w;
      std::memcpy(&w, p, 8);
      h = (h ^ w) * kMul;
      h ^= h >> 32;
    }
    if (n > 0) {
      uint64_t w = 0;
      std::memcpy(&w, p, n);
      h = (h ^ w) * kMul;
    }
    h ^= h >> 29;
    h *= kMul;
    return static_cast<size_t>(h ^ (h >> 32));
  }
  struct OverlayKey {
    Cf cf;
    std::string_view key;
    size_t hash;
    static OverlayKey Of(Cf cf, std::string_view key) {
      return OverlayKey{cf, key, HashKey(key) ^ (static_cast<size_t>(cf) << 57)};
    }
    bool operator==(const OverlayKey& o) const {
      return hash == o.hash && cf == o.cf && key == o.key;
    }
  };
  struct OverlayKeyHash {
    size_t operator()(const OverlayKey& k) const { return k.hash; }
  };
  struct Overlay {
    const KvBatch::Op* op;  // a put (its value) or a delete
    uint64_t id;            // the batch that wrote it
  };
  // Taken per send by both HTTP workers (Enqueue) and by whichever writes a group: short
  // sections that, with the workers on two cores at once, met often enough to put one to sleep
  // (a futex wait and wake-up each, docs/benchmarks.md "Ninth session"). An adaptive mutex here
  // (spin first) cost a 1M burst's drain 20 % more CPU per message: a plain one.
  base::Mutex mu;
  base::CondVar cv;
  std::deque<Queued> queue CQ_GUARDED_BY(mu);
  // Puts and deletes of batches not yet durable: what reads must see. A hash map (a write costs
  // one hash per key and copies nothing); range reads, which are rare, sort what they find.
  std::unordered_map<OverlayKey, Overlay, OverlayKeyHash> overlay CQ_GUARDED_BY(mu);
  uint64_t next_id CQ_GUARDED_BY(mu) = 1;
  // A thread is writing a group (the committer, or a loop thread at its turn's end): the others
  // leave the queue to it; it takes what was queued meanwhile when its write is done.
  bool writing CQ_GUARDED_BY(mu) = false;
  bool failed CQ_GUARDED_BY(mu) = false;
  Status failure CQ_GUARDED_BY(mu);
  bool stop CQ_GUARDED_BY(mu) = false;
  base::Mutex handler_mu;  // held while on_failure runs or changes
  UniqueFunction<void(Status)> on_failure CQ_GUARDED_BY(handler_mu);
  std::thread committer;

  // Callbacks of written groups run on their own thread, in write order, so that the committer
  // goes on writing while answers are encoded (and long polls pull again) elsewhere.
  base::Mutex done_mu;
  base::CondVar done_cv;
  std::deque<std::pair<UniqueFunction<void(Status)>, Status>> completions CQ_GUARDED_BY(done_mu);
  bool done_stop CQ_GUARDED_BY(done_mu) = false;
  std::thread completer;

  // --- write faults, rocks_faults.cc. After a failed write (disk full, I/O error) RocksDB holds
  // a background error and refuses every write until DB::Resume() clears it. Its own recovery
  // (waiting until the free space exceeds the largest write buffer, checked every 5 s) is turned
  // off: the committer resumes as soon as the cause looks gone (MaybeResume).
  std::atomic<bool> stopped{false};  // RocksDB refuses writes (a hard or worse background error)
  base::Mutex bg_mu;
  rocksdb::Status bg_error CQ_GUARDED_BY(bg_mu);  // the current background error, or OK
  std::chrono::steady_clock::time_point last_failed_resume CQ_GUARDED_BY(bg_mu);
  // The listener RocksDB calls on background errors and recoveries (set in the DB options).
  std::shared_ptr<rocksdb::EventListener> NewListener();
  void OnBackgroundError(const rocksdb::Status& s) CQ_EXCLUDES(bg_mu);
  void OnRecovered() CQ_EXCLUDES(bg_mu);
  // Whether DB::Resume() may clear `error` now: for a full disk, once the free space exceeds the
  // memtables by 1 MB (and 100 ms after a failed try); for another hard error, a second after a
  // failed try; never for a fatal one.
  bool ResumeMayHelp(const rocksdb::Status& error) CQ_EXCLUDES(bg_mu);
  // While RocksDB refuses writes and resuming cannot help yet: the error a new batch gets at once
  // (it is then neither queued nor visible). std::nullopt otherwise.
  std::optional<Status> WriteRefusal() CQ_EXCLUDES(bg_mu);
  // Committer thread, before writing: DB::Resume() when RocksDB refuses writes and it may help.
  void MaybeResume() CQ_EXCLUDES(bg_mu);

  void StartCommitter();
  // Writes what is queued, runs the last callbacks and stops (the destructor).
  void StopCommitter() CQ_EXCLUDES(mu, done_mu);
  void CommitterLoop() CQ_EXCLUDES(mu, handler_mu);
  void CompleterLoop() CQ_EXCLUDES(done_mu);
  void Complete(std::deque<Queued>& group, const Status& s) CQ_EXCLUDES(done_mu);
  // Writes one group and removes it from the overlay; on failure fails the rest of the queue
  // too. The callbacks run here (complete_inline) or on the completion thread. REQUIRES: this
  // thread set `writing`.
  void WriteGroup(const rocksdb::WriteOptions& wo, std::deque<Queued>& group, bool complete_inline)
      CQ_EXCLUDES(mu, handler_mu, done_mu);
  // A loop thread at the end of its turn (base/turn_end.h): writes what is queued, unless
  // another thread writes, for at most kLoopRounds groups, then leaves the rest to the committer.
  void FlushAtTurnEnd() CQ_EXCLUDES(mu, handler_mu, done_mu);
  std::optional<Status> Enqueue(KvBatch batch, UniqueFunction<void(Status)> done) CQ_EXCLUDES(mu);
  // The overlay's view of a key: nullopt when the overlay does not know it.
  std::optional<std::optional<std::string>> OverlayGet(Cf cf, std::string_view key) CQ_EXCLUDES(mu);
  // OverlayGet of several keys under one lock: sets out[i] for the keys the overlay knows and
  // appends the positions of the others to `unknown`.
  void OverlayGetMany(Cf cf, const std::vector<std::string>& keys,
                      std::vector<std::optional<std::string>>* out, std::vector<size_t>* unknown)
      CQ_EXCLUDES(mu);
  // The overlay's entries of [lower, upper) in one column family, in key order.
  std::vector<std::pair<std::string, std::optional<std::string>>> OverlayRange(
      Cf cf, const std::string& lower, const std::string& upper) CQ_EXCLUDES(mu);
};

}  // namespace chronoq::storage
