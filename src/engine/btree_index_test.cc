#include "engine/btree_index.h"

#include <gtest/gtest.h>

#include <map>
#include <random>
#include <string>

namespace chronoq::engine {
namespace {

IndexKey K(int64_t t, uint64_t seq) { return IndexKey{FromEpochMs(t), seq}; }

TEST(BTreeIndexTest, EmptyIndexHasNoEntries) {
  BTreeIndex<int> idx;
  EXPECT_TRUE(idx.empty());
  EXPECT_TRUE(idx.begin() == idx.end());
  EXPECT_TRUE(idx.LowerBound(K(0, 0)) == idx.end());
  EXPECT_EQ(idx.Find(K(1, 1)), nullptr);
  EXPECT_FALSE(idx.Erase(K(1, 1)));
  idx.TEST_Check();
}

TEST(BTreeIndexTest, KeysAreUniqueAndOrdered) {
  BTreeIndex<int> idx;
  EXPECT_TRUE(idx.Insert(K(5, 1), 1));
  EXPECT_FALSE(idx.Insert(K(5, 1), 2));
  EXPECT_TRUE(idx.Insert(K(5, 0), 3));
  EXPECT_TRUE(idx.Insert(K(1, 9), 4));
  std::vector<int> order;
  for (auto it = idx.begin(); it != idx.end(); ++it) order.push_back(it.value());
  EXPECT_EQ(order, (std::vector<int>{4, 3, 1}));
  EXPECT_EQ(*idx.Find(K(5, 1)), 1);
}

// Random inserts, erases and range walks against std::map, with the structure checked often.
// Small node capacities force deep trees, splits, merges and root collapses.
template <int kLeaf, int kInner>
void RandomAgainstMap(uint32_t seed, int steps, int key_space) {
  std::mt19937 rng(seed);
  BTreeIndex<std::string, kLeaf, kInner> idx;
  std::map<IndexKey, std::string> model;
  for (int step = 0; step < steps; ++step) {
    IndexKey k = K(static_cast<int64_t>(rng() % key_space), rng() % 3);
    int op = static_cast<int>(rng() % 10);
    if (op < 5) {
      bool inserted = model.emplace(k, std::to_string(step)).second;
      ASSERT_EQ(idx.Insert(k, std::to_string(step)), inserted);
    } else if (op < 8) {
      // Erase mostly from the head, like a queue, or anywhere.
      IndexKey victim = k;
      if (op < 7 && !model.empty()) victim = model.begin()->first;
      ASSERT_EQ(idx.Erase(victim), model.erase(victim) > 0);
    } else {
      auto mit = model.lower_bound(k);
      auto it = idx.LowerBound(k);
      for (int i = 0; i < 5 && mit != model.end(); ++i, ++mit, ++it) {
        ASSERT_FALSE(it == idx.end());
        ASSERT_EQ(it.key(), mit->first);
        ASSERT_EQ(it.value(), mit->second);
      }
      if (mit == model.end()) {
        ASSERT_TRUE(it == idx.end());
      }
      auto ub = idx.UpperBound(k);
      auto mub = model.upper_bound(k);
      ASSERT_EQ(ub == idx.end(), mub == model.end());
      if (mub != model.end()) {
        ASSERT_EQ(ub.key(), mub->first);
      }
    }
    ASSERT_EQ(idx.size(), model.size());
    if (step % 97 == 0) idx.TEST_Check();
  }
  idx.TEST_Check();
  auto mit = model.begin();
  for (auto it = idx.begin(); it != idx.end(); ++it, ++mit) {
    ASSERT_TRUE(mit != model.end());
    ASSERT_EQ(it.key(), mit->first);
  }
  ASSERT_TRUE(mit == model.end());
  // Drain everything: the tree shrinks back to an empty root.
  while (!model.empty()) {
    ASSERT_TRUE(idx.Erase(model.begin()->first));
    model.erase(model.begin());
  }
  idx.TEST_Check();
  EXPECT_TRUE(idx.begin() == idx.end());
}

TEST(BTreeIndexTest, RandomAgainstMapTinyNodes) {
  for (uint32_t seed = 1; seed <= 20; ++seed) RandomAgainstMap<4, 4>(seed, 4000, 500);
}

TEST(BTreeIndexTest, RandomAgainstMapDefaultNodes) {
  for (uint32_t seed = 1; seed <= 5; ++seed) RandomAgainstMap<32, 32>(seed, 30000, 20000);
}

TEST(BTreeIndexTest, QueuePatternKeepsMemoryProportional) {
  // Insert in time order and pop from the head many times: the tree must not keep empty nodes.
  BTreeIndex<int, 4, 4> idx;
  uint64_t seq = 0;
  for (int round = 0; round < 50; ++round) {
    for (int i = 0; i < 200; ++i) idx.Insert(K(round * 1000 + i, seq++), i);
    while (idx.size() > 10) ASSERT_TRUE(idx.Erase(idx.begin().key()));
    idx.TEST_Check();
  }
  EXPECT_EQ(idx.size(), 10u);
}

TEST(BTreeIndexTest, AscendingInsertsFillTheirLeaves) {
  // The far tier's histogram and a lane of messages sent with one delay grow at their end: each
  // leaf must end up full, not half full (memory per entry).
  BTreeIndex<int, 32, 32> idx;
  for (int i = 0; i < 10'000; ++i) ASSERT_TRUE(idx.Insert(K(1000 + i, 0), i));
  idx.TEST_Check();
  EXPECT_EQ(idx.TEST_LeafCount(), (10'000u + 31) / 32);
  // An ascending run inside the key range (below an existing larger key) fills its leaves too.
  ASSERT_TRUE(idx.Insert(K(1'000'000, 0), 0));
  const size_t leaves = idx.TEST_LeafCount();
  for (int i = 0; i < 3'200; ++i) ASSERT_TRUE(idx.Insert(K(500'000 + i, 0), i));
  idx.TEST_Check();
  EXPECT_LE(idx.TEST_LeafCount(), leaves + 3'200 / 32 + 1);
  int expect = 0;
  for (auto it = idx.begin(); it != idx.end() && it.key() < K(500'000, 0); ++it) {
    ASSERT_EQ(it.value(), expect++);
  }
  EXPECT_EQ(expect, 10'000);
}

TEST(BTreeIndexTest, DescendingInsertsStillSplitInHalves) {
  BTreeIndex<int, 32, 32> idx;
  for (int i = 10'000; i > 0; --i) ASSERT_TRUE(idx.Insert(K(i, 0), i));
  idx.TEST_Check();
  EXPECT_EQ(idx.size(), 10'000u);
  EXPECT_LE(idx.TEST_LeafCount(), 10'000u / 16 + 1);
}

}  // namespace
}  // namespace chronoq::engine
