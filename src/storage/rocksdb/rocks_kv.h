// RocksKv: the durable KvStore on RocksDB 7.8 (docs/storage-format.md), one database in the data
// directory with one column family per storage::Cf. RocksDB types stay inside this folder.
//
// Durability. Commit queues the batch; a committer thread writes everything queued as one batch
// (group commit); the callbacks then run on a completion thread, in write order, while the next
// group is written. A deferrable batch (KvBatch::set_deferrable) queued on a thread that runs an
// event loop (base/turn_end.h) is written instead by that thread at the end of its turn, with
// everything else queued, and its callbacks run there (not with sync_writes: an fsync would hold
// the loop). An answer given in a callback is in the WAL, so a
// kill -9 loses nothing that was answered; with sync_writes=true the WAL is also fsynced first,
// once per group. Until a batch is written, reads see it through an in-memory overlay.
//
// Failed writes (disk full, I/O error; docs/storage-format.md "Failed writes"). A failed group
// fails every queued batch (SetFailureHandler). RocksDB then refuses writes until resumed: while
// resuming cannot help (the disk is still full), Commit refuses new batches at once; the committer
// resumes the database by itself once it may (free space), so later writes succeed again without
// reopening. Stats() reports "writable" (0 meanwhile).
//
// Lifecycle: Open() once; the destructor writes what is queued, closes the database and releases
// the directory lock.
#pragma once

#include <cstddef>
#include <memory>
#include <string>

#include "storage/kv.h"

namespace chronoq::storage {

struct RocksOptions {
  std::string dir;                              // the data directory; created when missing
  bool sync_writes = false;                     // fsync the WAL before answering (group commit)
  size_t memtable_bytes = size_t{32} << 20;     // all column families together
  size_t block_cache_bytes = size_t{16} << 20;  // data, index and filter blocks
};

class RocksKv final : public KvStore {
 public:
  // Opens the store in options.dir, creating it in a missing or empty directory. A store of an
  // older format (kOldestFormatVersion..) is upgraded in place first (storage/upgrade.h), then
  // marked with kFormatVersion. Refuses, leaving the directory untouched: a non-empty directory
  // that is not a chronoq store, a store of a newer or unknown format version
  // (kInvalidArgument); a directory another server has open (kUnavailable); RocksDB errors
  // (kIOError, kCorruption). A failed upgrade is reported with its error; the store keeps its
  // old format version and the next open tries again.
  static Result<std::unique_ptr<RocksKv>> Open(const RocksOptions& options);
  ~RocksKv() override;

  Result<std::optional<std::string>> Get(Cf cf, std::string_view key) override;
  Result<std::vector<std::optional<std::string>>> MultiGet(
      Cf cf, const std::vector<std::string>& keys) override;
  std::unique_ptr<KvIterator> Scan(Cf cf, std::string lower, std::string upper) override;
  std::optional<Status> Commit(KvBatch batch, UniqueFunction<void(Status)> done) override;
  void SetFailureHandler(UniqueFunction<void(Status)> handler) override;
  void ResumeAfterFailure() override;
  void Close() override;
  std::vector<std::pair<std::string, int64_t>> Stats() override;
  bool WriteBacklog() override;
  // A RocksDB checkpoint (hard links to the table files, copies of the rest) plus the marker,
  // built in `<dir>.partial` and renamed to `dir` once complete (rocks_checkpoint.cc).
  Result<CheckpointInfo> Checkpoint(const std::string& dir) override;

  struct Impl;

 private:
  explicit RocksKv(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace chronoq::storage
