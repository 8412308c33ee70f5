#include "storage/rocksdb/ordered_memtable.h"

#include <rocksdb/slice.h>

#include <atomic>
#include <cstdint>
#include <new>

namespace rocksdb {
class Logger;
}  // namespace rocksdb

// An iterator asked for with an arena (GetIterator(arena)) must live in it: RocksDB destroys it in
// place and frees the arena with its owner. Arena is not in RocksDB's public headers; its
// AllocateAligned is an exported member function, called here by its symbol, `this` first (the
// Itanium C++ ABI); a RocksDB that changes it fails to link rather than misbehaving.
char* CqRocksArenaAllocateAligned(
    rocksdb::Arena* arena, size_t bytes, size_t huge_page_size,
    rocksdb::Logger* logger) __asm__("_ZN7rocksdb5Arena15AllocateAlignedEmmPNS_6LoggerE");

namespace chronoq::storage {
namespace {

using rocksdb::MemTableRep;
using rocksdb::Slice;
using Cmp = MemTableRep::KeyComparator;
using Link = std::atomic<const char*>;

constexpr int kMaxHeight = 12;
constexpr uint64_t kBranching = 4;

// A node is its links followed by its entry (what MemTable::Add writes there: the length-prefixed
// internal key, then the value). A node is named by its entry's address; its link at level i is
// the (i+1)-th Link before it. The head is a node of kMaxHeight links and no entry.
inline Link& LinkAt(const char* node, int level) {
  return reinterpret_cast<Link*>(const_cast<char*>(node))[-1 - level];
}
inline const char* NextOf(const char* node, int level) {
  return LinkAt(node, level).load(std::memory_order_acquire);
}

char* AlignUp(char* p) {
  auto v = reinterpret_cast<uintptr_t>(p);
  return reinterpret_cast<char*>((v + alignof(Link) - 1) & ~(uintptr_t{alignof(Link)} - 1));
}

// Where a key goes: at each level below `height`, the last node before it (or the head) and the
// first node after it (or null). prev[height] is the head and next[height] null, as a start for
// searches from the top. Kept between inserts (one per key prefix: MemTable's insert hints, and
// one for inserts without a hint), so that a key inserted right after the previous one of its
// prefix finds its place with one or two comparisons.
struct Splice {
  int height = 0;
  const char* prev[kMaxHeight + 1];
  const char* next[kMaxHeight + 1];
};

class OrderedRep final : public MemTableRep {
 public:
  OrderedRep(const Cmp& cmp, rocksdb::Allocator* allocator) : MemTableRep(allocator), cmp_(cmp) {
    head_ = NewNode(0, kMaxHeight);
    seq_splice_ = NewSplice();
  }

  rocksdb::KeyHandle Allocate(const size_t len, char** buf) override {
    int height = RandomHeight();
    char* node = NewNode(len, height);
    // The height waits in link 0 until Insert links the node (nothing reads it before).
    LinkAt(node, 0).store(reinterpret_cast<const char*>(static_cast<uintptr_t>(height)),
                          std::memory_order_relaxed);
    *buf = node;
    return node;
  }

  void Insert(rocksdb::KeyHandle handle) override {
    Add(static_cast<const char*>(handle), seq_splice_);
  }
  bool InsertKey(rocksdb::KeyHandle handle) override {
    return Add(static_cast<const char*>(handle), seq_splice_);
  }
  void InsertWithHint(rocksdb::KeyHandle handle, void** hint) override {
    InsertKeyWithHint(handle, hint);
  }
  bool InsertKeyWithHint(rocksdb::KeyHandle handle, void** hint) override {
    if (*hint == nullptr) *hint = NewSplice();
    return Add(static_cast<const char*>(handle), static_cast<Splice*>(*hint));
  }

  bool Contains(const char* key) const override {
    Slice k = cmp_.decode_key(key);
    const char* n = SeekGE(k);
    return n != nullptr && cmp_(n, k) == 0;
  }

  // Everything is in the memtable's arena, which it accounts for itself.
  size_t ApproximateMemoryUsage() override { return 0; }

