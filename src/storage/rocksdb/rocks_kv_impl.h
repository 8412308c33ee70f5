// Internals of RocksKv shared by its files (RocksDB types allowed here: this folder wraps them).
#pragma once

#include <rocksdb/db.h>
#include <rocksdb/write_batch.h>

#include <condition_variable>
#include <deque>
#include <map>
#include <mutex>
#include <optional>
#include <thread>
#include <vector>

#include "base/thread_annotations.h"
#include "storage/rocksdb/rocks_kv.h"

namespace chronoq::storage {

// rocksdb::Status -> Status (kIOError, kCorruption, kUnavailable, kInternal).
Status FromRocks(const rocksdb::Status& s, std::string_view what);

// Converts a KvBatch to a rocksdb::WriteBatch (appending to `out`).
void AppendToWriteBatch(const KvBatch& batch, const std::vector<rocksdb::ColumnFamilyHandle*>& cfs,
                        rocksdb::WriteBatch* out);

struct RocksKv::Impl {
  RocksOptions options;
  int lock_fd = -1;
  std::unique_ptr<rocksdb::DB> db;
  std::vector<rocksdb::ColumnFamilyHandle*> cfs;  // indexed by Cf
  rocksdb::ColumnFamilyHandle* default_cf = nullptr;

  // --- group commit, group_commit.cc
  struct Queued {
    KvBatch batch;
    UniqueFunction<void(Status)> done;
    uint64_t id;
  };
  struct Overlay {
    std::optional<std::string> value;  // nullopt: deleted
    uint64_t id;                       // the last batch that wrote it
  };
  std::mutex mu;
  std::condition_variable cv;
  std::deque<Queued> queue CQ_GUARDED_BY(mu);
  // Puts and deletes of batches not yet durable, by (cf byte + key): what reads must see.
  std::map<std::string, Overlay, std::less<>> overlay CQ_GUARDED_BY(mu);
  uint64_t next_id CQ_GUARDED_BY(mu) = 1;
  bool failed CQ_GUARDED_BY(mu) = false;
  Status failure CQ_GUARDED_BY(mu);
  bool stop CQ_GUARDED_BY(mu) = false;
  std::mutex handler_mu;  // held while on_failure runs or changes
  UniqueFunction<void(Status)> on_failure CQ_GUARDED_BY(handler_mu);
  std::thread committer;

  // Callbacks of written groups run on their own thread, in write order, so that the committer
  // goes on writing while answers are encoded (and long polls pull again) elsewhere.
  std::mutex done_mu;
  std::condition_variable done_cv;
  std::deque<std::pair<UniqueFunction<void(Status)>, Status>> completions CQ_GUARDED_BY(done_mu);
  bool done_stop CQ_GUARDED_BY(done_mu) = false;
  std::thread completer;

  void StartCommitter();
  // Writes what is queued, runs the last callbacks and stops (the destructor).
  void StopCommitter();
  void CommitterLoop();
  void CompleterLoop();
  void Complete(std::deque<Queued>& group, const Status& s);
  std::optional<Status> Enqueue(KvBatch batch, UniqueFunction<void(Status)> done);
  // The overlay's view of a key: nullopt when the overlay does not know it.
  std::optional<std::optional<std::string>> OverlayGet(Cf cf, std::string_view key);
  // The overlay's entries of [lower, upper) in one column family, in key order.
  std::vector<std::pair<std::string, std::optional<std::string>>> OverlayRange(
      Cf cf, const std::string& lower, const std::string& upper);
  static std::string OverlayKey(Cf cf, std::string_view key);
};

}  // namespace chronoq::storage
