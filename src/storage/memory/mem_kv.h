// MemKv: a KvStore in process memory, for `--storage=memory` and tests. Commits apply at once and
// are "durable" for the life of the process. Iterators read in chunks, so they never hold a lock
// between calls and see writes made after they started (like RocksDB iterators without a
// snapshot, keys are visited in order).
//
// Layout. Each column family has its own mutex and a hash map from key to value, so that point
// reads, overwrites and deletes cost O(1) and no key comparisons. The hash map is cut into kParts
// tables by key hash (base::SplitParts, as in base::SplitHashMap, whose interface has no lookup by
// string_view, no iteration and no key addresses): growing one rehashes 1/kParts of the family's
// keys, where a single table rehashed all of them at each doubling, under the family's lock and the
// engine's shard lock (10-40 ms at 40k-80k messages: every send, pull and ack of the shard
// waited; docs/benchmarks.md, "Consume tail"). The bytewise-ordered index that
// scans need (a std::map of string_views of the hash map's keys) is built on the first Scan of
// the family and maintained from then on; each hash entry keeps its position in the index, so a
// delete does not search it. Families never scanned (in the engine: records and payloads) never
// pay for order. A batch locks every family it touches, in family order, for its whole
// application, so a reader never sees part of a batch.
#pragma once

#include <array>
#include <functional>
#include <map>
#include <string>
#include <string_view>
#include <unordered_map>

#include "base/mutex.h"
#include "base/split_hash_map.h"
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
  struct Slot;
  // Bytewise order (char_traits<char> compares as unsigned char, like memcmp).
  using Index = std::map<std::string_view, Slot*, std::less<>>;
  struct Slot {
    std::string value;
    Index::iterator pos;  // the key in the index, when the family is ordered
  };
  struct Hash {
    using is_transparent = void;
    size_t operator()(std::string_view s) const noexcept {
      return std::hash<std::string_view>{}(s);
    }
  };
  // Node-based: keys and slots keep their addresses across rehashing, so the index may point in.
  using Table = std::unordered_map<std::string, Slot, Hash, std::equal_to<>>;
  static constexpr size_t kParts = 256;  // a power of two
  struct Family {
    base::Mutex mu;
    base::SplitParts<Table, kParts> tables CQ_GUARDED_BY(mu);  // a key's: TableOf
    Index index CQ_GUARDED_BY(mu);                             // string_views of the tables' keys
    bool ordered CQ_GUARDED_BY(mu) = false;
  };

  static Table& TableOf(Family& f, std::string_view key) CQ_REQUIRES(f.mu) {
    return f.tables.Of(key);
  }
  static void IndexInsert(Family& f, Table::iterator it) CQ_REQUIRES(f.mu);
  static void IndexErase(Family& f, Slot& slot) CQ_REQUIRES(f.mu);
  static void EnsureOrdered(Family& f) CQ_REQUIRES(f.mu);
  static void Apply(Family& f, KvBatch::Op& op) CQ_REQUIRES(f.mu);
  // Take and release the locks of the families in the bit set `touched`, in family order (the
  // analysis cannot follow a loop of locks: Commit asserts each family's with AssertHeld).
  void LockFamilies(unsigned touched) CQ_NO_THREAD_SAFETY_ANALYSIS;
  void UnlockFamilies(unsigned touched) CQ_NO_THREAD_SAFETY_ANALYSIS;
  Family& family(Cf cf) { return families_[static_cast<size_t>(cf)]; }

  std::array<Family, kCfCount> families_;
};

}  // namespace chronoq::storage
