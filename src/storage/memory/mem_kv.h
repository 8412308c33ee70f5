// MemKv: a KvStore in process memory, for `--storage=memory` and tests. One ordered map per
// column family under one mutex; commits apply at once and are "durable" for the life of the
// process. Iterators read in chunks, so they never hold the lock between calls and see writes
// made after they started (like RocksDB iterators without a snapshot, keys are visited in order).
#pragma once

#include <array>
#include <map>
#include <mutex>
#include <string>

#include "base/thread_annotations.h"
#include "storage/kv.h"

namespace chronoq::storage {

class MemKv final : public KvStore {
 public:
  Result<std::optional<std::string>> Get(Cf cf, std::string_view key) override;
  std::unique_ptr<KvIterator> Scan(Cf cf, std::string lower, std::string upper) override;
  std::optional<Status> Commit(KvBatch batch, UniqueFunction<void(Status)> done) override;
  void SetFailureHandler(UniqueFunction<void(Status)>) override {}
  void ResumeAfterFailure() override {}
  std::vector<std::pair<std::string, int64_t>> Stats() override;

  // Reads up to `max` entries of [from, upper) (from inclusive unless `after`), for iterators.
  std::vector<std::pair<std::string, std::string>> Chunk(Cf cf, const std::string& from, bool after,
                                                         const std::string& upper, size_t max);

 private:
  using Map = std::map<std::string, std::string, std::less<>>;
  std::mutex mu_;
  std::array<Map, kCfCount> maps_ CQ_GUARDED_BY(mu_);
};

}  // namespace chronoq::storage
