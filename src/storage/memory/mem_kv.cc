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
  Family& f = family(cf);
  base::MutexLock lock(f.mu);
  Table& table = TableOf(f, key);
  auto it = table.find(key);
  if (it == table.end()) return std::optional<std::string>();
  return std::optional<std::string>(it->second.value);
}

void MemKv::IndexInsert(Family& f, Table::iterator it) {
  // Keys often arrive in increasing order (msgIds, visibility and purge times): the hint makes an
  // append one comparison.
  it->second.pos = f.index.emplace_hint(f.index.end(), it->first, &it->second);
}

void MemKv::IndexErase(Family& f, Slot& slot) { f.index.erase(slot.pos); }

void MemKv::EnsureOrdered(Family& f) {
  if (f.ordered) return;
  for (Table& table : f.tables.all()) {
    for (auto it = table.begin(); it != table.end(); ++it) IndexInsert(f, it);
  }
  f.ordered = true;
}

std::vector<std::pair<std::string, std::string>> MemKv::Chunk(Cf cf, const std::string& from,
                                                              bool after, const std::string& upper,
                                                              size_t max) {
  std::vector<std::pair<std::string, std::string>> out;
  Family& f = family(cf);
  base::MutexLock lock(f.mu);
  EnsureOrdered(f);
  const std::string_view start(from), end(upper);
  auto it = after ? f.index.upper_bound(start) : f.index.lower_bound(start);
  for (; it != f.index.end() && out.size() < max; ++it) {
    if (!end.empty() && it->first >= end) break;
    out.emplace_back(it->first, it->second->value);
  }
  return out;
}

std::unique_ptr<KvIterator> MemKv::Scan(Cf cf, std::string lower, std::string upper) {
  return std::make_unique<MemIterator>(this, cf, std::move(lower), std::move(upper));
}

void MemKv::Apply(Family& f, KvBatch::Op& op) {
  Table& table = TableOf(f, op.key);
  switch (op.kind) {
    case KvBatch::Kind::kPut: {
      // try_emplace leaves the key alone when it is already there.
      auto [it, inserted] = table.try_emplace(std::move(op.key));
      it->second.value = std::move(op.value);
      if (inserted && f.ordered) IndexInsert(f, it);
      break;
    }
    case KvBatch::Kind::kDelete: {
      auto it = table.find(op.key);
      if (it == table.end()) break;
      if (f.ordered) IndexErase(f, it->second);
      table.erase(it);
      break;
    }
    case KvBatch::Kind::kAdd: {
      auto it = table.find(op.key);
      if (it == table.end()) {
        if (op.delta == 0) break;  // a zero counter is no counter
        it = table.try_emplace(std::move(op.key)).first;
        it->second.value = EncodeCounter(op.delta);
        if (f.ordered) IndexInsert(f, it);
        break;
      }
      int64_t v = DecodeCounter(it->second.value) + op.delta;
      if (v != 0) {
        it->second.value = EncodeCounter(v);
      } else {
        if (f.ordered) IndexErase(f, it->second);
        table.erase(it);
      }
      break;
    }
  }
}

std::optional<Status> MemKv::Commit(KvBatch batch, UniqueFunction<void(Status)>) {
  std::vector<KvBatch::Op>& ops = batch.mutable_ops();
  unsigned touched = 0;
  for (const KvBatch::Op& op : ops) touched |= 1u << static_cast<unsigned>(op.cf);
  // Lock every family the batch writes, in family order (readers take one lock only), so that
  // the whole batch becomes visible at once.
  LockFamilies(touched);
  for (KvBatch::Op& op : ops) {
    Family& f = family(op.cf);
    f.mu.AssertHeld();
    Apply(f, op);
  }
  UnlockFamilies(touched);
  return Status::Ok();
}

void MemKv::LockFamilies(unsigned touched) {
  for (int i = 0; i < kCfCount; ++i) {
    if (touched & (1u << i)) families_[i].mu.Lock();
  }
}

void MemKv::UnlockFamilies(unsigned touched) {
  for (int i = 0; i < kCfCount; ++i) {
    if (touched & (1u << i)) families_[i].mu.Unlock();
  }
}

std::vector<std::pair<std::string, int64_t>> MemKv::Stats() {
  std::vector<std::pair<std::string, int64_t>> out;
  for (int i = 0; i < kCfCount; ++i) {
    Family& f = families_[i];
    size_t n = 0;
    {
      base::MutexLock lock(f.mu);
      for (const Table& table : f.tables.all()) n += table.size();
    }
    out.emplace_back(std::string("keys_") + std::string(CfName(static_cast<Cf>(i))),
                     static_cast<int64_t>(n));
  }
  return out;
}

}  // namespace chronoq::storage