  class Iter final : public MemTableRep::Iterator {
   public:
    explicit Iter(const OrderedRep* rep) : rep_(rep) {}
    bool Valid() const override { return node_ != nullptr; }
    const char* key() const override { return node_; }
    void Next() override { node_ = NextOf(node_, 0); }
    void Prev() override { node_ = rep_->NodeOrNull(rep_->SeekLT(rep_->cmp_.decode_key(node_))); }
    void Seek(const Slice& internal_key, const char* memtable_key) override {
      node_ = rep_->SeekGE(Target(internal_key, memtable_key));
    }
    void SeekForPrev(const Slice& internal_key, const char* memtable_key) override {
      Slice k = Target(internal_key, memtable_key);
      const char* n = rep_->SeekGE(k);
      if (n != nullptr && rep_->cmp_(n, k) == 0) {
        node_ = n;
      } else {
        node_ = rep_->NodeOrNull(rep_->SeekLT(k));
      }
    }
    void SeekToFirst() override { node_ = NextOf(rep_->head_, 0); }
    void SeekToLast() override { node_ = rep_->NodeOrNull(rep_->Last()); }

   private:
    Slice Target(const Slice& internal_key, const char* memtable_key) const {
      return memtable_key != nullptr ? rep_->cmp_.decode_key(memtable_key) : internal_key;
    }
    const OrderedRep* rep_;
    const char* node_ = nullptr;
  };

  MemTableRep::Iterator* GetIterator(rocksdb::Arena* arena) override {
    if (arena == nullptr) return new Iter(this);
    void* mem = CqRocksArenaAllocateAligned(arena, sizeof(Iter), 0, nullptr);
    return new (mem) Iter(this);
  }

 private:
  // A node with room for `len` bytes of entry, its links null.
  char* NewNode(size_t len, int height) {
    char* raw = nullptr;
    MemTableRep::Allocate(len + sizeof(Link) * static_cast<size_t>(height) + alignof(Link) - 1,
                          &raw);
    char* node = AlignUp(raw) + sizeof(Link) * static_cast<size_t>(height);
    for (int i = 0; i < height; ++i) new (&LinkAt(node, i)) Link(nullptr);
    return node;
  }
  Splice* NewSplice() {
    char* raw = nullptr;
    MemTableRep::Allocate(sizeof(Splice) + alignof(Splice) - 1, &raw);
    auto v = reinterpret_cast<uintptr_t>(raw);
    v = (v + alignof(Splice) - 1) & ~(uintptr_t{alignof(Splice)} - 1);
    return new (reinterpret_cast<void*>(v)) Splice();
  }
  int RandomHeight() {
    int h = 1;
    for (;;) {
      rng_ ^= rng_ << 13;
      rng_ ^= rng_ >> 7;
      rng_ ^= rng_ << 17;
      if (h >= kMaxHeight || rng_ % kBranching != 0) return h;
      ++h;
    }
  }

  // Links `node` at its place, found from the splice `s`, which then names the node as the last
  // one before the next key of its prefix. False (nothing linked) when an equal key is present.
  bool Add(const char* node, Splice* s) {
    auto height = static_cast<int>(
        reinterpret_cast<uintptr_t>(LinkAt(node, 0).load(std::memory_order_relaxed)));
    Slice k = cmp_.decode_key(node);
    int max = max_height_.load(std::memory_order_relaxed);
    if (height > max) {
      // Readers that see the new height before the head's links at it simply go down a level.
      max = height;
      max_height_.store(max, std::memory_order_relaxed);
    }
    // Levels below `fix` are searched again, from the level `fix` down; at `fix` and above the
    // splice still holds the key's true neighbours where nothing was linked in between since.
    int fix = max;
    if (s->height >= max) {
      fix = 0;
      while (fix < max) {
        const char* p = s->prev[fix];
        const char* n = s->next[fix];
        if (NextOf(p, fix) != n) {  // something was linked in between: look higher
          ++fix;
          continue;
        }
        if (p != head_) {
          int c = cmp_(p, k);
          if (c == 0) return false;
          if (c > 0) {  // the key lies before the splice
            while (fix < max && s->prev[fix] == p) ++fix;
            continue;
          }
        }
        if (n != nullptr) {
          int c = cmp_(n, k);
          if (c == 0) return false;
          if (c < 0) {  // the key lies after the splice
            while (fix < max && s->next[fix] == n) ++fix;
            continue;
          }
        }
        break;  // p < key < n, and p's next at this level is n: the true neighbours
      }
    }
    if (fix == max) {
      s->prev[max] = head_;
      s->next[max] = nullptr;
      s->height = max;
    }
    // Down from `fix`: each level's search starts at the level above's neighbour before the key
    // and stops at its neighbour after the key (known to be after it, not compared again).
    for (int i = fix - 1; i >= 0; --i) {
      if (!Walk(k, s, i, s->prev[i + 1], s->next[i + 1])) return false;
    }
    for (int i = 0; i < height; ++i) {
      // Above `fix`, a level where something was linked in between since is searched again from
      // the splice's neighbour before the key, still before it (it was at the level below's).
      if (i >= fix && NextOf(s->prev[i], i) != s->next[i] && !Walk(k, s, i, s->prev[i], nullptr)) {
        return false;
      }
      LinkAt(node, i).store(s->next[i], std::memory_order_relaxed);
      LinkAt(s->prev[i], i).store(node, std::memory_order_release);
    }
    for (int i = 0; i < height; ++i) s->prev[i] = node;
    return true;
  }

