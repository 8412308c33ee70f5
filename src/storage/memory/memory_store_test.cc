#include "storage/memory/memory_store.h"

#include <gtest/gtest.h>

#include <string>
#include <thread>
#include <vector>

namespace chronoq::storage {
namespace {

using namespace std::string_literals;

core::MessageRecord Rec(const std::string& topic, const std::string& id,
                        const std::string& payload) {
  core::MessageRecord r;
  r.topic = topic;
  r.msg_id = id;
  r.payload = payload;
  r.produce_time = FromEpochMs(1);
  r.trigger_time = FromEpochMs(2);
  r.expire_time = FromEpochMs(3);
  r.visible_at = FromEpochMs(2);
  r.max_retry = 4;
  r.seq = 9;
  return r;
}

TEST(MemoryStoreTest, GetOfUnknownIsEmpty) {
  MemoryStore s;
  Result<std::optional<core::MessageRecord>> r = s.Get("t", "x", true);
  ASSERT_TRUE(r.has_value());
  EXPECT_FALSE(r->has_value());
}

TEST(MemoryStoreTest, MetaAndPayloadStoredApart) {
  MemoryStore s;
  core::MessageRecord r = Rec("t", "a", "body");
  WriteBatch b;
  b.PutMeta(r);
  b.PutPayload(r);
  ASSERT_TRUE(s.Write(b).ok());
  auto with = s.Get("t", "a", true);
  ASSERT_TRUE(with.has_value() && with->has_value());
  EXPECT_EQ(**with, r);
  auto without = s.Get("t", "a", false);
  EXPECT_EQ((*without)->payload, "");
  core::MessageRecord meta_only = r;
  meta_only.payload.clear();
  EXPECT_EQ(**without, meta_only);

  // A later meta update (payload ignored) keeps the stored payload.
  r.retry = 3;
  r.payload = "ignored";
  WriteBatch upd;
  upd.PutMeta(r);
  ASSERT_TRUE(s.Write(upd).ok());
  auto after = s.Get("t", "a", true);
  EXPECT_EQ((*after)->retry, 3);
  EXPECT_EQ((*after)->payload, "body");
}

TEST(MemoryStoreTest, PayloadIsByteExact) {
  MemoryStore s;
  std::string payload = "a\0b\xE4\xB8\xAD"s + std::string(1 << 20, 'z');
  core::MessageRecord r = Rec("t", "a", payload);
  WriteBatch b;
  b.PutMeta(r);
  b.PutPayload(r);
  ASSERT_TRUE(s.Write(b).ok());
  EXPECT_EQ((*s.Get("t", "a", true))->payload, payload);
}

TEST(MemoryStoreTest, DeleteRemovesRecordAndPayload) {
  MemoryStore s;
  core::MessageRecord r = Rec("t", "a", "body");
  WriteBatch b;
  b.PutMeta(r);
  b.PutPayload(r);
  ASSERT_TRUE(s.Write(b).ok());
  WriteBatch d;
  d.Delete("t", "a");
  ASSERT_TRUE(s.Write(d).ok());
  EXPECT_FALSE(s.Get("t", "a", true)->has_value());
  EXPECT_EQ(s.TEST_size(), 0u);
  ASSERT_TRUE(s.Write(d).ok());  // deleting again is fine
}

TEST(MemoryStoreTest, KeysDoNotCollideAcrossTopics) {
  MemoryStore s;
  WriteBatch b;
  std::vector<core::MessageRecord> recs;  // a batch refers to its records: keep them alive
  for (auto [t, id] : {std::pair{"ab", "c"}, std::pair{"a", "bc"}, std::pair{"abc", ""}}) {
    recs.push_back(Rec(t, id, std::string(t) + "|" + id));
  }
  for (const core::MessageRecord& r : recs) {
    b.PutMeta(r);
    b.PutPayload(r);
  }
  ASSERT_TRUE(s.Write(b).ok());
  EXPECT_EQ(s.TEST_size(), 3u);
  EXPECT_EQ((*s.Get("ab", "c", true))->payload, "ab|c");
  EXPECT_EQ((*s.Get("a", "bc", true))->payload, "a|bc");
  EXPECT_FALSE(s.Get("a", "b", true)->has_value());
}

TEST(MemoryStoreTest, BatchAppliesInOrder) {
  MemoryStore s;
  core::MessageRecord r = Rec("t", "a", "one");
  core::MessageRecord r2 = Rec("t", "a", "two");
  WriteBatch b;
  b.PutMeta(r);
  b.PutPayload(r);
  b.Delete("t", "a");
  b.PutMeta(r2);
  b.PutPayload(r2);
  EXPECT_EQ(b.ops().size(), 5u);
  ASSERT_TRUE(s.Write(b).ok());
  EXPECT_EQ((*s.Get("t", "a", true))->payload, "two");
  EXPECT_TRUE(WriteBatch().empty());
}

TEST(MemoryStoreTest, ConcurrentWritersAndReaders) {
  MemoryStore s;
  std::vector<std::thread> threads;
  for (int w = 0; w < 4; ++w) {
    threads.emplace_back([&s, w] {
      for (int i = 0; i < 500; ++i) {
        core::MessageRecord r = Rec("t" + std::to_string(w), std::to_string(i), "p");
        WriteBatch b;
        b.PutMeta(r);
        b.PutPayload(r);
        ASSERT_TRUE(s.Write(b).ok());
        ASSERT_TRUE(s.Get(r.topic, r.msg_id, true)->has_value());
      }
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(s.TEST_size(), 2000u);
}

}  // namespace
}  // namespace chronoq::storage
