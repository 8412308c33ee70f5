#include "storage/memory/memory_store.h"

#include <algorithm>
#include <functional>

namespace chronoq::storage {

std::string MemoryStore::Key(std::string_view topic, std::string_view msg_id) {
  // Topics never hold NUL (control characters are refused), so it separates unambiguously.
  std::string key;
  key.reserve(topic.size() + 1 + msg_id.size());
  key.append(topic);
  key.push_back('\0');
  key.append(msg_id);
  return key;
}

MemoryStore::Shard& MemoryStore::ShardFor(const std::string& key) {
  return shards_[std::hash<std::string>{}(key) % kShards];
}

Result<std::optional<core::MessageRecord>> MemoryStore::Get(std::string_view topic,
                                                            std::string_view msg_id,
                                                            bool with_payload) {
  std::string key = Key(topic, msg_id);
  Shard& shard = ShardFor(key);
  std::lock_guard lock(shard.mu);
  auto it = shard.map.find(key);
  if (it == shard.map.end()) return std::optional<core::MessageRecord>();
  core::MessageRecord out = it->second.meta;
  out.topic = topic;
  out.msg_id = msg_id;
  if (with_payload) out.payload = it->second.payload;
  return std::optional<core::MessageRecord>(std::move(out));
}

Status MemoryStore::Write(const WriteBatch& batch) {
  // Lock every shard the batch touches, in index order, so the batch applies atomically.
  const auto& ops = batch.ops();
  std::vector<std::string> keys;
  keys.reserve(ops.size());
  std::vector<size_t> shard_of(ops.size());
  for (size_t i = 0; i < ops.size(); ++i) {
    keys.push_back(Key(ops[i].record.topic, ops[i].record.msg_id));
    shard_of[i] = std::hash<std::string>{}(keys.back()) % kShards;
  }
  std::vector<size_t> order = shard_of;
  std::sort(order.begin(), order.end());
  order.erase(std::unique(order.begin(), order.end()), order.end());
  for (size_t s : order) shards_[s].mu.lock();
  for (size_t i = 0; i < ops.size(); ++i) {
    auto& map = shards_[shard_of[i]].map;
    const WriteBatch::Op& op = ops[i];
    switch (op.kind) {
      case WriteBatch::Kind::kPutMeta: {
        core::MessageRecord& meta = map[std::move(keys[i])].meta;
        meta = op.record;
        meta.topic = std::string();
        meta.msg_id = std::string();
        break;
      }
      case WriteBatch::Kind::kPutPayload:
        map[std::move(keys[i])].payload = op.payload;
        break;
      case WriteBatch::Kind::kDelete:
        map.erase(keys[i]);
        break;
    }
  }
  for (size_t s : order) shards_[s].mu.unlock();
  return Status::Ok();
}

size_t MemoryStore::TEST_size() {
  size_t n = 0;
  for (auto& s : shards_) {
    std::lock_guard lock(s.mu);
    n += s.map.size();
  }
  return n;
}

}  // namespace chronoq::storage
