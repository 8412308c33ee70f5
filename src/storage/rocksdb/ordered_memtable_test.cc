// OrderedMemTable against a model: a RocksDB whose memtable never flushes during the test holds
// exactly what a std::map says, through every read a store makes (Get, forward and backward
// iteration, Seek, SeekForPrev), whatever the order of inserts (ascending per prefix with the
// insert hints, random, overwrites and deletes of one key, which the memtable keeps as several
// entries); then the same after a flush (which reads the memtable through an arena iterator).
// And readers see a consistent, sorted memtable while a writer inserts; and reads leave no memory
// behind (RocksDB 7.8's default MemTableRep::Get never deletes its iterator).
#include "storage/rocksdb/ordered_memtable.h"

#include <gtest/gtest.h>
#include <rocksdb/comparator.h>
#include <rocksdb/db.h>
#include <rocksdb/slice_transform.h>

#include <atomic>
#include <cstdio>
#include <map>
#include <memory>
#include <random>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "tests/testutil/temp_dir.h"

namespace chronoq::storage {
namespace {

std::string Key(int prefix, int n) {
  char key[16];
  std::snprintf(key, sizeof(key), "%c%04d", static_cast<char>('a' + prefix), n);
  return key;
}

size_t FirstByte(std::string_view key) { return key.empty() ? 0 : 1; }

// Where the insert hints come from: the memtable's own (by the key's first byte, as a topic is in
// the store), RocksDB's (memtable_insert_with_hint_prefix_extractor, the same prefix), or none.
enum class Hints { kOwn, kRocks, kNone };

std::unique_ptr<rocksdb::DB> OpenDb(const std::string& dir, Hints hints = Hints::kOwn) {
  rocksdb::Options o;
  o.create_if_missing = true;
  o.write_buffer_size = 64 << 20;
  o.allow_concurrent_memtable_write = false;
  o.memtable_factory = NewOrderedMemTableFactory(hints == Hints::kOwn ? FirstByte : nullptr);
  if (hints == Hints::kRocks) {
    o.memtable_insert_with_hint_prefix_extractor.reset(rocksdb::NewFixedPrefixTransform(1));
  }
  rocksdb::DB* db = nullptr;
  rocksdb::Status s = rocksdb::DB::Open(o, dir, &db);
  EXPECT_TRUE(s.ok()) << s.ToString();
  return std::unique_ptr<rocksdb::DB>(db);
}

// Every read of the store against the model.
void ExpectSame(rocksdb::DB* db, const std::map<std::string, std::string>& model,
                std::mt19937_64& rng, const std::string& where) {
  std::unique_ptr<rocksdb::Iterator> it(db->NewIterator(rocksdb::ReadOptions()));
  auto m = model.begin();
  for (it->SeekToFirst(); it->Valid(); it->Next(), ++m) {
    ASSERT_NE(m, model.end()) << where;
    ASSERT_EQ(it->key().ToString(), m->first) << where;
    ASSERT_EQ(it->value().ToString(), m->second) << where;
  }
  ASSERT_EQ(m, model.end()) << where;
  auto r = model.rbegin();
  for (it->SeekToLast(); it->Valid(); it->Prev(), ++r) {
    ASSERT_NE(r, model.rend()) << where;
    ASSERT_EQ(it->key().ToString(), r->first) << where;
  }
  ASSERT_EQ(r, model.rend()) << where;
  for (int i = 0; i < 200; ++i) {
    std::string probe = Key(static_cast<int>(rng() % 4), static_cast<int>(rng() % 6000));
    auto ge = model.lower_bound(probe);
    it->Seek(probe);
    ASSERT_EQ(it->Valid(), ge != model.end()) << where << " seek " << probe;
    if (it->Valid()) {
      ASSERT_EQ(it->key().ToString(), ge->first) << where;
      it->Prev();  // from a Seek, one step back is the last key before the probe
      ASSERT_EQ(it->Valid(), ge != model.begin()) << where;
      if (it->Valid()) {
        ASSERT_EQ(it->key().ToString(), std::prev(ge)->first) << where;
      }
    }
    auto le = model.upper_bound(probe);
    it->SeekForPrev(probe);
    ASSERT_EQ(it->Valid(), le != model.begin()) << where << " seekForPrev " << probe;
    if (it->Valid()) {
      ASSERT_EQ(it->key().ToString(), std::prev(le)->first) << where;
    }
    std::string value;
    rocksdb::Status s = db->Get(rocksdb::ReadOptions(), probe, &value);
    auto found = model.find(probe);
    ASSERT_EQ(s.ok(), found != model.end()) << where << " get " << probe << ": " << s.ToString();
    if (s.ok()) {
      ASSERT_EQ(value, found->second) << where;
    }
  }
}

TEST(OrderedMemTableTest, HoldsWhatAModelHoldsWhateverTheInsertOrder) {
  for (uint64_t seed = 1; seed <= 6; ++seed) {
    testutil::TempDir dir;
    Hints hints = seed % 3 == 0 ? Hints::kNone : seed % 3 == 1 ? Hints::kOwn : Hints::kRocks;
    auto db = OpenDb(dir.path(), hints);
    ASSERT_NE(db, nullptr);
    std::mt19937_64 rng(seed);
    std::map<std::string, std::string> model;
    int next[4] = {0, 0, 0, 0};  // the next ascending key of each prefix
    for (int op = 0; op < 6000; ++op) {
      int p = static_cast<int>(rng() % 4);
      uint64_t kind = rng() % 10;
      // Ascending keys come after every other key of their prefix, so that a prefix's hint sits
      // right before the next prefix's first key, where that prefix's own inserts land too.
      std::string key = kind < 5 ? Key(p, 5000 + next[p]++)
                                 : Key(p, static_cast<int>(rng() % 3000));  // often written before
      if (kind == 9) {
        ASSERT_TRUE(db->Delete(rocksdb::WriteOptions(), key).ok());
        model.erase(key);
      } else {
        std::string value = "v" + std::to_string(op);
        ASSERT_TRUE(db->Put(rocksdb::WriteOptions(), key, value).ok());
        model[key] = value;
      }
      if (op % 1500 == 1499) {
        ExpectSame(db.get(), model, rng,
                   "seed " + std::to_string(seed) + " op " + std::to_string(op));
      }
    }
    ASSERT_TRUE(db->Flush(rocksdb::FlushOptions()).ok());
    ExpectSame(db.get(), model, rng, "after the flush, seed " + std::to_string(seed));
  }
}

TEST(OrderedMemTableTest, ReadersSeeASortedMemTableWhileAWriterInserts) {
  testutil::TempDir dir;
  auto db = OpenDb(dir.path());
  ASSERT_NE(db, nullptr);
  constexpr int kPerPrefix = 5000;
  std::atomic<int> written{0};  // keys 0..written-1 of every prefix are in the store
  std::atomic<bool> failed{false};
  std::vector<std::thread> readers;
  for (int r = 0; r < 3; ++r) {
    readers.emplace_back([&, r] {
      std::mt19937_64 rng(static_cast<uint64_t>(r));
      while (written.load() < kPerPrefix && !failed.load()) {
        int known = written.load();
        std::unique_ptr<rocksdb::Iterator> it(db->NewIterator(rocksdb::ReadOptions()));
        std::string last;
        int count = 0;
        bool backward = r == 1;
        for (backward ? it->SeekToLast() : it->SeekToFirst(); it->Valid();
             backward ? it->Prev() : it->Next()) {
          std::string k = it->key().ToString();
          if (count > 0 && (backward ? k >= last : k <= last)) failed = true;
          last = std::move(k);
          ++count;
        }
        if (count < 4 * known) failed = true;  // every key written before the iterator
        if (known > 0) {
          char key[16];
          std::snprintf(key, sizeof(key), "%c%06d", static_cast<char>('a' + rng() % 4),
                        static_cast<int>(rng() % static_cast<uint64_t>(known)));
          std::string value;
          if (!db->Get(rocksdb::ReadOptions(), key, &value).ok()) failed = true;
        }
      }
    });
  }
  for (int i = 0; i < kPerPrefix && !failed.load(); ++i) {
    for (int p = 0; p < 4; ++p) {  // four prefixes interleaved, each ascending
      char key[16];
      std::snprintf(key, sizeof(key), "%c%06d", static_cast<char>('a' + p), i);
      ASSERT_TRUE(db->Put(rocksdb::WriteOptions(), key, "value").ok());
    }
    written.store(i + 1);
  }
  for (auto& t : readers) t.join();
  EXPECT_FALSE(failed.load());
}

// Point reads and iterators, however many, keep a bounded number of iterators' memory: the
// default MemTableRep::Get's iterator (never deleted by RocksDB) lives in a per-thread slot, and
// an arena iterator's memory is reused once destroyed.
TEST(OrderedMemTableTest, ReadsLeaveNoMemoryBehind) {
  testutil::TempDir dir;
  auto db = OpenDb(dir.path());
  ASSERT_NE(db, nullptr);
  for (int i = 0; i < 1000; ++i) {
    ASSERT_TRUE(db->Put(rocksdb::WriteOptions(), Key(i % 4, i), "v").ok());
  }
  size_t before = OrderedMemTableHeapIterators();
  std::string value;
  for (int i = 0; i < 100000; ++i) {  // hits and misses
    rocksdb::Status s = db->Get(rocksdb::ReadOptions(), Key(i % 4, i % 2000), &value);
    ASSERT_EQ(s.ok(), i % 2000 < 1000) << i;
  }
  std::vector<std::unique_ptr<rocksdb::Iterator>> open;
  for (int i = 0; i < 20000; ++i) {
    std::unique_ptr<rocksdb::Iterator> it(db->NewIterator(rocksdb::ReadOptions()));
    it->Seek(Key(i % 4, i % 1000));
    ASSERT_TRUE(it->Valid());
    if (i % 1000 == 0) open.push_back(std::move(it));  // a few stay open meanwhile
  }
  // Every open iterator holds one; the rest were reused.
  EXPECT_LE(OrderedMemTableHeapIterators(), before + open.size() + 2);
  open.clear();
  ASSERT_TRUE(db->Put(rocksdb::WriteOptions(), Key(0, 5000), "v").ok());
  ASSERT_TRUE(db->Flush(rocksdb::FlushOptions()).ok());  // the flush reads the memtable too
  db.reset();
  // What is left is cached by the threads that freed it, at most 64 each (this one and the
  // flush's).
  EXPECT_LE(OrderedMemTableHeapIterators(), before + 2 * 64);
}

// Iterators made on one thread and destroyed on another, as a store's scans may be.
TEST(OrderedMemTableTest, IteratorsMayBeDestroyedOnAnotherThread) {
  testutil::TempDir dir;
  auto db = OpenDb(dir.path());
  ASSERT_NE(db, nullptr);
  for (int i = 0; i < 100; ++i) ASSERT_TRUE(db->Put(rocksdb::WriteOptions(), Key(1, i), "v").ok());
  size_t before = OrderedMemTableHeapIterators();
  for (int round = 0; round < 50; ++round) {
    std::vector<std::unique_ptr<rocksdb::Iterator>> made;
    for (int i = 0; i < 100; ++i) {
      made.emplace_back(db->NewIterator(rocksdb::ReadOptions()));
      made.back()->SeekToFirst();
      ASSERT_EQ(made.back()->key().ToString(), Key(1, 0));
    }
    std::thread([&] { made.clear(); }).join();  // its cache goes with it
  }
  EXPECT_LE(OrderedMemTableHeapIterators(), before + 64);
}

TEST(OrderedMemTableTest, EntriesOfEverySizeKeepTheirBytesAndAreAccountedFor) {
  // Nodes are carved from chunks of the arena, larger ones allocated alone: entries from a few
  // bytes to several chunks, in random order of sizes, across many chunks.
  testutil::TempDir dir;
  auto db = OpenDb(dir.path());
  ASSERT_NE(db, nullptr);
  std::mt19937_64 rng(7);
  std::map<std::string, std::string> model;
  size_t bytes = 0;
  for (int i = 0; i < 3000; ++i) {
    const size_t size = i % 50 == 0 ? 2000 + rng() % 30000 : rng() % 600;
    std::string value(size, static_cast<char>('a' + i % 26));
    if (!value.empty()) value[size / 2] = static_cast<char>(i);
    std::string key = Key(static_cast<int>(rng() % 4), static_cast<int>(rng() % 6000));
    ASSERT_TRUE(db->Put(rocksdb::WriteOptions(), key, value).ok());
    bytes += key.size() + value.size();
    model[key] = std::move(value);
  }
  // The memtable holds the entries with their links and the chunks' unused ends: less than
  // twice the bytes written (and at least those).
  uint64_t in_memtable = 0;
  ASSERT_TRUE(db->GetIntProperty("rocksdb.cur-size-active-mem-table", &in_memtable));
  EXPECT_GE(in_memtable, bytes);
  EXPECT_LT(in_memtable, 2 * bytes);
  ExpectSame(db.get(), model, rng, "in the memtable");
  ASSERT_TRUE(db->Flush(rocksdb::FlushOptions()).ok());
  ExpectSame(db.get(), model, rng, "after the flush");
}

// Opens a DB in `dir` whose column family orders keys by `comparator`, its memtables made by
// `factory`.
std::unique_ptr<rocksdb::DB> OpenWith(const std::string& dir, const rocksdb::Comparator* comparator,
                                      std::shared_ptr<rocksdb::MemTableRepFactory> factory) {
  rocksdb::Options o;
  o.create_if_missing = true;
  o.comparator = comparator;
  o.allow_concurrent_memtable_write = false;
  o.memtable_factory = std::move(factory);
  rocksdb::DB* raw = nullptr;
  rocksdb::Status s = rocksdb::DB::Open(o, dir, &raw);
  EXPECT_TRUE(s.ok()) << s.ToString();
  return std::unique_ptr<rocksdb::DB>(raw);
}

// Puts 2,000 keys of four prefixes; expects iteration in the reverse order and every key found.
void ExpectReverseOrder(rocksdb::DB* db) {
  std::mt19937_64 rng(3);
  std::set<std::string> model;
  for (int i = 0; i < 2000; ++i) {
    std::string key = Key(static_cast<int>(rng() % 4), static_cast<int>(rng() % 3000));
    ASSERT_TRUE(db->Put(rocksdb::WriteOptions(), key, "v").ok());
    model.insert(key);
  }
  std::unique_ptr<rocksdb::Iterator> it(db->NewIterator(rocksdb::ReadOptions()));
  auto m = model.rbegin();
  for (it->SeekToFirst(); it->Valid(); it->Next(), ++m) {
    ASSERT_NE(m, model.rend());
    ASSERT_EQ(it->key().ToString(), *m);
  }
  EXPECT_EQ(m, model.rend());
  for (const std::string& key : model) {
    std::string value;
    ASSERT_TRUE(db->Get(rocksdb::ReadOptions(), key, &value).ok()) << key;
  }
}

TEST(OrderedMemTableTest, KeepsTheOrderOfAComparatorOtherThanTheBytewiseOne) {
  // chronoq's column families keep RocksDB's bytewise comparator, whose order the memtable
  // computes itself; with any other it asks the comparator (here: the reverse order).
  testutil::TempDir dir;
  std::unique_ptr<rocksdb::DB> db = OpenWith(dir.path(), rocksdb::ReverseBytewiseComparator(),
                                             NewOrderedMemTableFactory(FirstByte));
  ASSERT_NE(db, nullptr);
  ExpectReverseOrder(db.get());
}

TEST(OrderedMemTableTest, AFactoryThatServedTheBytewiseOrderStillAsksAnotherComparator) {
  // One factory serves every column family of every store (rocks_kv.cc's statics): after its
  // memtables of the bytewise order (and one flush: a new memtable), a column family of the
  // reverse order still gets the reverse order.
  auto factory = NewOrderedMemTableFactory(FirstByte);
  testutil::TempDir bytewise_dir;
  std::unique_ptr<rocksdb::DB> bytewise =
      OpenWith(bytewise_dir.path(), rocksdb::BytewiseComparator(), factory);
  ASSERT_NE(bytewise, nullptr);
  ASSERT_TRUE(bytewise->Put(rocksdb::WriteOptions(), Key(0, 1), "v").ok());
  ASSERT_TRUE(bytewise->Flush(rocksdb::FlushOptions()).ok());
  ASSERT_TRUE(bytewise->Put(rocksdb::WriteOptions(), Key(0, 2), "v").ok());
  testutil::TempDir reverse_dir;
  std::unique_ptr<rocksdb::DB> reverse =
      OpenWith(reverse_dir.path(), rocksdb::ReverseBytewiseComparator(), factory);
  ASSERT_NE(reverse, nullptr);
  ExpectReverseOrder(reverse.get());
}

}  // namespace
}  // namespace chronoq::storage
