#include "storage/rocksdb/rocks_kv.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <future>
#include <map>
#include <mutex>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "base/turn_end.h"
#include "storage/codec.h"
#include "tests/testutil/temp_dir.h"

namespace chronoq::storage {
namespace {

namespace fs = std::filesystem;

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

Status OpenError(const std::string& dir) {
  RocksOptions o;
  o.dir = dir;
  Result<std::unique_ptr<RocksKv>> kv = RocksKv::Open(o);
  return kv.has_value() ? Status::Ok() : kv.error();
}

// Commits and waits for the outcome, whichever way it comes.
Status CommitWait(KvStore& kv, KvBatch b) {
  std::promise<Status> p;
  std::future<Status> f = p.get_future();
  std::optional<Status> now = kv.Commit(std::move(b), [&p](Status s) { p.set_value(s); });
  return now ? *now : f.get();
}

std::optional<std::string> MustGet(KvStore& kv, Cf cf, std::string_view key) {
  Result<std::optional<std::string>> r = kv.Get(cf, key);
  EXPECT_TRUE(r.has_value()) << r.error().ToString();
  return r.has_value() ? *r : std::nullopt;
}

std::vector<std::string> Keys(KvStore& kv, Cf cf, std::string lower = "", std::string upper = "") {
  std::vector<std::string> out;
  auto it = kv.Scan(cf, std::move(lower), std::move(upper));
  for (; it->Valid(); it->Next()) out.emplace_back(it->key());
  EXPECT_TRUE(it->status().ok()) << it->status().ToString();
  return out;
}

std::string ReadFile(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// Every file under dir with its contents, to prove a refused directory was left untouched.
std::map<std::string, std::string> Snapshot(const fs::path& dir) {
  std::map<std::string, std::string> out;
  for (const auto& e : fs::recursive_directory_iterator(dir)) {
    std::string rel = fs::relative(e.path(), dir).string();
    out[rel] = e.is_regular_file() ? ReadFile(e.path()) : "<dir>";
  }
  return out;
}

std::string Key(int i) {
  char buf[16];
  std::snprintf(buf, sizeof(buf), "k%06d", i);
  return buf;
}

TEST(RocksKvTest, OpenCreatesAMissingDirectoryWithAMarker) {
  testutil::TempDir tmp;
  std::string dir = tmp.Sub("a/b/data");
  {
    auto kv = MustOpen(dir);
    ASSERT_NE(kv, nullptr);
    EXPECT_TRUE(fs::is_directory(dir));
    std::string marker = ReadFile(fs::path(dir) / "CHRONOQ");
    EXPECT_NE(marker.find("chronoq store"), std::string::npos) << marker;
    EXPECT_NE(marker.find("format " + std::to_string(kFormatVersion) + "\n"), std::string::npos);
    EXPECT_TRUE(fs::exists(fs::path(dir) / "chronoq.pid"));
  }
  EXPECT_FALSE(fs::exists(fs::path(dir) / "chronoq.pid"));  // removed on close
  EXPECT_TRUE(fs::exists(fs::path(dir) / "CHRONOQ"));
  auto again = MustOpen(dir);  // and it opens again
  EXPECT_NE(again, nullptr);
}

TEST(RocksKvTest, OpenUsesAnEmptyExistingDirectory) {
  testutil::TempDir tmp;
  auto kv = MustOpen(tmp.path());
  ASSERT_NE(kv, nullptr);
  EXPECT_TRUE(fs::exists(fs::path(tmp.path()) / "CHRONOQ"));
}

TEST(RocksKvTest, RefusesANonEmptyDirectoryThatIsNotAStoreAndLeavesItUntouched) {
  testutil::TempDir tmp;
  fs::path dir = tmp.path();
  std::ofstream(dir / "precious.txt") << "do not touch";
  fs::create_directories(dir / "sub");
  std::ofstream(dir / "sub" / "CURRENT") << "MANIFEST-000001\n";  // looks like some database
  std::map<std::string, std::string> before = Snapshot(dir);
  auto before_time = fs::last_write_time(dir / "precious.txt");

  Status s = OpenError(dir.string());
  EXPECT_EQ(s.code(), Errc::kInvalidArgument) << s.ToString();
  EXPECT_NE(s.message().find("not a chronoq store"), std::string::npos) << s.ToString();
  EXPECT_EQ(Snapshot(dir), before);
  EXPECT_EQ(fs::last_write_time(dir / "precious.txt"), before_time);

  // A path that is a file is refused too.
  Status f = OpenError((dir / "precious.txt").string());
  EXPECT_EQ(f.code(), Errc::kInvalidArgument) << f.ToString();
  EXPECT_EQ(Snapshot(dir), before);
}

TEST(RocksKvTest, RefusesAStoreOfAnotherFormatVersion) {
  testutil::TempDir tmp;
  fs::path dir = tmp.path();
  std::ofstream(dir / "CHRONOQ") << "chronoq store\nformat " << kFormatVersion + 1 << "\n";
  std::ofstream(dir / "000001.log") << "old data";
  std::map<std::string, std::string> before = Snapshot(dir);
  Status s = OpenError(dir.string());
  EXPECT_EQ(s.code(), Errc::kInvalidArgument) << s.ToString();
  EXPECT_NE(s.message().find("format version " + std::to_string(kFormatVersion + 1)),
            std::string::npos)
      << s.ToString();
  EXPECT_EQ(Snapshot(dir), before);
}

TEST(RocksKvTest, FinishesACreationCutShortAfterTheMarkerWasCreated) {
  testutil::TempDir tmp;
  fs::path dir = tmp.path();
  std::ofstream(dir / "CHRONOQ").flush();  // created, the crash came before it was written
  ASSERT_EQ(fs::file_size(dir / "CHRONOQ"), 0u);
  {
    RocksOptions o;
    o.dir = dir.string();
    Result<std::unique_ptr<RocksKv>> kv = RocksKv::Open(o);
    ASSERT_TRUE(kv.has_value()) << kv.error().ToString();
  }
  std::ifstream in(dir / "CHRONOQ");
  std::string all((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_NE(all.find("format " + std::to_string(kFormatVersion)), std::string::npos) << all;
}

TEST(RocksKvTest, RefusesAStoreWhoseMarkerHasNoVersion) {
  testutil::TempDir tmp;
  fs::path dir = tmp.path();
  std::ofstream(dir / "CHRONOQ") << "garbage\n";
  std::ofstream(dir / "CURRENT") << "MANIFEST-000001\n";
  std::map<std::string, std::string> before = Snapshot(dir);
  Status s = OpenError(dir.string());
  EXPECT_EQ(s.code(), Errc::kInvalidArgument) << s.ToString();
  EXPECT_NE(s.message().find("no format version"), std::string::npos) << s.ToString();
  EXPECT_EQ(Snapshot(dir), before);
}

TEST(RocksKvTest, SecondOpenOfAnOpenDirectoryIsUnavailable) {
  testutil::TempDir tmp;
  auto first = MustOpen(tmp.path());
  ASSERT_NE(first, nullptr);
  KvBatch b;
  b.Put(Cf::kMeta, "k", "v");
  ASSERT_TRUE(CommitWait(*first, std::move(b)).ok());

  Status s = OpenError(tmp.path());
  EXPECT_EQ(s.code(), Errc::kUnavailable) << s.ToString();
  EXPECT_NE(s.message().find("in use"), std::string::npos) << s.ToString();
  // The refused open disturbed nothing.
  EXPECT_EQ(MustGet(*first, Cf::kMeta, "k"), "v");
  first.reset();
  auto second = MustOpen(tmp.path());  // free again once closed
  ASSERT_NE(second, nullptr);
  EXPECT_EQ(MustGet(*second, Cf::kMeta, "k"), "v");
}

class RocksKvModeTest : public ::testing::TestWithParam<bool> {
 protected:
  bool sync() const { return GetParam(); }
  testutil::TempDir tmp_;
};

TEST_P(RocksKvModeTest, DataSurvivesCloseAndReopen) {
  {
    auto kv = MustOpen(tmp_.path(), sync());
    ASSERT_NE(kv, nullptr);
    KvBatch b;
    for (int i = 0; i < 100; ++i) {
      b.Put(Cf::kRecords, Key(i), "rec" + std::to_string(i));
      b.Put(Cf::kPayloads, Key(i), std::string(1000, static_cast<char>('a' + i % 26)));
    }
    b.Put(Cf::kVis, "v1", "x");
    b.Put(Cf::kRetention, "r1", "y");
    b.Put(Cf::kMeta, "seq", EncodeCounter(42));
    ASSERT_TRUE(CommitWait(*kv, std::move(b)).ok());
    KvBatch d;
    for (int i = 0; i < 100; i += 2) d.Delete(Cf::kRecords, Key(i));
    d.Add(Cf::kHist, "h", 3);
    // The last batch is not waited for: closing writes what is queued.
    std::optional<Status> s = kv->Commit(std::move(d), [](Status) {});
    if (s) {
      ASSERT_TRUE(s->ok());
    }
  }
  auto kv = MustOpen(tmp_.path(), sync());
  ASSERT_NE(kv, nullptr);
  EXPECT_EQ(Keys(*kv, Cf::kRecords).size(), 50u);
  EXPECT_EQ(MustGet(*kv, Cf::kRecords, Key(0)), std::nullopt);
  EXPECT_EQ(MustGet(*kv, Cf::kRecords, Key(1)), "rec1");
  EXPECT_EQ(MustGet(*kv, Cf::kPayloads, Key(7)), std::string(1000, 'h'));
  EXPECT_EQ(MustGet(*kv, Cf::kVis, "v1"), "x");
  EXPECT_EQ(MustGet(*kv, Cf::kRetention, "r1"), "y");
  EXPECT_EQ(DecodeCounter(*MustGet(*kv, Cf::kMeta, "seq")), 42);
  EXPECT_EQ(DecodeCounter(MustGet(*kv, Cf::kHist, "h").value_or("")), 3);
  EXPECT_EQ(MustGet(*kv, Cf::kVis, "r1"), std::nullopt);  // column families stay apart
}

TEST_P(RocksKvModeTest, MergeCountersAddUp) {
  {
    auto kv = MustOpen(tmp_.path(), sync());
    ASSERT_NE(kv, nullptr);
    for (int i = 0; i < 200; ++i) {  // long operand chains (max_successive_merges folds them)
      KvBatch b;
      b.Add(Cf::kHist, "a", 1);
      if (i % 2 == 0) b.Add(Cf::kHist, "b", -1);
      ASSERT_TRUE(CommitWait(*kv, std::move(b)).ok());
    }
    KvBatch z;
    z.Add(Cf::kHist, "z", 5);
    z.Add(Cf::kHist, "z", -5);
    ASSERT_TRUE(CommitWait(*kv, std::move(z)).ok());
    EXPECT_EQ(DecodeCounter(*MustGet(*kv, Cf::kHist, "a")), 200);
    EXPECT_EQ(DecodeCounter(*MustGet(*kv, Cf::kHist, "b")), -100);
    // A counter that sums to zero reads as zero (or as absent, once compaction dropped it).
    EXPECT_EQ(DecodeCounter(MustGet(*kv, Cf::kHist, "z").value_or("")), 0);
  }
  auto kv = MustOpen(tmp_.path(), sync());
  ASSERT_NE(kv, nullptr);
  KvBatch more;
  more.Add(Cf::kHist, "a", -50);
  ASSERT_TRUE(CommitWait(*kv, std::move(more)).ok());
  EXPECT_EQ(DecodeCounter(*MustGet(*kv, Cf::kHist, "a")), 150);
  auto it = kv->Scan(Cf::kHist, "", "");
  std::map<std::string, int64_t> all;
  for (; it->Valid(); it->Next()) all[std::string(it->key())] = DecodeCounter(it->value());
  EXPECT_EQ(all["a"], 150);
  EXPECT_EQ(all["b"], -100);
}

TEST_P(RocksKvModeTest, CommitOutcomeMatchesTheDurabilityMode) {
  auto kv = MustOpen(tmp_.path(), sync());
  ASSERT_NE(kv, nullptr);
  std::promise<Status> p;
  std::future<Status> f = p.get_future();
  KvBatch b;
  b.Put(Cf::kMeta, "a", "1");
  std::optional<Status> now = kv->Commit(std::move(b), [&p](Status s) { p.set_value(s); });
  // With sync_writes the fsync follows: the callback tells. Without, the outcome may come either
  // way, but exactly one way.
  if (sync()) {
    EXPECT_FALSE(now.has_value());
  }
  if (!now.has_value()) {
    ASSERT_EQ(f.wait_for(std::chrono::seconds(30)), std::future_status::ready);
    EXPECT_TRUE(f.get().ok());
  } else {
    EXPECT_TRUE(now->ok());
    EXPECT_EQ(f.wait_for(std::chrono::milliseconds(0)), std::future_status::timeout);  // dropped
  }
  EXPECT_EQ(MustGet(*kv, Cf::kMeta, "a"), "1");
}

TEST_P(RocksKvModeTest, ReadsSeeEveryCommittedBatchAtOnce) {
  // With sync_writes the batches are mostly still queued when read: the overlay must show puts
  // and hide deleted keys, in Get and in bounded scans merged with what is durable.
  auto kv = MustOpen(tmp_.path(), sync());
  ASSERT_NE(kv, nullptr);
  KvBatch base;
  for (int i = 0; i < 50; ++i) base.Put(Cf::kVis, Key(i * 2), "durable");
  ASSERT_TRUE(CommitWait(*kv, std::move(base)).ok());

  std::set<int> want;
  for (int i = 0; i < 50; ++i) want.insert(i * 2);
  std::atomic<int> pending{0};
  for (int round = 0; round < 200; ++round) {
    KvBatch b;
    int add = 100 + round;            // new key beyond the durable ones
    int odd = (round * 7) % 100 | 1;  // an odd key between durable ones
    int del = (round * 13) % 100;     // a key that may or may not exist
    b.Put(Cf::kVis, Key(add), "v" + std::to_string(round));
    b.Put(Cf::kVis, Key(odd), "odd" + std::to_string(round));
    b.Delete(Cf::kVis, Key(del));
    want.insert(add);
    want.insert(odd);
    want.erase(del);
    pending.fetch_add(1);
    std::optional<Status> s = kv->Commit(std::move(b), [&pending](Status st) {
      EXPECT_TRUE(st.ok()) << st.ToString();
      pending.fetch_sub(1);
    });
    if (s) {
      ASSERT_TRUE(s->ok());
      pending.fetch_sub(1);
    }
    ASSERT_EQ(MustGet(*kv, Cf::kVis, Key(add)), "v" + std::to_string(round));
    if (del != odd) {
      ASSERT_EQ(MustGet(*kv, Cf::kVis, Key(odd)), "odd" + std::to_string(round));
    }
    ASSERT_EQ(MustGet(*kv, Cf::kVis, Key(del)), std::nullopt) << round;
    if (round % 10 == 0) {
      std::vector<std::string> want_keys;
      for (int k : want) want_keys.push_back(Key(k));
      ASSERT_EQ(Keys(*kv, Cf::kVis), want_keys) << round;
      // Bounded: [Key(20), Key(60)).
      std::vector<std::string> bounded;
      for (int k : want) {
        if (k >= 20 && k < 60) bounded.push_back(Key(k));
      }
      ASSERT_EQ(Keys(*kv, Cf::kVis, Key(20), Key(60)), bounded) << round;
      ASSERT_TRUE(Keys(*kv, Cf::kRecords).empty());  // other column families see nothing
    }
  }
  kv.reset();  // writes what is queued and runs every callback
  EXPECT_EQ(pending.load(), 0);
  auto reopened = MustOpen(tmp_.path(), sync());
  std::vector<std::string> want_keys;
  for (int k : want) want_keys.push_back(Key(k));
  EXPECT_EQ(Keys(*reopened, Cf::kVis), want_keys);
}

TEST_P(RocksKvModeTest, ConcurrentCommittersAllCompleteInOrder) {
  auto kv = MustOpen(tmp_.path(), sync());
  ASSERT_NE(kv, nullptr);
  constexpr int kThreads = 6;
  constexpr int kPerThread = 300;
  std::mutex order_mu;  // makes the global commit order observable
  int64_t next_order = 0;
  std::vector<std::vector<int>> done_order(kThreads);
  std::vector<std::mutex> done_mu(kThreads);
  std::atomic<int> completed{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < kPerThread; ++i) {
        KvBatch b;
        std::string mine = "thread" + std::to_string(t);
        b.Put(Cf::kRecords, mine, std::to_string(i));
        b.Put(Cf::kPayloads, mine + "/" + Key(i), "x");
        b.Add(Cf::kHist, "total", 1);
        auto done = [&, t, i](Status s) {
          EXPECT_TRUE(s.ok()) << s.ToString();
          {
            std::lock_guard l(done_mu[t]);
            done_order[t].push_back(i);
          }
          completed.fetch_add(1);
        };
        std::lock_guard l(order_mu);
        b.Put(Cf::kMeta, "last", std::to_string(next_order++));
        std::optional<Status> s = kv->Commit(std::move(b), done);
        if (s) {
          EXPECT_TRUE(s->ok());
          done(*s);
        }
        // Read-your-writes, also while other threads commit.
        EXPECT_EQ(MustGet(*kv, Cf::kRecords, mine), std::to_string(i));
      }
    });
  }
  for (auto& th : threads) th.join();
  // Wait for the last callbacks: an empty batch goes after everything.
  ASSERT_TRUE(CommitWait(*kv, KvBatch()).ok());
  EXPECT_EQ(completed.load(), kThreads * kPerThread);
  for (int t = 0; t < kThreads; ++t) {
    ASSERT_EQ(done_order[t].size(), static_cast<size_t>(kPerThread));
    EXPECT_TRUE(std::is_sorted(done_order[t].begin(), done_order[t].end())) << t;
    EXPECT_EQ(MustGet(*kv, Cf::kRecords, "thread" + std::to_string(t)),
              std::to_string(kPerThread - 1));
  }
  EXPECT_EQ(MustGet(*kv, Cf::kMeta, "last"), std::to_string(next_order - 1));
  EXPECT_EQ(Keys(*kv, Cf::kPayloads).size(), static_cast<size_t>(kThreads * kPerThread));
  EXPECT_EQ(DecodeCounter(*MustGet(*kv, Cf::kHist, "total")), kThreads * kPerThread);
}

TEST_P(RocksKvModeTest, StatsAreReported) {
  auto kv = MustOpen(tmp_.path(), sync());
  ASSERT_NE(kv, nullptr);
  std::map<std::string, int64_t> stats;
  for (auto& [k, v] : kv->Stats()) stats[k] = v;
  EXPECT_TRUE(stats.count("memtable_bytes"));
  EXPECT_TRUE(stats.count("write_stopped"));
  EXPECT_EQ(stats["write_stopped"], 0);
  EXPECT_TRUE(stats.count("pending_compaction_bytes"));
  EXPECT_EQ(stats["write_stalls"], 0);
  EXPECT_EQ(stats["writable"], 1);
  EXPECT_GT(stats["data_dir_free_bytes"], 0);
  EXPECT_GE(stats["data_dir_size_bytes"], stats["data_dir_free_bytes"]);
}

TEST(RocksKvStatsTest, TheBlockCacheIsCountedOnceAlthoughEveryColumnFamilyUsesIt) {
  // Enough in every column family that reading it back fills the 4 MiB cache, which the eight
  // families share: the figure is the cache's usage, at most about its capacity (not one count
  // of the shared cache per family, 8 times that).
  testutil::TempDir tmp;
  const std::string value(1000, 'v');
  {
    auto kv = MustOpen(tmp.path());
    ASSERT_NE(kv, nullptr);
    for (int part = 0; part < 8; ++part) {
      KvBatch b;
      for (int i = 0; i < 1000; ++i) {
        for (int c = 0; c < kCfCount; ++c) {
          if (static_cast<Cf>(c) != Cf::kHist)
            b.Put(static_cast<Cf>(c), Key(part * 1000 + i), value);
        }
      }
      ASSERT_TRUE(CommitWait(*kv, std::move(b)).ok());
    }
  }
  auto kv = MustOpen(tmp.path());  // the memtables were flushed at the reopen: reads use the cache
  ASSERT_NE(kv, nullptr);
  for (int c = 0; c < kCfCount; ++c) {
    if (static_cast<Cf>(c) == Cf::kHist) continue;
    for (int i = 0; i < 8000; i += 7) ASSERT_TRUE(MustGet(*kv, static_cast<Cf>(c), Key(i)));
  }
  std::map<std::string, int64_t> stats;
  for (auto& [k, v] : kv->Stats()) stats[k] = v;
  EXPECT_GT(stats["block_cache_bytes"], 1 << 20);
  EXPECT_LE(stats["block_cache_bytes"], (4 << 20) + (1 << 20));
}

INSTANTIATE_TEST_SUITE_P(Durability, RocksKvModeTest, ::testing::Values(false, true),
                         [](const ::testing::TestParamInfo<bool>& i) {
                           return i.param ? std::string("SyncWrites") : std::string("NoSync");
                         });

// Group commit at the end of a loop's turn (base/turn_end.h, group_commit.cc): deferrable batches
// committed on a thread that runs a loop are written by that thread once its turn ends, as one
// group, with their callbacks run there; everything else still goes through the committer.
KvBatch PutSent(std::string key, std::string value, bool deferrable) {
  KvBatch b;
  b.Put(Cf::kSent, std::move(key), std::move(value));
  b.set_deferrable(deferrable);
  return b;
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
  // A committer that finds batches queued (its thread started after they were, or it had just
  // written when the turn ended) writes them itself, which is correct too: so the turn is tried up
  // to three times, and one of them must be written on the loop's thread at the turn's end.
  bool on_loop_thread = false;
  for (int attempt = 0; attempt < 3 && !on_loop_thread; ++attempt) {
    const std::string ka = "a" + std::to_string(attempt), kb = "b" + std::to_string(attempt);
    Outcome a, b;
    EXPECT_FALSE(kv->Commit(PutSent(ka, "A", true), a.Callback()).has_value());
    EXPECT_FALSE(kv->Commit(PutSent(kb, "B", true), b.Callback()).has_value());
    // One flush for the whole turn; reads see both already.
    EXPECT_EQ(posted_.size(), 1u);
    EXPECT_EQ(MustGet(*kv, Cf::kSent, ka), "A");
    EXPECT_EQ(MustGet(*kv, Cf::kSent, kb), "B");
    const bool early = a.Ready() || b.Ready();
    EndTurn();
    const bool answered_at_turn_end = !early && a.Ready() && b.Ready();
    auto [sa, ta] = a.f.get();
    auto [sb, tb] = b.f.get();
    EXPECT_TRUE(sa.ok()) << sa.ToString();
    EXPECT_TRUE(sb.ok()) << sb.ToString();
    on_loop_thread = answered_at_turn_end && ta == std::this_thread::get_id() &&
                     tb == std::this_thread::get_id();
  }
  EXPECT_TRUE(on_loop_thread) << "no turn's batches were written by the loop's thread at its end";

  // Answered means written: a new store over the directory holds them.
  kv.reset();
  kv = MustOpen(dir_.path());
  EXPECT_EQ(MustGet(*kv, Cf::kSent, "a0"), "A");
  EXPECT_EQ(MustGet(*kv, Cf::kSent, "b0"), "B");
}

TEST_F(TurnEndCommitTest, ABatchThatIsNotDeferrableGoesToTheCommitterAndTakesTheQueuedOnesAlong) {
  // A thread that blocks on its own write (CommitAndWait) must not wait for its turn's end.
  std::unique_ptr<RocksKv> kv = MustOpen(dir_.path());
  Outcome deferred, direct;
  EXPECT_FALSE(kv->Commit(PutSent("a", "A", true), deferred.Callback()).has_value());
  EXPECT_FALSE(kv->Commit(PutSent("b", "B", false), direct.Callback()).has_value());
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
  EXPECT_EQ(MustGet(*kv, Cf::kSent, "a"), "A");
  EXPECT_EQ(MustGet(*kv, Cf::kSent, "b"), "B");
}

TEST_F(TurnEndCommitTest, WithSyncWritesTheCommitterWritesAndTheLoopIsNotHeld) {
  std::unique_ptr<RocksKv> kv = MustOpen(dir_.path(), /*sync=*/true);
  Outcome a;
  EXPECT_FALSE(kv->Commit(PutSent("a", "A", true), a.Callback()).has_value());
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
    EXPECT_FALSE(kv->Commit(PutSent("a", "A", true), a.Callback()).has_value());
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
  EXPECT_FALSE(kv->Commit(PutSent("a", "A", true), a.Callback()).has_value());
  kv->Close();
  ASSERT_TRUE(a.Ready());
  EXPECT_TRUE(a.f.get().first.ok());
  EndTurn();  // finds nothing left to write
  kv.reset();
  kv = MustOpen(dir_.path());
  EXPECT_EQ(MustGet(*kv, Cf::kSent, "a"), "A");
}

}  // namespace
}  // namespace chronoq::storage