  // Sets s->prev[level] and s->next[level] by walking level `level` from `from` (before the key)
  // up to `bound` (after it, or null: no bound known). False when an equal key is found.
  bool Walk(const Slice& k, Splice* s, int level, const char* from, const char* bound) const {
    const char* x = from;
    for (;;) {
      const char* n = NextOf(x, level);
      if (n == nullptr || n == bound) {
        s->prev[level] = x;
        s->next[level] = n;
        return true;
      }
      int c = cmp_(n, k);
      if (c >= 0) {
        s->prev[level] = x;
        s->next[level] = n;
        return c != 0;
      }
      x = n;
    }
  }

  // The first node whose key is >= k, or null.
  const char* SeekGE(const Slice& k) const {
    const char* x = head_;
    const char* known_after = nullptr;
    int level = max_height_.load(std::memory_order_relaxed) - 1;
    for (;;) {
      const char* n = NextOf(x, level);
      if (n != nullptr && n != known_after && cmp_(n, k) < 0) {
        x = n;
        continue;
      }
      if (level == 0) return n;
      known_after = n;
      --level;
    }
  }
  // The last node whose key is < k, or the head.
  const char* SeekLT(const Slice& k) const {
    const char* x = head_;
    const char* known_after = nullptr;
    int level = max_height_.load(std::memory_order_relaxed) - 1;
    for (;;) {
      const char* n = NextOf(x, level);
      if (n != nullptr && n != known_after && cmp_(n, k) < 0) {
        x = n;
        continue;
      }
      if (level == 0) return x;
      known_after = n;
      --level;
    }
  }
  // The last node, or the head.
  const char* Last() const {
    const char* x = head_;
    int level = max_height_.load(std::memory_order_relaxed) - 1;
    for (;;) {
      const char* n = NextOf(x, level);
      if (n != nullptr) {
        x = n;
      } else if (level == 0) {
        return x;
      } else {
        --level;
      }
    }
  }
  const char* NodeOrNull(const char* n) const { return n == head_ ? nullptr : n; }

  const Cmp& cmp_;
  const char* head_ = nullptr;
  Splice* seq_splice_ = nullptr;
  std::atomic<int> max_height_{1};
  uint64_t rng_ = 0x9E3779B97F4A7C15ULL;
};

class OrderedMemTableFactory final : public rocksdb::MemTableRepFactory {
 public:
  using MemTableRepFactory::CreateMemTableRep;
  MemTableRep* CreateMemTableRep(const Cmp& cmp, rocksdb::Allocator* allocator,
                                 const rocksdb::SliceTransform* /*prefix*/,
                                 rocksdb::Logger* /*logger*/) override {
    return new OrderedRep(cmp, allocator);
  }
  const char* Name() const override { return "ChronoqOrderedMemTable"; }
};

}  // namespace

std::shared_ptr<rocksdb::MemTableRepFactory> NewOrderedMemTableFactory() {
  return std::make_shared<OrderedMemTableFactory>();
}

}  // namespace chronoq::storage
