// KvStore: the ordered key-value store under the message store (docs/storage-format.md): column
// families of byte-string keys in lexicographic order, point reads, bounded iterators, and atomic
// batches of puts, deletes and 64-bit merge-adds. Two implementations: RocksDB (durable, the
// default) and an in-memory map (`--storage=memory`, tests). Keys and values are encoded by
// storage/codec.h; nothing above the storage module sees this interface's bytes.
//
// Commit semantics. Every batch is applied atomically and in the order Commit() is called. Reads
// (Get, iterators) see the puts and deletes of every committed batch as soon as Commit() returns,
// also when its durability is still pending (read-your-writes). Counter additions (Add) are
// visible only once durable: read counters when no batch is pending (recovery, rebuild).
//
// Thread-safety: every method may be called from any thread.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/result.h"
#include "base/unique_function.h"

namespace chronoq::storage {

enum class Cf : uint8_t {
  kMeta = 0,       // store identity, sequence reservation
  kRecords = 1,    // message metadata since its first change, by (topic, msgId)
  kPayloads = 2,   // payloads of messages sent before format 4, by (topic, msgId)
  kVis = 3,        // in-life messages by (topic, kind, visible_at, seq)
  kHist = 4,       // per topic: waiting messages per trigger millisecond (merge-add counters)
  kRetention = 5,  // ended messages by (purge_at, seq)
  kEnded = 6,      // per topic and end status: retained ended messages by (ended_at, seq)
  kSent = 7,       // messages as sent, metadata and payload in one value, by (topic, msgId)
};
inline constexpr int kCfCount = 8;
std::string_view CfName(Cf cf);

class KvBatch {
 public:
  enum class Kind : uint8_t { kPut, kDelete, kAdd };
  struct Op {
    Kind kind;
    Cf cf;
    std::string key;
    std::string value;  // kPut
    int64_t delta = 0;  // kAdd
  };

  void Put(Cf cf, std::string key, std::string value) {
    ops_.push_back(Op{Kind::kPut, cf, std::move(key), std::move(value), 0});
  }
  void Delete(Cf cf, std::string key) {
    ops_.push_back(Op{Kind::kDelete, cf, std::move(key), {}, 0});
  }
  // Adds `delta` to the signed 64-bit counter at key (absent counts as 0).
  void Add(Cf cf, std::string key, int64_t delta) {
    ops_.push_back(Op{Kind::kAdd, cf, std::move(key), {}, delta});
  }

  // Room for n ops, so that a batch whose size is known up front is not regrown (and its ops
  // moved) op by op.
  void Reserve(size_t n) { ops_.reserve(n); }

  const std::vector<Op>& ops() const { return ops_; }
  std::vector<Op>& mutable_ops() { return ops_; }
  bool empty() const { return ops_.empty(); }
  size_t size() const { return ops_.size(); }

  // The caller never blocks its thread on this batch's outcome (it learns it in Commit's `done`
  // and returns to its event loop): a store that writes later may then write the batch at the
  // end of the calling thread's loop turn (base/turn_end.h), with the batches of that turn, on
  // that thread, and run `done` there. Stores ignore it on threads without a loop.
  void set_deferrable(bool v) { deferrable_ = v; }
  bool deferrable() const { return deferrable_; }

 private:
  std::vector<Op> ops_;
  bool deferrable_ = false;
};

// Walks the keys of one column family in [lower, upper), in order.
class KvIterator {
 public:
  virtual ~KvIterator() = default;
  virtual bool Valid() const = 0;
  virtual void Next() = 0;
  virtual std::string_view key() const = 0;
  virtual std::string_view value() const = 0;
  // The error that ended the walk, if any (Valid() is then false).
  virtual Status status() const = 0;
};

class KvStore {
 public:
  virtual ~KvStore() = default;

  // The value at key, or std::nullopt. For counters (Add), the 8-byte little-endian sum.
  // Errors: kIOError, kCorruption.
  virtual Result<std::optional<std::string>> Get(Cf cf, std::string_view key) = 0;

  // The values at several keys of one column family, in the order of `keys` (std::nullopt where
  // absent), as Get would answer each. Stores that can batch point reads override it.
  // Errors: kIOError, kCorruption.
  virtual Result<std::vector<std::optional<std::string>>> MultiGet(
      Cf cf, const std::vector<std::string>& keys) {
    std::vector<std::optional<std::string>> out;
    out.reserve(keys.size());
    for (const std::string& key : keys) {
      CQ_ASSIGN_OR_RETURN(std::optional<std::string> v, Get(cf, key));
      out.push_back(std::move(v));
    }
    return out;
  }

  // An iterator over [lower, upper); empty bounds mean unbounded.
  virtual std::unique_ptr<KvIterator> Scan(Cf cf, std::string lower, std::string upper) = 0;

  // Applies the batch. Returns its outcome when it was made durable before returning (`done` is
  // then dropped, never called); returns std::nullopt when durability follows later (group
  // commit): `done` then runs exactly once, on another thread, with the outcome. Either way the
  // batch is visible to reads when Commit returns, unless it returned an error.
  virtual std::optional<Status> Commit(KvBatch batch, UniqueFunction<void(Status)> done) = 0;

  // Called (on the thread that writes) when a batch whose Commit returned std::nullopt failed,
  // before the `done` callbacks of the failed batches run. Until ResumeAfterFailure(), every
  // pending and later batch fails too and none is applied, so that the owner can rebuild its
  // state from what is durable. Set it before use; setting it again (nullptr before the owner
  // goes away) waits for a call in progress.
  virtual void SetFailureHandler(UniqueFunction<void(Status)> handler) = 0;
  // Ends the failed state: batches still queued from before are failed (not written), later
  // ones are written. REQUIRES: no Commit runs concurrently.
  virtual void ResumeAfterFailure() = 0;

  // For stores that write later: writes what is still queued, runs those batches' callbacks and
  // refuses later batches (kUnavailable); reads keep working. Called at shutdown, while the
  // callbacks' targets still exist.
  virtual void Close() {}

  // Operational figures ("live data bytes", ...), for logs and metrics.
  virtual std::vector<std::pair<std::string, int64_t>> Stats() { return {}; }

  // Whether a bulk writer (purgeTopic) should hold back its next batch: the store is behind with
  // its own background work (memtables waiting for a flush, writes being slowed down), and more
  // bulk writes now would soon make it stop every writer. Cheap, never blocks. A store that
  // writes at once has no backlog.
  virtual bool WriteBacklog() { return false; }

  // Online backup (docs/operations.md): writes a consistent copy of the store into `dir`, an
  // absolute path that does not exist yet (its parent must), while other threads go on reading
  // and writing. The copy holds every batch whose Commit had completed (durably) when the call
  // began, and opens as a complete store. Answers what was written. Errors: kInvalidArgument (a
  // store that keeps nothing on disk, a relative or existing `dir`, a parent that is missing or
  // not a writable directory), kIOError.
  struct CheckpointInfo {
    std::string dir;
    int64_t bytes = 0;  // the copy's size (hard-linked files included)
    int64_t files = 0;
  };
  virtual Result<CheckpointInfo> Checkpoint(const std::string& dir) {
    (void)dir;
    return InvalidArgument(
        "this server keeps its messages in memory (storage=memory): there is no store on disk "
        "to back up");
  }
};

}  // namespace chronoq::storage
