// AppendGroupToWriteBatch: what one group commit writes for several batches.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "storage/codec.h"
#include "storage/rocksdb/rocks_kv_impl.h"

namespace chronoq::storage {
namespace {

// The records of a WriteBatch, in order: "put cf key=value", "delete cf key", "add cf key+n".
class Lister final : public rocksdb::WriteBatch::Handler {
 public:
  std::vector<std::string> records;
  rocksdb::Status PutCF(uint32_t cf, const rocksdb::Slice& k, const rocksdb::Slice& v) override {
    records.push_back("put " + std::to_string(cf) + " " + k.ToString() + "=" + v.ToString());
    return rocksdb::Status::OK();
  }
  rocksdb::Status DeleteCF(uint32_t cf, const rocksdb::Slice& k) override {
    records.push_back("delete " + std::to_string(cf) + " " + k.ToString());
    return rocksdb::Status::OK();
  }
  rocksdb::Status MergeCF(uint32_t cf, const rocksdb::Slice& k, const rocksdb::Slice& v) override {
    records.push_back("add " + std::to_string(cf) + " " + k.ToString() + "+" +
                      std::to_string(DecodeCounter(std::string_view(v.data(), v.size()))));
    return rocksdb::Status::OK();
  }
};

class GroupCommitTest : public ::testing::Test {
 protected:
  GroupCommitTest() {
    for (int i = 0; i < kCfCount; ++i) ids_[static_cast<size_t>(i)] = static_cast<uint32_t>(i + 1);
  }
  std::vector<std::string> Write(const std::vector<KvBatch>& batches) {
    std::vector<const KvBatch*> ptrs;
    for (const KvBatch& b : batches) ptrs.push_back(&b);
    // Reserved as the group commit reserves it: the batch's buffer never grows while filled.
    const size_t reserved = GroupWriteBatchBytes(ptrs);
    WriteBatchRep rep(reserved);
    const size_t capacity = rep.capacity();
    AppendGroupToWriteBatch(ptrs, ids_, &rep);
    EXPECT_EQ(rep.capacity(), capacity);
    rocksdb::WriteBatch wb = rep.Release();
    EXPECT_LE(wb.GetDataSize(), reserved);
    Lister l;
    EXPECT_TRUE(wb.Iterate(&l).ok());
    return l.records;
  }
  static std::string Id(Cf cf) { return std::to_string(static_cast<int>(cf) + 1); }

