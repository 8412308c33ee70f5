#include "storage/memory/mem_kv.h"

#include "storage/codec.h"

namespace chronoq::storage {
namespace {

class MemIterator final : public KvIterator {
 public:
  MemIterator(MemKv* kv, Cf cf, std::string lower, std::string upper)
      : kv_(kv), cf_(cf), upper_(std::move(upper)) {
    Fill(lower, /*after=*/false);
  }
  bool Valid() const override { return pos_ < chunk_.size(); }
  void Next() override {
    if (++pos_ == chunk_.size() && !exhausted_) {
      std::string last = std::move(chunk_.back().first);
      Fill(last, /*after=*/true);
    }
  }
  std::string_view key() const override { return chunk_[pos_].first; }
  std::string_view value() const override { return chunk_[pos_].second; }
  Status status() const override { return Status::Ok(); }

 private:
  static constexpr size_t kChunk = 256;
  void Fill(const std::string& from, bool after) {
    chunk_ = kv_->Chunk(cf_, from, after, upper_, kChunk);
    pos_ = 0;
    exhausted_ = chunk_.size() < kChunk;
  }
  MemKv* kv_;
  Cf cf_;
  std::string upper_;
  std::vector<std::pair<std::string, std::string>> chunk_;
  size_t pos_ = 0;
  bool exhausted_ = false;
};

}  // namespace

Result<std::optional<std::string>> MemKv::Get(Cf cf, std::string_view key) {
  std::lock_guard lock(mu_);
  const Map& m = maps_[static_cast<int>(cf)];
  auto it = m.find(key);
  if (it == m.end()) return std::optional<std::string>();
  return std::optional<std::string>(it->second);
}

std::vector<std::pair<std::string, std::string>> MemKv::Chunk(Cf cf, const std::string& from,
                                                              bool after, const std::string& upper,
                                                              size_t max) {
  std::vector<std::pair<std::string, std::string>> out;
  std::lock_guard lock(mu_);
  const Map& m = maps_[static_cast<int>(cf)];
  auto it = after ? m.upper_bound(from) : m.lower_bound(from);
  for (; it != m.end() && out.size() < max; ++it) {
    if (!upper.empty() && it->first >= upper) break;
    out.emplace_back(it->first, it->second);
  }
  return out;
}

std::unique_ptr<KvIterator> MemKv::Scan(Cf cf, std::string lower, std::string upper) {
  return std::make_unique<MemIterator>(this, cf, std::move(lower), std::move(upper));
}

std::optional<Status> MemKv::Commit(KvBatch batch, UniqueFunction<void(Status)>) {
  std::lock_guard lock(mu_);
  for (KvBatch::Op& op : batch.mutable_ops()) {
    Map& m = maps_[static_cast<int>(op.cf)];
    switch (op.kind) {
      case KvBatch::Kind::kPut:
        m.insert_or_assign(std::move(op.key), std::move(op.value));
        break;
      case KvBatch::Kind::kDelete:
        m.erase(op.key);
        break;
      case KvBatch::Kind::kAdd: {
        auto it = m.find(op.key);
        int64_t v = (it == m.end() ? 0 : DecodeCounter(it->second)) + op.delta;
        if (v == 0) {
          if (it != m.end()) m.erase(it);  // a zero counter is no counter
        } else {
          m.insert_or_assign(std::move(op.key), EncodeCounter(v));
        }
        break;
      }
    }
  }
  return Status::Ok();
}

std::vector<std::pair<std::string, int64_t>> MemKv::Stats() {
  std::lock_guard lock(mu_);
  std::vector<std::pair<std::string, int64_t>> out;
  for (int i = 0; i < kCfCount; ++i) {
    out.emplace_back(std::string("keys_") + std::string(CfName(static_cast<Cf>(i))),
                     static_cast<int64_t>(maps_[i].size()));
  }
  return out;
}

}  // namespace chronoq::storage
