// Storage failures: a failed write changes nothing visible (the engine rebuilds what it holds from
// the store) and the engine keeps serving. Run over MemKv (failures reported at once) and RocksKv
// with and without sync_writes (group commit: failures reported later, as a failed group write).
#include <gtest/gtest.h>

#include <map>
#include <memory>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "base/clock.h"
#include "base/scheduler.h"
#include "engine/engine.h"
#include "storage/memory/mem_kv.h"
#include "storage/message_store.h"
#include "storage/rocksdb/rocks_kv.h"
#include "tests/testutil/faulty_kv.h"
#include "tests/testutil/sync_backend.h"
#include "tests/testutil/temp_dir.h"

namespace chronoq::engine {
namespace {

using core::MsgStatus;

const TimePoint kT0 = FromEpochMs(1'700'000'040'000);
constexpr int64_t kMin = 60'000;

enum class Backend { kMemory, kRocks, kRocksSync };

class EngineFailureTest : public ::testing::TestWithParam<Backend> {
 protected:
  void SetUp() override {
    if (GetParam() == Backend::kMemory) {
      mem_ = std::make_unique<storage::MemKv>();
      inner_ = mem_.get();
    } else {
      storage::RocksOptions o;
      o.dir = tmp_.path();
      o.sync_writes = GetParam() == Backend::kRocksSync;
      o.memtable_bytes = size_t{8} << 20;
      Result<std::unique_ptr<storage::RocksKv>> kv = storage::RocksKv::Open(o);
      ASSERT_TRUE(kv.has_value()) << kv.error().ToString();
      rocks_ = std::move(*kv);
      inner_ = rocks_.get();
    }
    faulty_ = std::make_unique<testutil::FaultyKv>(inner_);
    store_ = std::make_unique<storage::MessageStore>(faulty_.get(), "ns");
    engine_ = std::make_unique<Engine>(Options(), store_.get(), &clock_, &sched_);
    ASSERT_TRUE(engine_->Recover().ok());
    sched_.RunDue();
    b_ = std::make_unique<testutil::SyncBackend>(engine_.get());
  }
  void TearDown() override {
    if (faulty_) Settle();
    b_.reset();
    engine_.reset();
    store_.reset();
    faulty_.reset();
    rocks_.reset();
  }
  static EngineOptions Options() {
    EngineOptions o;
    o.memory_horizon = Millis(10'000);
    o.load_chunk = 3;
    o.shards = 2;
    return o;
  }
  // Lets a failure reported later arrive and the engine's rebuild run.
  void Settle() {
    faulty_->WaitIdle();
    sched_.RunDue();
  }
  void FailNextCommit() { faulty_->FailNextCommits(1); }

  core::Message MustSend(const std::string& topic, const std::string& id, int64_t delay_ms,
                         int64_t ttl_ms = 3'600'000, int32_t max_retry = 10,
                         std::string payload = {}) {
    if (payload.empty()) payload = "body-" + id;
    Result<core::Message> r =
        b_->Send(topic, id, payload, Millis(delay_ms), Millis(ttl_ms), max_retry);
    EXPECT_TRUE(r.has_value()) << r.error().ToString();
    known_.insert({topic, id});
    return r.has_value() ? *r : core::Message{};
  }
  std::vector<core::Message> MustPull(const std::string& topic, int32_t batch = 1,
                                      int64_t ack_ms = 30'000) {
    Result<std::vector<core::Message>> r = b_->Pull(topic, batch, Millis(ack_ms));
    EXPECT_TRUE(r.has_value()) << r.error().ToString();
    return r.has_value() ? *r : std::vector<core::Message>{};
  }
  MsgStatus StatusOf(const std::string& topic, const std::string& id) {
    Result<core::Message> r = b_->Get(topic, id);
    EXPECT_TRUE(r.has_value()) << topic << "/" << id << ": " << r.error().ToString();
    return r.has_value() ? r->status : MsgStatus::kWaiting;
  }
  std::optional<core::MessageRecord> Stored(const std::string& topic, const std::string& id) {
    Result<std::optional<core::MessageRecord>> r = store_->GetRecord(topic, id, false);
    EXPECT_TRUE(r.has_value());
    return r.has_value() ? *r : std::nullopt;
  }

  // What this engine answers equals what an engine freshly recovered from the store answers:
  // memory holds nothing the store does not.
  void ExpectConsistentWithStore() {
    testutil::DiscardWritesKv view(inner_);
    storage::MessageStore store(&view, "ns");
    base::ManualScheduler sched(&clock_);  // never advanced
    Engine fresh(Options(), &store, &clock_, &sched);
    ASSERT_TRUE(fresh.Recover().ok());
    testutil::SyncBackend b(&fresh);
    std::set<std::string> topics;
    for (const auto& [topic, id] : known_) {
      topics.insert(topic);
      Result<core::Message> mine = b_->Get(topic, id);
      Result<core::Message> theirs = b.Get(topic, id);
      ASSERT_EQ(mine.has_value(), theirs.has_value()) << topic << "/" << id;
      if (!mine.has_value()) continue;
      EXPECT_EQ(mine->status, theirs->status) << topic << "/" << id;
      EXPECT_EQ(mine->record, theirs->record) << topic << "/" << id;
    }
    for (const std::string& topic : topics) {
      EXPECT_EQ(*b_->Info(topic), *b.Info(topic)) << topic;
    }
  }

  testutil::TempDir tmp_;
  base::ManualClock clock_{kT0};
  base::ManualScheduler sched_{&clock_};
  std::unique_ptr<storage::MemKv> mem_;
  std::unique_ptr<storage::RocksKv> rocks_;
  storage::KvStore* inner_ = nullptr;
  std::unique_ptr<testutil::FaultyKv> faulty_;
  std::unique_ptr<storage::MessageStore> store_;
  std::unique_ptr<Engine> engine_;
  std::unique_ptr<testutil::SyncBackend> b_;
  std::set<std::pair<std::string, std::string>> known_;
};

TEST_P(EngineFailureTest, FailedSendStoresNothing) {
  FailNextCommit();
  Result<core::Message> r = b_->Send("t", "a", "p", Millis(0));
  ASSERT_FALSE(r.has_value());
  EXPECT_EQ(r.error().code(), Errc::kIOError);
  Settle();
  EXPECT_EQ(b_->Get("t", "a").error().code(), Errc::kNotFound);
  EXPECT_EQ(b_->Info("t")->ready, 0);
  EXPECT_TRUE(MustPull("t").empty());
  // A far one (beyond the horizon) likewise.
  FailNextCommit();
  EXPECT_FALSE(b_->Send("t", "far", "p", Millis(5 * kMin)).has_value());
  Settle();
  EXPECT_EQ(b_->Get("t", "far").error().code(), Errc::kNotFound);
  EXPECT_EQ(b_->Info("t")->waiting, 0);
  EXPECT_EQ(engine_->TEST_Tiers("t").far, 0);
  MustSend("t", "a", 0);  // works again
  MustSend("t", "far", 5 * kMin);
  EXPECT_EQ(b_->Info("t")->ready, 1);
  EXPECT_EQ(b_->Info("t")->waiting, 1);
  ExpectConsistentWithStore();
}

TEST_P(EngineFailureTest, FailedPullDeliversNothing) {
  MustSend("t", "a", 0);
  FailNextCommit();
  Result<std::vector<core::Message>> r = b_->Pull("t", 10, Millis(30'000));
  ASSERT_FALSE(r.has_value());
  EXPECT_EQ(r.error().code(), Errc::kIOError);
  Settle();
  EXPECT_EQ(StatusOf("t", "a"), MsgStatus::kReady);
  EXPECT_EQ(b_->Info("t")->ready, 1);
  ExpectConsistentWithStore();
  ASSERT_EQ(MustPull("t").size(), 1u);
  EXPECT_EQ(StatusOf("t", "a"), MsgStatus::kConsuming);
  EXPECT_EQ(b_->Get("t", "a")->record.retry, 1);
}

// Larger than a held record keeps (engine::kHeldPayloadBytes): a pull reads it from the store.
const std::string kStoredPayload(kHeldPayloadBytes + 1, 'p');

TEST_P(EngineFailureTest, FailedReadDuringPullDeliversNothing) {
  MustSend("t", "a", 0, 3'600'000, 10, kStoredPayload);
  faulty_->FailNextReads(1);
  Result<std::vector<core::Message>> r = b_->Pull("t", 10, Millis(30'000));
  ASSERT_FALSE(r.has_value());
  EXPECT_EQ(r.error().code(), Errc::kIOError);
  EXPECT_EQ(StatusOf("t", "a"), MsgStatus::kReady);
  EXPECT_EQ(b_->Get("t", "a")->record.retry, 0);
  ExpectConsistentWithStore();
}

// A far message's payload is read when it is loaded, half a horizon before it is due, so that
// its delivery reads none (a burst of far messages drains without payload reads); a payload
// larger than a held record keeps is still read at the pull.
TEST_P(EngineFailureTest, AFarMessageLoadedAsItComesNearHoldsItsPayload) {
  MustSend("t", "far", 5 * kMin);
  MustSend("t", "big", 5 * kMin, 3'600'000, 10, kStoredPayload);
  ASSERT_EQ(engine_->TEST_Tiers("t").far, 2);
  sched_.Advance(Millis(5 * kMin - 2'000));  // loaded by the topic's timer
  ASSERT_EQ(engine_->TEST_Tiers("t").far, 0);
  sched_.Advance(Millis(2'000));
  faulty_->FailNextReads(1);
  std::vector<core::Message> first = MustPull("t");  // reads nothing
  ASSERT_EQ(first.size(), 1u);
  EXPECT_EQ(first[0].record.msg_id, "far");
  EXPECT_EQ(first[0].record.payload, "body-far");
  EXPECT_FALSE(b_->Pull("t", 1, Millis(30'000)).has_value());  // the read of big's payload
  faulty_->FailNextReads(0);
  std::vector<core::Message> second = MustPull("t");
  ASSERT_EQ(second.size(), 1u);
  EXPECT_EQ(second[0].record.payload, kStoredPayload);
  ExpectConsistentWithStore();
}

TEST_P(EngineFailureTest, WhatEndedBeforeAFailedReadIsStillStored) {
  MustSend("t", "short", 0, /*ttl_ms=*/1'000);
  MustSend("t", "long", 0, 3'600'000, 10, kStoredPayload);
  clock_.Advance(Millis(2'000));  // "short" expired; no timer ran
  faulty_->FailNextReads(1);      // the payload read of the pull fails
  EXPECT_FALSE(b_->Pull("t", 10, Millis(30'000)).has_value());
  Settle();
  std::optional<core::MessageRecord> s = Stored("t", "short");
  ASSERT_TRUE(s.has_value());
  EXPECT_EQ(s->phase, core::Phase::kEnded);
  EXPECT_EQ(s->end_status, MsgStatus::kExpire);
  ExpectConsistentWithStore();
}

TEST_P(EngineFailureTest, FailedAckNackAndDeleteChangeNothing) {
  MustSend("t", "a", 0);
  MustPull("t");
  FailNextCommit();
  EXPECT_EQ(b_->Ack("t", "a").code(), Errc::kIOError);
  Settle();
  EXPECT_EQ(StatusOf("t", "a"), MsgStatus::kConsuming);
  FailNextCommit();
  EXPECT_EQ(b_->Ack("t", "a", false).code(), Errc::kIOError);
  Settle();
  EXPECT_EQ(StatusOf("t", "a"), MsgStatus::kConsuming);
  FailNextCommit();
  EXPECT_EQ(b_->Delete("t", "a", true).code(), Errc::kIOError);
  Settle();
  EXPECT_EQ(StatusOf("t", "a"), MsgStatus::kConsuming);
  FailNextCommit();
  EXPECT_EQ(b_->Delete("t", "a").code(), Errc::kIOError);
  Settle();
  EXPECT_EQ(StatusOf("t", "a"), MsgStatus::kConsuming);
  EXPECT_EQ(b_->Info("t")->consuming, 1);
  ExpectConsistentWithStore();
  EXPECT_TRUE(b_->Ack("t", "a").ok());
  EXPECT_EQ(StatusOf("t", "a"), MsgStatus::kConsumeOk);
}

TEST_P(EngineFailureTest, FailedDeleteOfAFarMessageChangesNothing) {
  MustSend("t", "far", 5 * kMin);
  ASSERT_EQ(engine_->TEST_Tiers("t").far, 1);
  FailNextCommit();
  EXPECT_EQ(b_->Delete("t", "far", true).code(), Errc::kIOError);
  Settle();
  EXPECT_EQ(StatusOf("t", "far"), MsgStatus::kWaiting);
  EXPECT_EQ(b_->Info("t")->waiting, 1);
  ExpectConsistentWithStore();
  ASSERT_TRUE(b_->Delete("t", "far").ok());
  EXPECT_EQ(StatusOf("t", "far"), MsgStatus::kDelete);
  EXPECT_EQ(b_->Info("t")->waiting, 0);
  ExpectConsistentWithStore();
}

TEST_P(EngineFailureTest, AFailedTimerWriteIsRedone) {
  MustSend("t", "a", 0, /*ttl_ms=*/1'000);
  FailNextCommit();  // the timer's write of the expiry fails
  sched_.Advance(Millis(1'000));
  Settle();
  EXPECT_EQ(StatusOf("t", "a"), MsgStatus::kExpire);
  EXPECT_EQ(b_->Info("t")->ready, 0);  // any later step of the topic writes it again
  Settle();
  std::optional<core::MessageRecord> s = Stored("t", "a");
  ASSERT_TRUE(s.has_value());
  EXPECT_EQ(s->phase, core::Phase::kEnded);
  EXPECT_EQ(s->ended_at, kT0 + Millis(1'000));
  ExpectConsistentWithStore();
}

TEST_P(EngineFailureTest, APurgeWhoseWriteFailedIsRetried) {
  MustSend("t", "a", 0);
  ASSERT_EQ(MustPull("t").size(), 1u);
  ASSERT_TRUE(b_->Ack("t", "a").ok());
  Settle();
  ASSERT_TRUE(Stored("t", "a").has_value());
  FailNextCommit();  // the purge's write
  sched_.Advance(Options().retention);
  Settle();
  EXPECT_TRUE(Stored("t", "a").has_value()) << "the failed purge deleted nothing";
  sched_.Advance(Millis(1'000));  // the retry
  Settle();
  EXPECT_FALSE(Stored("t", "a").has_value());
  EXPECT_FALSE(b_->Get("t", "a").has_value());
}

// ---- Issue 14's operations: a failed write changes nothing, for every item ----

core::NewMessage NewMsg(const std::string& id, int64_t delay_ms, int32_t priority = 0) {
  core::NewMessage m{"t", id, "body-" + id, Millis(delay_ms), Millis(3'600'000), 10};
  m.priority = priority;
  return m;
}

TEST_P(EngineFailureTest, FailedSendBatchStoresNone) {
  MustSend("t", "old", 0);
  std::vector<core::NewMessage> batch = {NewMsg("a", 0, 5), NewMsg("old", 0), NewMsg("w", 5'000),
                                         NewMsg("far", 5 * kMin)};
  for (const core::NewMessage& m : batch) known_.insert({"t", m.msg_id});
  FailNextCommit();
  Result<std::vector<backend::Sent>> r = b_->SendBatch(batch);
  ASSERT_FALSE(r.has_value());
  EXPECT_EQ(r.error().code(), Errc::kIOError);
  Settle();
  for (const char* id : {"a", "w", "far"}) {
    EXPECT_EQ(b_->Get("t", id).error().code(), Errc::kNotFound) << id;
  }
  core::TopicInfo info = *b_->Info("t");
  EXPECT_EQ(info.ready, 1);  // "old" only
  EXPECT_EQ(info.waiting, 0);
  EXPECT_EQ(engine_->TEST_Tiers("t").far, 0);
  ExpectConsistentWithStore();
  r = b_->SendBatch(batch);  // works again: the whole batch
  ASSERT_TRUE(r.has_value()) << r.error().ToString();
  EXPECT_FALSE((*r)[0].existing);
  EXPECT_TRUE((*r)[1].existing);
  info = *b_->Info("t");
  EXPECT_EQ(info.ready, 2);
  EXPECT_EQ(info.waiting, 2);
  ExpectConsistentWithStore();
  std::vector<core::Message> got = MustPull("t", 10);
  ASSERT_EQ(got.size(), 2u);
  EXPECT_EQ(got[0].record.msg_id, "a");  // priority 5 first
}

TEST_P(EngineFailureTest, FailedAckBatchChangesNoItem) {
  MustSend("t", "a", 0);
  MustSend("t", "b", 0);
  ASSERT_EQ(MustPull("t", 2).size(), 2u);
  std::vector<backend::AckItem> items = {{"a", true, ""}, {"b", false, "db down"}, {"x", true, ""}};
  FailNextCommit();
  Result<std::vector<Status>> r = b_->AckBatch("t", items);
  ASSERT_FALSE(r.has_value());
  Settle();
  EXPECT_EQ(StatusOf("t", "a"), MsgStatus::kConsuming);
  EXPECT_EQ(StatusOf("t", "b"), MsgStatus::kConsuming);
  EXPECT_EQ(b_->Get("t", "b")->record.last_error, "");
  ExpectConsistentWithStore();
  r = b_->AckBatch("t", items);
  ASSERT_TRUE(r.has_value()) << r.error().ToString();
  EXPECT_TRUE((*r)[0].ok());
  EXPECT_TRUE((*r)[1].ok());
  EXPECT_EQ((*r)[2].code(), Errc::kNotFound);
  EXPECT_EQ(StatusOf("t", "a"), MsgStatus::kConsumeOk);
  EXPECT_EQ(StatusOf("t", "b"), MsgStatus::kReady);
  EXPECT_EQ(b_->Get("t", "b")->record.last_error, "db down");
  ExpectConsistentWithStore();
}

TEST_P(EngineFailureTest, FailedUpdateOfAFarMessageChangesNothing) {
  MustSend("t", "far", 5 * kMin);
  core::MessageUpdate now;
  now.trigger_time = clock_.Now();
  now.payload = "new";
  FailNextCommit();
  EXPECT_FALSE(b_->Update("t", "far", now).has_value());
  Settle();
  EXPECT_EQ(StatusOf("t", "far"), MsgStatus::kWaiting);
  EXPECT_EQ(b_->Get("t", "far")->record.payload, "body-far");
  EXPECT_EQ(engine_->TEST_Tiers("t").far, 1);
  ExpectConsistentWithStore();
  FailNextCommit();
  EXPECT_FALSE(b_->Count("t", "far", 1).has_value());
  Settle();
  EXPECT_EQ(b_->Get("t", "far")->record.count, 0);
  Result<core::Message> r = b_->Update("t", "far", now);
  ASSERT_TRUE(r.has_value()) << r.error().ToString();
  EXPECT_EQ(r->status, MsgStatus::kReady);
  ExpectConsistentWithStore();
  EXPECT_EQ(MustPull("t")[0].record.payload, "new");
}

TEST_P(EngineFailureTest, PriorityOrderSurvivesARebuild) {
  for (int i = 0; i < 30; ++i) {
    core::NewMessage m = NewMsg("m" + std::to_string(i), 0, i % 10);
    known_.insert({"t", m.msg_id});
    ASSERT_TRUE(b_->Send(std::move(m)).has_value());
  }
  MustPull("t", 3, 1'000);  // the three of priority 9, delivered
  FailNextCommit();         // the memory state is rebuilt from the store
  EXPECT_FALSE(b_->Send("t", "lost", "p", Millis(0)).has_value());
  Settle();
  ExpectConsistentWithStore();
  clock_.Advance(Millis(1'000));  // their ack deadline passes: ready again, first
  std::vector<core::Message> got = MustPull("t", 30);
  ASSERT_EQ(got.size(), 30u);
  for (size_t i = 1; i < got.size(); ++i) {
    EXPECT_GE(got[i - 1].record.priority, got[i].record.priority) << i;
  }
  EXPECT_EQ(got[0].record.priority, 9);
  EXPECT_EQ(got[0].record.retry, 2);
}

// Stores that report a failure later (group commit) have a failed state and rebuild later.
class AsyncEngineFailureTest : public EngineFailureTest {};

TEST_P(AsyncEngineFailureTest, WritesFailUntilTheEngineHasRecovered) {
  ASSERT_TRUE(faulty_->async());
  MustSend("t", "a", 0);
  FailNextCommit();
  EXPECT_FALSE(b_->Send("t", "b", "p", Millis(0)).has_value());
  faulty_->WaitIdle();  // the failure has been reported; the rebuild has not run yet
  EXPECT_TRUE(faulty_->in_failed_state());
  EXPECT_EQ(b_->Ack("t", "a").code(), Errc::kInvalidState);  // not delivered: no write needed
  EXPECT_FALSE(b_->Pull("t").has_value());                   // refused at once
  sched_.RunDue();                                           // the rebuild
  EXPECT_FALSE(faulty_->in_failed_state());
  EXPECT_EQ(StatusOf("t", "a"), MsgStatus::kReady);
  EXPECT_EQ(b_->Get("t", "b").error().code(), Errc::kNotFound);
  ASSERT_EQ(MustPull("t").size(), 1u);
  ExpectConsistentWithStore();
}

TEST_P(EngineFailureTest, RecoverReportsAFailedRead) {
  testutil::DiscardWritesKv view(faulty_.get());
  storage::MessageStore store(&view, "ns");
  base::ManualScheduler sched(&clock_);
  Engine other(Options(), &store, &clock_, &sched);
  faulty_->FailNextReads(1);
  Status s = other.Recover();
  EXPECT_EQ(s.code(), Errc::kIOError) << s.ToString();
}

TEST_P(EngineFailureTest, KeepsServingThroughRandomFailures) {
  std::mt19937 rng(42);
  auto pick = [&](int n) { return std::uniform_int_distribution<int>(0, n - 1)(rng); };
  const std::vector<std::string> topics = {"a", "b"};
  int failures = 0;
  for (int step = 0; step < 400; ++step) {
    int f = pick(100);
    if (f < 8) {
      FailNextCommit();
      ++failures;
    } else if (f < 12) {
      faulty_->FailNextReads(1);
    }
    const std::string& topic = topics[pick(2)];
    const std::string id = "m" + std::to_string(pick(12));
    switch (pick(7)) {
      case 0:
      case 1: {
        int64_t delay = std::vector<int64_t>{0, 500, 8'000, 30'000, 5 * kMin}[pick(5)];
        Result<core::Message> r =
            b_->Send(topic, id, "p", Millis(delay), Millis(pick(2) ? 20'000 : 3'600'000), pick(3));
        if (r.has_value()) known_.insert({topic, id});
        break;
      }
      case 2:
        b_->Pull(topic, 1 + pick(3), Millis(1'000 + pick(5'000))).has_value();
        break;
      case 3:
        b_->Ack(topic, id, pick(3) != 0).IgnoreError();
        break;
      case 4:
        b_->Delete(topic, id, pick(2) == 0).IgnoreError();
        break;
      case 5:
        sched_.Advance(Millis(pick(4'000)));
        break;
      default:
        sched_.Advance(Millis(pick(2) ? 20'000 : 2 * kMin));
        break;
    }
    faulty_->FailNextCommits(0);
    faulty_->FailNextReads(0);
    Settle();
    if (step % 20 == 0 || HasFailure()) {
      ExpectConsistentWithStore();
      if (HasFailure()) FAIL() << "step " << step;
    }
  }
  EXPECT_GT(failures, 10);
  ExpectConsistentWithStore();
}

TEST_P(EngineFailureTest, SequenceNumbersStayUniqueAfterALostReservationAndARestart) {
  // The first send reserves a block of sequence numbers in its batch; that write fails.
  FailNextCommit();
  EXPECT_FALSE(b_->Send("t", "lost", "p", Millis(10'000)).has_value());
  Settle();
  core::Message a = MustSend("t", "a", 10'000);
  // Restart over the same store, in the same millisecond.
  b_.reset();
  engine_.reset();
  engine_ = std::make_unique<Engine>(Options(), store_.get(), &clock_, &sched_);
  ASSERT_TRUE(engine_->Recover().ok());
  sched_.RunDue();
  b_ = std::make_unique<testutil::SyncBackend>(engine_.get());
  core::Message b = MustSend("t", "b", 10'000);
  core::Message c = MustSend("t", "c", 10'000);
  EXPECT_NE(a.record.seq, b.record.seq);
  EXPECT_NE(a.record.seq, c.record.seq);
  EXPECT_GT(b.record.seq, a.record.seq);  // send order is kept across the restart
  EXPECT_EQ(b_->Info("t")->waiting, 3);
  sched_.Advance(Millis(10'000));
  Result<std::vector<core::Message>> got = b_->Pull("t", 10, Millis(30'000));
  ASSERT_TRUE(got.has_value());
  std::vector<std::string> ids;
  for (const core::Message& m : *got) ids.push_back(m.record.msg_id);
  EXPECT_EQ(ids, (std::vector<std::string>{"a", "b", "c"}));
  ExpectConsistentWithStore();
}

TEST_P(AsyncEngineFailureTest, DestroyingTheEngineBeforeItsRebuildRanIsSafe) {
  ASSERT_TRUE(faulty_->async());
  MustSend("t", "a", 0);
  FailNextCommit();
  EXPECT_FALSE(b_->Send("t", "b", "p", Millis(0)).has_value());
  faulty_->WaitIdle();  // the rebuild is scheduled, not run
  b_.reset();
  engine_.reset();
  sched_.Advance(Millis(1'000));  // nothing may run against the destroyed engine
  EXPECT_EQ(sched_.pending(), 0u);
  faulty_->ResumeAfterFailure();
}

std::string BackendName(const ::testing::TestParamInfo<Backend>& i) {
  switch (i.param) {
    case Backend::kMemory:
      return "Memory";
    case Backend::kRocks:
      return "Rocks";
    case Backend::kRocksSync:
      return "RocksSyncWrites";
  }
  return "unknown";
}

INSTANTIATE_TEST_SUITE_P(Backends, EngineFailureTest,
                         ::testing::Values(Backend::kMemory, Backend::kRocks, Backend::kRocksSync),
                         BackendName);
INSTANTIATE_TEST_SUITE_P(Backends, AsyncEngineFailureTest,
                         ::testing::Values(Backend::kRocks, Backend::kRocksSync), BackendName);

}  // namespace
}  // namespace chronoq::engine
