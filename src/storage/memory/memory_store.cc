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
  // Consecutive ops on the same record (a send puts its metadata and its payload) share one key
  // and one lookup.
  struct Run {
    size_t begin;
    size_t end;
    std::string key;
    size_t shard;
  };
  const auto& ops = batch.ops();
  std::vector<Run> runs;
  runs.reserve(ops.size());
  for (size_t i = 0; i < ops.size(); ++i) {
    if (!runs.empty() && ops[i].topic == ops[runs.back().begin].topic &&
        ops[i].msg_id == ops[runs.back().begin].msg_id) {
      runs.back().end = i + 1;
      continue;
    }
    std::string key = Key(ops[i].topic, ops[i].msg_id);
    size_t shard = std::hash<std::string>{}(key) % kShards;
    runs.push_back(Run{i, i + 1, std::move(key), shard});
  }
  // Lock every shard touched, in index order, so that the batch applies atomically.
  std::vector<size_t> shards;
  shards.reserve(runs.size());
  for (const Run& r : runs) shards.push_back(r.shard);
  std::sort(shards.begin(), shards.end());
  shards.erase(std::unique(shards.begin(), shards.end()), shards.end());
  for (size_t s : shards) shards_[s].mu.lock();
  for (Run& run : runs) {
    auto& map = shards_[run.shard].map;
    Entry* e = nullptr;
    for (size_t i = run.begin; i < run.end; ++i) {
      const WriteBatch::Op& op = ops[i];
      if (op.kind == WriteBatch::Kind::kDelete) {
        map.erase(run.key);
        e = nullptr;
        continue;
      }
      if (e == nullptr) e = &map[run.key];
      if (op.kind == WriteBatch::Kind::kPutMeta) {
        core::AssignScalars(e->meta, *op.record);  // topic and msgId live in the key
      } else {
        e->payload = op.record->payload;
      }
    }
  }
  for (size_t s : shards) shards_[s].mu.unlock();
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
