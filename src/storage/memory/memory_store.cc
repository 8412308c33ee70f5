#include "storage/memory/memory_store.h"

#include <functional>
#include <set>

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
  if (with_payload && it->second.payload) out.payload = *it->second.payload;
  return std::optional<core::MessageRecord>(std::move(out));
}

Status MemoryStore::Write(const WriteBatch& batch) {
  // Group ops by shard; lock every shard touched (in index order) so the batch is atomic.
  std::vector<std::pair<size_t, const WriteBatch::Op*>> ops;
  ops.reserve(batch.ops().size());
  std::set<size_t> touched;
  std::vector<std::string> keys;
  keys.reserve(batch.ops().size());
  for (const auto& op : batch.ops()) {
    keys.push_back(Key(op.record.topic, op.record.msg_id));
    size_t s = std::hash<std::string>{}(keys.back()) % kShards;
    touched.insert(s);
    ops.emplace_back(s, &op);
  }
  std::vector<std::unique_lock<std::mutex>> locks;
  for (size_t s : touched) locks.emplace_back(shards_[s].mu);
  for (size_t i = 0; i < ops.size(); ++i) {
    auto& map = shards_[ops[i].first].map;
    const WriteBatch::Op& op = *ops[i].second;
    switch (op.kind) {
      case WriteBatch::Kind::kPutMeta:
        map[keys[i]].meta = op.record;
        break;
      case WriteBatch::Kind::kPutPayload:
        map[keys[i]].payload = std::make_shared<const std::string>(op.payload);
        break;
      case WriteBatch::Kind::kDelete:
        map.erase(keys[i]);
        break;
    }
  }
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