  CfIds ids_{};
};

TEST_F(GroupCommitTest, AdditionsOfSeveralBatchesToOneCounterAreWrittenOnce) {
  // Three sends due in the same millisecond, from three requests, and one in the next.
  std::vector<KvBatch> batches(3);
  batches[0].Put(Cf::kSent, "a", "A");
  batches[0].Add(Cf::kHist, "t1", 1);
  batches[1].Put(Cf::kSent, "b", "B");
  batches[1].Add(Cf::kHist, "t1", 1);
  batches[2].Put(Cf::kSent, "c", "C");
  batches[2].Add(Cf::kHist, "t1", 1);
  batches[2].Add(Cf::kHist, "t2", 1);
  const std::string s = Id(Cf::kSent);
  const std::string h = Id(Cf::kHist);
  EXPECT_EQ(Write(batches), (std::vector<std::string>{"add " + h + " t1+3", "add " + h + " t2+1",
                                                      "put " + s + " a=A", "put " + s + " b=B",
                                                      "put " + s + " c=C"}));
}

TEST_F(GroupCommitTest, AdditionsThatCancelOutWriteNothing) {
  // A send and the delivery of the same message in one group.
  std::vector<KvBatch> batches(2);
  batches[0].Add(Cf::kHist, "t1", 1);
  batches[1].Add(Cf::kHist, "t1", -1);
  batches[1].Put(Cf::kRecords, "m", "delivered");
  EXPECT_EQ(Write(batches), (std::vector<std::string>{"put " + Id(Cf::kRecords) + " m=delivered"}));
}

TEST_F(GroupCommitTest, AnAdditionStaysBeforeALaterPutOrDeleteOfItsKey) {
  std::vector<KvBatch> batches(3);
  batches[0].Add(Cf::kHist, "t1", 2);
  batches[1].Delete(Cf::kHist, "t1");  // e.g. a purge of the counter
  batches[2].Add(Cf::kHist, "t1", 5);
  batches[2].Put(Cf::kMeta, "seq", "9");
  const std::string h = Id(Cf::kHist);
  EXPECT_EQ(Write(batches),
            (std::vector<std::string>{"put " + Id(Cf::kMeta) + " seq=9", "add " + h + " t1+2",
                                      "delete " + h + " t1", "add " + h + " t1+5"}));
}

TEST_F(GroupCommitTest, TheSameKeyInTwoColumnFamiliesIsTwoCounters) {
  std::vector<KvBatch> batches(2);
  batches[0].Add(Cf::kHist, "k", 1);
  batches[1].Add(Cf::kMeta, "k", 1);
  EXPECT_EQ(Write(batches), (std::vector<std::string>{"add " + Id(Cf::kMeta) + " k+1",
                                                      "add " + Id(Cf::kHist) + " k+1"}));
}

TEST_F(GroupCommitTest, AdditionsOfASingleBatchAreSummedToo) {
  std::vector<KvBatch> batches(1);
  batches[0].Add(Cf::kHist, "t1", 1);
  batches[0].Add(Cf::kHist, "t1", 1);
  EXPECT_EQ(Write(batches), (std::vector<std::string>{"add " + Id(Cf::kHist) + " t1+2"}));
}

TEST_F(GroupCommitTest, OpsAreWrittenInKeyOrderAndOneKeysOpsInTheirOrder) {
  // A pull's vis moves and an ack's, in message order: written sorted per column family, so
  // that each memtable insert starts next to the previous one.
  std::vector<KvBatch> batches(2);
  batches[0].Delete(Cf::kVis, "0-t3");
  batches[0].Put(Cf::kVis, "1-d3", "m3");
  batches[0].Delete(Cf::kVis, "0-t1");
  batches[0].Put(Cf::kVis, "1-d1", "m1");
  batches[1].Put(Cf::kRecords, "m3", "acked");
  batches[1].Delete(Cf::kVis, "1-d3");
  const std::string r = Id(Cf::kRecords);
  const std::string v = Id(Cf::kVis);
  EXPECT_EQ(Write(batches),
            (std::vector<std::string>{"put " + r + " m3=acked", "delete " + v + " 0-t1",
                                      "delete " + v + " 0-t3", "put " + v + " 1-d1=m1",
                                      "put " + v + " 1-d3=m3", "delete " + v + " 1-d3"}));
}

TEST_F(GroupCommitTest, SendsAlreadyInKeyOrderAreWrittenFamilyByFamily) {
  // Successive sends of one topic: each family's keys already ascend from batch to batch (no sort
  // needed), the families interleaved in every batch; one key written twice keeps its order.
  std::vector<KvBatch> batches(3);
  for (int i = 0; i < 3; ++i) {
    batches[i].Put(Cf::kVis, "v" + std::to_string(i), "m");
    batches[i].Put(Cf::kSent, "s" + std::to_string(i), "p");
    batches[i].Add(Cf::kHist, "h", 1);
  }
  batches[2].Delete(Cf::kVis, "v2");
  const std::string v = Id(Cf::kVis);
  const std::string h = Id(Cf::kHist);
  const std::string s = Id(Cf::kSent);
  EXPECT_EQ(Write(batches), (std::vector<std::string>{"put " + v + " v0=m", "put " + v + " v1=m",
                                                      "put " + v + " v2=m", "delete " + v + " v2",
                                                      "add " + h + " h+3", "put " + s + " s0=p",
                                                      "put " + s + " s1=p", "put " + s + " s2=p"}));
}

TEST_F(GroupCommitTest, LongKeysAndValuesFitTheReservation) {
  // Lengths of two- and three-byte varints, and a column family id of its own byte.
  std::vector<KvBatch> batches(2);
  batches[0].Put(Cf::kSent, std::string(200, 'k'), std::string(20000, 'v'));
  batches[0].Add(Cf::kHist, std::string(130, 'h'), -7);
  batches[1].Delete(Cf::kVis, std::string(128, 'd'));
  batches[1].Put(Cf::kMeta, "", "");
  EXPECT_EQ(Write(batches).size(), 4u);
}

}  // namespace
}  // namespace chronoq::storage
