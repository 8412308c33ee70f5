// WriteBatchRep: the bytes RocksDB's own WriteBatch builds, record kind by record kind, and a
// batch RocksDB applies as its own.
#include "storage/rocksdb/write_batch_rep.h"

#include <gtest/gtest.h>
#include <rocksdb/db.h>

#include <memory>
#include <string>
#include <vector>

#include "storage/codec.h"
#include "tests/testutil/temp_dir.h"

namespace chronoq::storage {
namespace {

// A column family handle that only has an id (WriteBatch records it; nothing is opened).
class FakeCf final : public rocksdb::ColumnFamilyHandle {
 public:
  explicit FakeCf(uint32_t id) : id_(id), name_("cf" + std::to_string(id)) {}
  const std::string& GetName() const override { return name_; }
  uint32_t GetID() const override { return id_; }
  rocksdb::Status GetDescriptor(rocksdb::ColumnFamilyDescriptor*) override {
    return rocksdb::Status::NotSupported();
  }
  const rocksdb::Comparator* GetComparator() const override { return nullptr; }

 private:
  uint32_t id_;
  std::string name_;
};

enum class Kind { kPut, kDelete, kMerge };
struct Rec {
  Kind kind;
  uint32_t cf;
  std::string key;
  std::string value;
};

// The same records through RocksDB's WriteBatch (the reference) and through WriteBatchRep.
void ExpectSameBytes(const std::vector<Rec>& recs, size_t reserve) {
  rocksdb::WriteBatch reference;
  std::vector<std::unique_ptr<FakeCf>> handles;
  WriteBatchRep rep(reserve);
  for (const Rec& r : recs) {
    handles.push_back(std::make_unique<FakeCf>(r.cf));
    rocksdb::ColumnFamilyHandle* cf = handles.back().get();
    switch (r.kind) {
      case Kind::kPut:
        ASSERT_TRUE(reference.Put(cf, r.key, r.value).ok());
        rep.Put(r.cf, r.key, r.value);
        break;
      case Kind::kDelete:
        ASSERT_TRUE(reference.Delete(cf, r.key).ok());
        rep.Delete(r.cf, r.key);
        break;
      case Kind::kMerge:
        ASSERT_TRUE(reference.Merge(cf, r.key, r.value).ok());
        rep.Merge(r.cf, r.key, r.value);
        break;
    }
  }
  EXPECT_EQ(rep.count(), recs.size());
  const rocksdb::WriteBatch built = rep.Release();
  EXPECT_EQ(built.Data(), reference.Data());
  EXPECT_EQ(built.Count(), reference.Count());
  EXPECT_EQ(built.HasPut(), reference.HasPut());
  EXPECT_EQ(built.HasDelete(), reference.HasDelete());
  EXPECT_EQ(built.HasMerge(), reference.HasMerge());
}

TEST(WriteBatchRepTest, EveryRecordKindIsTheBytesOfWriteBatchsOwn) {
  // Each kind alone, in a column family of its own (the group commit's: ids 1-8) and in the
  // default one (id 0, a tag without the id).
  for (uint32_t cf : {0u, 1u, 8u}) {
    SCOPED_TRACE(cf);
    ExpectSameBytes({{Kind::kPut, cf, "sent-key", "metadata and payload"}}, 64);
    ExpectSameBytes({{Kind::kDelete, cf, "vis-key", ""}}, 64);
    ExpectSameBytes({{Kind::kMerge, cf, "hist-key", EncodeCounter(-3)}}, 64);
  }
  ExpectSameBytes({}, 12);  // the header alone
}

TEST(WriteBatchRepTest, LengthsAndIdsOfEveryVarintSize) {
  // Lengths and ids at the edges of one, two, three and four varint bytes; empty keys and values.
  std::vector<Rec> recs;
  const std::vector<size_t> sizes = {0, 1, 127, 128, 16383, 16384, 2097151, 2097152};
  const std::vector<uint32_t> ids = {0, 1, 127, 128, 16384, 2097152, 268435456, 0xffffffffu};
  for (size_t i = 0; i < sizes.size(); ++i) {
    const uint32_t cf = ids[i];
    recs.push_back({Kind::kPut, cf, std::string(sizes[i], 'k'), std::string(sizes[i], 'v')});
    recs.push_back({Kind::kDelete, cf, std::string(sizes[i], 'd'), ""});
    recs.push_back({Kind::kMerge, cf, std::string(sizes[i], 'm'), std::string(sizes[i], 'o')});
  }
  size_t bound = 12;
  for (const Rec& r : recs) bound += WriteBatchRep::Bound(r.key.size(), r.value.size());
  ExpectSameBytes(recs, bound);
  // And from a reservation too small: the buffer grows.
  ExpectSameBytes(recs, 0);
}

TEST(WriteBatchRepTest, TheBoundReservedIsNeverOutgrown) {
  WriteBatchRep rep(12 + WriteBatchRep::Bound(300, 70000) + WriteBatchRep::Bound(5, 0));
  const size_t capacity = rep.capacity();
  rep.Put(0xffffffffu, std::string(300, 'k'), std::string(70000, 'v'));
  rep.Delete(0xffffffffu, "short");
  EXPECT_EQ(rep.capacity(), capacity);
  EXPECT_EQ(rep.Release().Count(), 2u);
  EXPECT_EQ(rep.count(), 0u);  // released: empty again, its room kept for the next batch
  EXPECT_EQ(rep.size(), 12u);
  EXPECT_EQ(rep.capacity(), capacity);
  rep.Put(1, "k", "v");
  EXPECT_EQ(rep.Release().Count(), 1u);
}

TEST(WriteBatchRepTest, ARoomOfMoreThanAMegabyteIsNotKept) {
  WriteBatchRep rep(0);
  rep.Put(1, "k", std::string(3 << 20, 'v'));
  EXPECT_GE(rep.capacity(), size_t{3} << 20);
  EXPECT_EQ(rep.Release().GetDataSize(), 12 + 1 + 1 + 1 + 1 + 4 + (size_t{3} << 20));
  EXPECT_LT(rep.capacity(), size_t{1} << 20);
}

TEST(WriteBatchRepTest, RocksDbAppliesTheBatch) {
  testutil::TempDir dir;
  rocksdb::Options options;
  options.create_if_missing = true;
  rocksdb::DB* raw = nullptr;
  ASSERT_TRUE(rocksdb::DB::Open(options, dir.path(), &raw).ok());
  std::unique_ptr<rocksdb::DB> db(raw);
  rocksdb::ColumnFamilyHandle* cf = nullptr;
  ASSERT_TRUE(db->CreateColumnFamily(rocksdb::ColumnFamilyOptions(), "c", &cf).ok());
  ASSERT_TRUE(db->Put(rocksdb::WriteOptions(), cf, "gone", "x").ok());

  WriteBatchRep rep(0);
  rep.Put(cf->GetID(), "a", "1");
  rep.Delete(cf->GetID(), "gone");
  rep.Put(0, "b", "2");
  rocksdb::WriteBatch wb = rep.Release();
  ASSERT_TRUE(db->Write(rocksdb::WriteOptions(), &wb).ok());
  std::string v;
  ASSERT_TRUE(db->Get(rocksdb::ReadOptions(), cf, "a", &v).ok());
  EXPECT_EQ(v, "1");
  EXPECT_TRUE(db->Get(rocksdb::ReadOptions(), cf, "gone", &v).IsNotFound());
  ASSERT_TRUE(db->Get(rocksdb::ReadOptions(), "b", &v).ok());
  EXPECT_EQ(v, "2");
  ASSERT_TRUE(db->DestroyColumnFamilyHandle(cf).ok());
}

}  // namespace
}  // namespace chronoq::storage
