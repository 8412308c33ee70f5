// MemoryStore: a Store kept in process memory (`--storage=memory`, and tests). Nothing survives
// a restart. Sharded hash maps, one mutex per shard.
#pragma once

#include <array>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>

#include "base/mutex.h"
#include "base/thread_annotations.h"
#include "storage/store.h"

namespace chronoq::storage {

class MemoryStore final : public Store {
 public:
  Result<std::optional<core::MessageRecord>> Get(std::string_view topic, std::string_view msg_id,
                                                 bool with_payload) override;
  Status Write(const WriteBatch& batch) override;

  // Number of records held (for tests).
  size_t TEST_size();

 private:
  struct Entry {
    core::MessageRecord meta;  // without payload, topic and msgId (the key holds those)
    std::string payload;
  };
  struct Shard {
    base::Mutex mu;
    std::unordered_map<std::string, Entry> map CQ_GUARDED_BY(mu);
  };
  static std::string Key(std::string_view topic, std::string_view msg_id);
  Shard& ShardFor(const std::string& key);

  // Many shards: less lock contention, and each grows (rehashes) on its own.
  static constexpr size_t kShards = 256;
  std::array<Shard, kShards> shards_;
};

}  // namespace chronoq::storage
