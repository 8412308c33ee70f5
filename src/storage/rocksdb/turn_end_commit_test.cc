// Group commit at the end of a loop's turn (base/turn_end.h, group_commit.cc): deferrable batches
// committed on a thread that runs a loop are written by that thread once its turn ends, as one
// group, with their callbacks run there; everything else still goes through the committer.
#include <gtest/gtest.h>

#include <future>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "base/turn_end.h"
#include "storage/rocksdb/rocks_kv.h"
#include "tests/testutil/temp_dir.h"

namespace chronoq::storage {
namespace {

std::unique_ptr<RocksKv> MustOpen(const std::string& dir, bool sync = false) {
  RocksOptions o;
  o.dir = dir;
  o.sync_writes = sync;
  o.memtable_bytes = size_t{8} << 20;
  o.block_cache_bytes = size_t{4} << 20;
  Result<std::unique_ptr<RocksKv>> kv = RocksKv::Open(o);
  EXPECT_TRUE(kv.has_value()) << kv.error().ToString();
  return kv.has_value() ? std::move(*kv) : nullptr;
}

KvBatch Put(std::string key, std::string value, bool deferrable) {
  KvBatch b;
  b.Put(Cf::kSent, std::move(key), std::move(value));
  b.set_deferrable(deferrable);
  return b;
}

std::optional<std::string> MustGet(KvStore& kv, std::string_view key) {
  Result<std::optional<std::string>> r = kv.Get(Cf::kSent, key);
  EXPECT_TRUE(r.has_value()) << r.error().ToString();
  return r.has_value() ? *r : std::nullopt;
}

// The test thread plays an event loop: work for the turn's end is held until EndTurn().
class TurnEndCommitTest : public ::testing::Test {
 protected:
  TurnEndCommitTest() {
    base::SetTurnEndPoster([this](UniqueFunction<void()> fn) { posted_.push_back(std::move(fn)); });
  }
  ~TurnEndCommitTest() override { base::SetTurnEndPoster(nullptr); }
  void EndTurn() {
    std::vector<UniqueFunction<void()>> now;
    now.swap(posted_);
    for (auto& fn : now) fn();
  }
  // A callback that records its outcome and the thread it ran on.
  struct Outcome {
    std::promise<std::pair<Status, std::thread::id>> p;
    std::future<std::pair<Status, std::thread::id>> f = p.get_future();
    UniqueFunction<void(Status)> Callback() {
      return [this](Status s) { p.set_value({std::move(s), std::this_thread::get_id()}); };
    }
    bool Ready() { return f.wait_for(std::chrono::seconds(0)) == std::future_status::ready; }
  };

  testutil::TempDir dir_;
  std::vector<UniqueFunction<void()>> posted_;
};

TEST_F(TurnEndCommitTest, TheBatchesOfOneTurnAreWrittenAtItsEndOnTheLoopsThread) {
  std::unique_ptr<RocksKv> kv = MustOpen(dir_.path());
  Outcome a, b;
  EXPECT_FALSE(kv->Commit(Put("a", "A", true), a.Callback()).has_value());
  EXPECT_FALSE(kv->Commit(Put("b", "B", true), b.Callback()).has_value());
  // One flush for the whole turn; nothing answered before it, but reads see both already.
  EXPECT_EQ(posted_.size(), 1u);
  EXPECT_FALSE(a.Ready());
  EXPECT_FALSE(b.Ready());
  EXPECT_EQ(MustGet(*kv, "a"), "A");
  EXPECT_EQ(MustGet(*kv, "b"), "B");

  EndTurn();
  ASSERT_TRUE(a.Ready());
  ASSERT_TRUE(b.Ready());
  auto [sa, ta] = a.f.get();
  auto [sb, tb] = b.f.get();
  EXPECT_TRUE(sa.ok()) << sa.ToString();
  EXPECT_TRUE(sb.ok()) << sb.ToString();
  EXPECT_EQ(ta, std::this_thread::get_id());
  EXPECT_EQ(tb, std::this_thread::get_id());

  // Answered means written: a new store over the directory holds both.
  kv.reset();
  kv = MustOpen(dir_.path());
  EXPECT_EQ(MustGet(*kv, "a"), "A");
  EXPECT_EQ(MustGet(*kv, "b"), "B");
}

TEST_F(TurnEndCommitTest, ABatchThatIsNotDeferrableGoesToTheCommitterAndTakesTheQueuedOnesAlong) {
  // A thread that blocks on its own write (CommitAndWait) must not wait for its turn's end.
  std::unique_ptr<RocksKv> kv = MustOpen(dir_.path());
  Outcome deferred, direct;
  EXPECT_FALSE(kv->Commit(Put("a", "A", true), deferred.Callback()).has_value());
  EXPECT_FALSE(kv->Commit(Put("b", "B", false), direct.Callback()).has_value());
  auto [sb, tb] = direct.f.get();  // no turn end: the committer wrote it
  EXPECT_TRUE(sb.ok()) << sb.ToString();
  EXPECT_NE(tb, std::this_thread::get_id());
  // The deferrable batch queued before it was written in the same group, or earlier.
  auto [sa, ta] = deferred.f.get();
  EXPECT_TRUE(sa.ok()) << sa.ToString();
  EXPECT_NE(ta, std::this_thread::get_id());
  EndTurn();  // finds nothing left to write
  kv.reset();
  kv = MustOpen(dir_.path());
  EXPECT_EQ(MustGet(*kv, "a"), "A");
  EXPECT_EQ(MustGet(*kv, "b"), "B");
}

TEST_F(TurnEndCommitTest, WithSyncWritesTheCommitterWritesAndTheLoopIsNotHeld) {
  std::unique_ptr<RocksKv> kv = MustOpen(dir_.path(), /*sync=*/true);
  Outcome a;
  EXPECT_FALSE(kv->Commit(Put("a", "A", true), a.Callback()).has_value());
  EXPECT_TRUE(posted_.empty());
  auto [s, t] = a.f.get();
  EXPECT_TRUE(s.ok()) << s.ToString();
  EXPECT_NE(t, std::this_thread::get_id());
}

TEST_F(TurnEndCommitTest, OnAThreadWithoutALoopADeferrableBatchGoesToTheCommitter) {
  std::unique_ptr<RocksKv> kv = MustOpen(dir_.path());
  Outcome a;
  std::thread other([&] {
    EXPECT_FALSE(base::HasTurnEnd());
    EXPECT_FALSE(kv->Commit(Put("a", "A", true), a.Callback()).has_value());
  });
  other.join();
  auto [s, t] = a.f.get();
  EXPECT_TRUE(s.ok()) << s.ToString();
  EXPECT_TRUE(posted_.empty());
}

TEST_F(TurnEndCommitTest, ClosingWritesWhatATurnLeftQueued) {
  // Closing before the turn's end (a server shutting down): the batch is still written and its
  // callback still runs, before Close returns.
  std::unique_ptr<RocksKv> kv = MustOpen(dir_.path());
  Outcome a;
  EXPECT_FALSE(kv->Commit(Put("a", "A", true), a.Callback()).has_value());
  kv->Close();
  ASSERT_TRUE(a.Ready());
  EXPECT_TRUE(a.f.get().first.ok());
  EndTurn();  // finds nothing left to write
  kv.reset();
  kv = MustOpen(dir_.path());
  EXPECT_EQ(MustGet(*kv, "a"), "A");
}

}  // namespace
}  // namespace chronoq::storage
