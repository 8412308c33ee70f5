#include "storage/rocksdb/ordered_memtable.h"

#include <rocksdb/slice.h>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <cstring>
#include <new>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

namespace chronoq::storage {
namespace {

using rocksdb::MemTableRep;
using rocksdb::Slice;
using Cmp = MemTableRep::KeyComparator;
using Link = std::atomic<const char*>;

constexpr int kMaxHeight = 12;
constexpr size_t kChunkBytes = 8192;  // nodes are carved from the arena in chunks of this size
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
// searches from the top. Kept between inserts (one per key prefix: the factory's hint prefix or
// RocksDB's insert hints, and one for keys without a prefix), so that a key inserted right after
// the previous one of its prefix finds its place with one or two comparisons.
struct Splice {
  int height = 0;
  const char* prev[kMaxHeight + 1];
  const char* next[kMaxHeight + 1];
};

// Where iterators live. RocksDB asks for two kinds (MemTableRep::GetIterator):
// - without an arena: its default MemTableRep::Get, which never deletes the iterator (RocksDB
//   7.8), and MemTable's in-place updates and merge counting (options chronoq leaves off), which
//   delete it before returning. Each user is done with it before the next asks on the same
//   thread, so a thread builds all of its own in one slot, and `delete` frees nothing.
// - with an arena: a DB or flush iterator's, destroyed in place (~Iterator) and never freed by
//   the caller; the arena itself (not in RocksDB's public headers) is not used. The memory comes
//   from a per-thread cache of freed iterators (or the heap), and the destructor gives it back to
//   the cache of the thread that destroys it: only that thread reuses it, after the destructor
//   has returned. A cache keeps at most kCachedIterators; the heap gets older ones back.
constexpr size_t kCachedIterators = 64;

std::atomic<size_t> heap_iterators{0};

void* NewIteratorMemory(size_t bytes) {
  heap_iterators.fetch_add(1, std::memory_order_relaxed);
  return ::operator new(bytes);
}
void FreeIteratorMemory(void* p) {
  heap_iterators.fetch_sub(1, std::memory_order_relaxed);
  ::operator delete(p);
}

struct IteratorCache {
  std::vector<void*> free;
  ~IteratorCache() {
    for (void* p : free) FreeIteratorMemory(p);
  }
};

IteratorCache& LocalIteratorCache() {
  thread_local IteratorCache cache;
  return cache;
}

// A memtable entry's internal key: a varint32 length, then the key (the user key, then 8 bytes:
// the sequence number << 8 | the value type, little-endian). RocksDB's format, as
// MemTable::Add writes it and MemTableRep::KeyComparator::decode_key reads it.
Slice EntryKey(const char* entry) {
  const auto* p = reinterpret_cast<const uint8_t*>(entry);
  uint32_t len = 0;
  for (int shift = 0;; shift += 7) {
    const uint8_t b = *p++;
    len |= static_cast<uint32_t>(b & 0x7f) << shift;
    if ((b & 0x80) == 0 || shift == 28) break;
  }
  return Slice(reinterpret_cast<const char*>(p), len);
}

// The memtable's order for a bytewise comparator (MemTable::KeyComparator: user keys by the
// column family's comparator, then sequence numbers descending, the type not compared), without
// its two virtual calls; only the sign is meaningful. Used only where SameOrderAs says that the
// memtable's comparator orders keys so (chronoq's column families keep RocksDB's default).
int BytewiseOrder(const Slice& a, const Slice& b) {
  const size_t an = a.size() - 8;
  const size_t bn = b.size() - 8;
  const int c = std::memcmp(a.data(), b.data(), std::min(an, bn));
  if (c != 0) return c;
  if (an != bn) return an < bn ? -1 : 1;
  uint64_t as = 0;
  uint64_t bs = 0;
  for (int i = 7; i >= 0; --i) {
    as = (as << 8) | static_cast<uint8_t>(a.data()[an + static_cast<size_t>(i)]);
    bs = (bs << 8) | static_cast<uint8_t>(b.data()[bn + static_cast<size_t>(i)]);
  }
  as >>= 8;
  bs >>= 8;
  return as > bs ? -1 : as < bs ? 1 : 0;
}

int Sign(int c) { return c < 0 ? -1 : c > 0 ? 1 : 0; }

// Entries whose user keys differ in their first byte, last byte, length and sign bit, and whose
// sequence numbers differ (with either type), sorted by BytewiseOrder. User keys are 16 bytes or
// more: a comparator with timestamps (8 bytes at the end) reads them without failing, and orders
// them otherwise. Built once per process.
const std::vector<std::string>& ProbeEntries() {
  static const std::vector<std::string> entries = [] {
    std::vector<std::string> out;
    for (const char* user :
         {"a0000000000000000", "a00000000000000001", "a0000000000000001", "b000000000000000",
          "\x80"
          "0000000000000000",
          "a000000000000000\xff"}) {
      for (uint64_t seq : {uint64_t{1}, uint64_t{2}, uint64_t{1} << 40}) {
        for (uint64_t type : {uint64_t{0}, uint64_t{1}}) {
          std::string key(user);
          const uint64_t packed = seq << 8 | type;
          for (int i = 0; i < 8; ++i) key.push_back(static_cast<char>((packed >> (8 * i)) & 0xff));
          std::string entry(1, static_cast<char>(key.size()));  // under 128: a one-byte varint
          out.push_back(entry + key);
        }
      }
    }
    std::stable_sort(out.begin(), out.end(), [](const std::string& a, const std::string& b) {
      return BytewiseOrder(EntryKey(a.data()), EntryKey(b.data())) < 0;
    });
    return out;
  }();
  return entries;
}

// Whether `cmp` orders entries as BytewiseOrder does and decodes them as EntryKey does, tried on
// ProbeEntries(). A comparator is a strict weak order, so agreeing with BytewiseOrder on each
// pair of neighbours in BytewiseOrder's sorted list is agreeing on every pair: one comparison
// per entry, each time a memtable is created (a factory serves every column family, whatever its
// comparator, and the comparator a memtable gets does not say which user comparator it wraps).
bool SameOrderAs(const Cmp& cmp) {
  const std::vector<std::string>& entries = ProbeEntries();
  for (size_t i = 0; i < entries.size(); ++i) {
    const Slice ka = EntryKey(entries[i].data());
    if (cmp.decode_key(entries[i].data()) != ka) return false;
    if (i == 0) continue;
    const Slice kp = EntryKey(entries[i - 1].data());
    if (Sign(cmp(entries[i - 1].data(), ka)) != Sign(BytewiseOrder(kp, ka))) return false;
  }
  return true;
}

class OrderedRep final : public MemTableRep {
 public:
  OrderedRep(const Cmp& cmp, rocksdb::Allocator* allocator, HintPrefixFn hint_prefix)
      : MemTableRep(allocator), cmp_(cmp), bytewise_(SameOrderAs(cmp)), hint_prefix_(hint_prefix) {
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

  void Insert(rocksdb::KeyHandle handle) override { InsertKey(handle); }
  bool InsertKey(rocksdb::KeyHandle handle) override {
    const char* node = static_cast<const char*>(handle);
    return Add(node, SpliceFor(node));
  }
  void InsertWithHint(rocksdb::KeyHandle handle, void** hint) override {
    InsertKeyWithHint(handle, hint);
  }
  bool InsertKeyWithHint(rocksdb::KeyHandle handle, void** hint) override {
    if (*hint == nullptr) *hint = NewSplice();
    return Add(static_cast<const char*>(handle), static_cast<Splice*>(*hint));
  }

  bool Contains(const char* key) const override {
    Slice k = Decode(key);
    const char* n = SeekGE(k);
    return n != nullptr && Compare(n, k) == 0;
  }

  // Everything is in the memtable's arena, which it accounts for itself.
  size_t ApproximateMemoryUsage() override { return 0; }

  class Iter final : public MemTableRep::Iterator {
   public:
    enum class Home { kThreadSlot, kCache };
    Iter(const OrderedRep* rep, Home home) : rep_(rep), home_(home) {}
    ~Iter() override {
      if (home_ != Home::kCache) return;
      IteratorCache& cache = LocalIteratorCache();
      if (cache.free.size() >= kCachedIterators) {
        FreeIteratorMemory(cache.free.back());
        cache.free.pop_back();
      }
      cache.free.push_back(this);
    }
    // The memory is a thread's slot or comes back to a cache (the destructor): nothing to free.
    static void operator delete(void* /*p*/) noexcept {}
    Iter(const Iter&) = delete;
    Iter& operator=(const Iter&) = delete;
    bool Valid() const override { return node_ != nullptr; }
    const char* key() const override { return node_; }
    void Next() override { node_ = NextOf(node_, 0); }
    void Prev() override { node_ = rep_->NodeOrNull(rep_->SeekLT(rep_->Decode(node_))); }
    void Seek(const Slice& internal_key, const char* memtable_key) override {
      node_ = rep_->SeekGE(Target(internal_key, memtable_key));
    }
    void SeekForPrev(const Slice& internal_key, const char* memtable_key) override {
      Slice k = Target(internal_key, memtable_key);
      const char* n = rep_->SeekGE(k);
      if (n != nullptr && rep_->Compare(n, k) == 0) {
        node_ = n;
      } else {
        node_ = rep_->NodeOrNull(rep_->SeekLT(k));
      }
    }
    void SeekToFirst() override { node_ = NextOf(rep_->head_, 0); }
    void SeekToLast() override { node_ = rep_->NodeOrNull(rep_->Last()); }

   private:
    Slice Target(const Slice& internal_key, const char* memtable_key) const {
      return memtable_key != nullptr ? rep_->Decode(memtable_key) : internal_key;
    }
    const OrderedRep* rep_;
    const char* node_ = nullptr;
    Home home_;
  };

  MemTableRep::Iterator* GetIterator(rocksdb::Arena* arena) override {
    if (arena == nullptr) {
      alignas(Iter) thread_local unsigned char slot[sizeof(Iter)];
      return ::new (static_cast<void*>(slot)) Iter(this, Iter::Home::kThreadSlot);
    }
    IteratorCache& cache = LocalIteratorCache();
    void* mem = nullptr;
    if (cache.free.empty()) {
      mem = NewIteratorMemory(sizeof(Iter));
    } else {
      mem = cache.free.back();
      cache.free.pop_back();
    }
    return ::new (mem) Iter(this, Iter::Home::kCache);
  }

 private:
  // A node with room for `len` bytes of entry, its links null.
  char* NewNode(size_t len, int height) {
    char* node = Carve(len + sizeof(Link) * static_cast<size_t>(height)) +
                 sizeof(Link) * static_cast<size_t>(height);
    for (int i = 0; i < height; ++i) new (&LinkAt(node, i)) Link(nullptr);
    return node;
  }
  // `bytes` aligned for links, from the current chunk of the arena. MemTableRep::Allocate takes
  // the memtable's ConcurrentArena lock and updates its per-core shards on every call (about 130
  // instructions); a chunk costs that once for some tens of nodes. A chunk's unused end (less
  // than a node) is lost; larger nodes have an allocation of their own. Only the writer carves.
  char* Carve(size_t bytes) {
    bytes = (bytes + alignof(Link) - 1) & ~(size_t{alignof(Link)} - 1);
    if (bytes > kChunkBytes / 4) {
      char* raw = nullptr;
      MemTableRep::Allocate(bytes + alignof(Link) - 1, &raw);
      return AlignUp(raw);
    }
    if (chunk_left_ < bytes) {
      char* raw = nullptr;
      MemTableRep::Allocate(kChunkBytes + alignof(Link) - 1, &raw);
      chunk_ = AlignUp(raw);
      chunk_left_ = kChunkBytes;
    }
    char* p = chunk_;
    chunk_ += bytes;
    chunk_left_ -= bytes;
    return p;
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

  // The splice of the node's key prefix (hint_prefix_), kept for the memtable's life as RocksDB
  // keeps its insert hints; the last one used is tried first (a group's inserts into one column
  // family come in key order, so mostly one topic after another). seq_splice_ without a prefix.
  Splice* SpliceFor(const char* node) {
    if (hint_prefix_ == nullptr) return seq_splice_;
    Slice ikey = Decode(node);
    std::string_view user(ikey.data(), ikey.size() - 8);  // without the sequence and type
    // A prefix delimits itself (HintPrefixFn): a key that starts with the last one has it.
    if (last_splice_ != nullptr && user.starts_with(last_prefix_)) return last_splice_;
    size_t n = hint_prefix_(user);
    if (n == 0) return seq_splice_;
    std::string_view prefix = user.substr(0, n);
    auto it = splices_.find(prefix);
    if (it == splices_.end()) {
      char* copy = nullptr;
      MemTableRep::Allocate(n, &copy);
      std::memcpy(copy, prefix.data(), n);
      it = splices_.emplace(std::string_view(copy, n), NewSplice()).first;
    }
    last_prefix_ = it->first;
    last_splice_ = it->second;
    return last_splice_;
  }

  // Links `node` at its place, found from the splice `s`, which then names the node as the last
  // one before the next key of its prefix. False (nothing linked) when an equal key is present.
  bool Add(const char* node, Splice* s) {
    auto height = static_cast<int>(
        reinterpret_cast<uintptr_t>(LinkAt(node, 0).load(std::memory_order_relaxed)));
    Slice k = Decode(node);
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
          int c = Compare(p, k);
          if (c == 0) return false;
          if (c > 0) {  // the key lies before the splice
            while (fix < max && s->prev[fix] == p) ++fix;
            continue;
          }
        }
        if (n != nullptr) {
          int c = Compare(n, k);
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
      int c = Compare(n, k);
      if (c >= 0) {
        s->prev[level] = x;
        s->next[level] = n;
        return c != 0;
      }
      x = n;
    }
  }

  // The last node whose key is < k (or the head) and the first whose key is >= k (or null).
  std::pair<const char*, const char*> Around(const Slice& k) const {
    const char* x = head_;
    const char* known_after = nullptr;
    int level = max_height_.load(std::memory_order_relaxed) - 1;
    for (;;) {
      const char* n = NextOf(x, level);
      if (n != nullptr && n != known_after && Compare(n, k) < 0) {
        x = n;
        continue;
      }
      if (level == 0) return {x, n};
      known_after = n;
      --level;
    }
  }
  const char* SeekGE(const Slice& k) const { return Around(k).second; }
  const char* SeekLT(const Slice& k) const { return Around(k).first; }
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

  // The entry's key, and its order against a key: RocksDB's comparator's, computed here when it
  // is the bytewise one (bytewise_), through its virtual calls otherwise.
  Slice Decode(const char* entry) const {
    return bytewise_ ? EntryKey(entry) : cmp_.decode_key(entry);
  }
  int Compare(const char* entry, const Slice& k) const {
    return bytewise_ ? BytewiseOrder(EntryKey(entry), k) : cmp_(entry, k);
  }

  const Cmp& cmp_;
  const bool bytewise_;
  const HintPrefixFn hint_prefix_;
  char* chunk_ = nullptr;  // the rest of the current chunk (Carve)
  size_t chunk_left_ = 0;
  const char* head_ = nullptr;
  Splice* seq_splice_ = nullptr;
  // Per key prefix, its splice; the prefixes' bytes are in the arena. Used by the writer only.
  std::unordered_map<std::string_view, Splice*> splices_;
  std::string_view last_prefix_;
  Splice* last_splice_ = nullptr;
  std::atomic<int> max_height_{1};
  uint64_t rng_ = 0x9E3779B97F4A7C15ULL;
};

class OrderedMemTableFactory final : public rocksdb::MemTableRepFactory {
 public:
  explicit OrderedMemTableFactory(HintPrefixFn hint_prefix) : hint_prefix_(hint_prefix) {}
  using MemTableRepFactory::CreateMemTableRep;
  MemTableRep* CreateMemTableRep(const Cmp& cmp, rocksdb::Allocator* allocator,
                                 const rocksdb::SliceTransform* /*prefix*/,
                                 rocksdb::Logger* /*logger*/) override {
    return new OrderedRep(cmp, allocator, hint_prefix_);
  }
  const char* Name() const override { return "ChronoqOrderedMemTable"; }

 private:
  HintPrefixFn hint_prefix_;
};

}  // namespace

std::shared_ptr<rocksdb::MemTableRepFactory> NewOrderedMemTableFactory(HintPrefixFn hint_prefix) {
  return std::make_shared<OrderedMemTableFactory>(hint_prefix);
}

size_t OrderedMemTableHeapIterators() { return heap_iterators.load(std::memory_order_relaxed); }

}  // namespace chronoq::storage
