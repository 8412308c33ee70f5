#include "engine/topic.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "core/state_machine.h"

namespace chronoq::engine {
namespace {

using core::EventKind;
using core::MessageRecord;
using core::MsgStatus;
using core::Phase;

const TimePoint kT0 = FromEpochMs(1'700'000'000'000);
constexpr int64_t kMin = 60'000;
constexpr int64_t kHour = 60 * kMin;
constexpr int64_t kDay = 24 * kHour;
constexpr Millis kRetention(300'000);

TimePoint At(int64_t ms) { return kT0 + Millis(ms); }

class TopicTest : public ::testing::Test {
 protected:
  TopicTest() : topic_("t", kT0, kRetention) {}

  AdvanceResult AdvanceTo(TimePoint t) {
    AdvanceResult r;
    topic_.AdvanceTo(t, &r);
    now_ = std::max(now_, t);
    return r;
  }
  MessageRecord Send(const std::string& id, Millis delay, Millis ttl = Millis(kDay),
                     int32_t max_retry = 2) {
    MessageRecord r = core::CreateRecord(
        core::NewMessage{"t", id, "payload", delay, ttl, max_retry}, now_, seq_++);
    topic_.Insert(r, now_);
    return r;
  }
  MessageRecord Apply(const std::string& id, core::Event e) {
    const MessageRecord* live = topic_.FindLive(id);
    EXPECT_NE(live, nullptr) << id;
    Result<MessageRecord> next = core::Apply(*live, e, now_);
    EXPECT_TRUE(next.has_value()) << next.error().ToString();
    topic_.Update(*next, now_);
    return *next;
  }
  MessageRecord Deliver(const std::string& id, Millis ack = Millis(5'000)) {
    return Apply(id, core::Event{EventKind::kDeliver, ack});
  }
  std::vector<std::string> Head(size_t max = 100) {
    std::vector<std::string> ids;
    for (const MessageRecord* r : topic_.DueHead(now_, max)) ids.push_back(r->msg_id);
    return ids;
  }

  Topic topic_;
  TimePoint now_ = kT0;
  uint64_t seq_ = 1;
};

TEST_F(TopicTest, NewTopicIsEmpty) {
  core::TopicInfo info = topic_.Info();
  EXPECT_EQ(info.topic, "t");
  EXPECT_EQ(info, core::TopicInfo{.topic = "t"});
  EXPECT_EQ(topic_.NextDue(Millis(kHour)), At(kHour));  // only the inactivity time
  EXPECT_EQ(topic_.NextDue(Millis::max()), kTimeMax);
}

TEST_F(TopicTest, InsertDropsPayloadAndCounts) {
  Send("a", Millis(0));
  Send("b", Millis(10));
  ASSERT_NE(topic_.FindLive("a"), nullptr);
  EXPECT_EQ(topic_.FindLive("a")->payload, "");
  EXPECT_EQ(topic_.FindLive("zzz"), nullptr);
  core::TopicInfo info = topic_.Info();
  EXPECT_EQ(info.ready, 1);
  EXPECT_EQ(info.waiting, 1);
  EXPECT_EQ(info.buckets[0], 1);
  EXPECT_EQ(topic_.live_count(), 2u);
}

TEST_F(TopicTest, CountsAtBucketBoundaries) {
  // One message exactly at each lower bound and one 1 ms below it.
  for (int b = 1; b < core::kBucketCount; ++b) {
    Millis lo = core::kBucketLowerBounds[b];
    Send("at" + std::to_string(b), lo);
    Send("below" + std::to_string(b), lo - Millis(1));
  }
  core::TopicInfo info = topic_.Info();
  EXPECT_EQ(info.waiting, 16);
  EXPECT_EQ(info.buckets[0], 1);  // below1 (59,999 ms)
  for (int b = 1; b < core::kBucketCount - 1; ++b) EXPECT_EQ(info.buckets[b], 2) << b;
  EXPECT_EQ(info.buckets[8], 1);  // at8 (exactly 30 days)

  // 1 ms later every "at" message has crossed down into the bucket below.
  AdvanceTo(At(1));
  info = topic_.Info();
  EXPECT_EQ(info.buckets[0], 2);
  for (int b = 1; b < core::kBucketCount - 1; ++b) EXPECT_EQ(info.buckets[b], 2) << b;
  EXPECT_EQ(info.buckets[8], 0);
}

TEST_F(TopicTest, LargeJumpMovesMessagesAcrossSeveralBuckets) {
  Send("far", Millis(40 * kDay), Millis(100 * kDay));
  Send("mid", Millis(2 * kHour), Millis(100 * kDay));
  EXPECT_EQ(topic_.Info().buckets[8], 1);
  EXPECT_EQ(topic_.Info().buckets[4], 1);
  AdvanceTo(At(40 * kDay - 30 * kMin));  // "far" is 30 min away; "mid" triggered long ago
  core::TopicInfo info = topic_.Info();
  EXPECT_EQ(info.waiting, 1);
  EXPECT_EQ(info.buckets[3], 1);  // [30 min, 1 h)
  EXPECT_EQ(info.ready, 1);
  AdvanceTo(At(40 * kDay));
  info = topic_.Info();
  EXPECT_EQ(info.waiting, 0);
  EXPECT_EQ(info.ready, 2);
  for (int64_t b : info.buckets) EXPECT_EQ(b, 0);
}

TEST_F(TopicTest, TriggerMakesReadyExactlyAtTriggerTime) {
  Send("a", Millis(1'000));
  AdvanceResult r = AdvanceTo(At(999));
  EXPECT_EQ(r.triggered, 0);
  EXPECT_FALSE(r.became_ready);
  EXPECT_TRUE(Head().empty());
  r = AdvanceTo(At(1'000));
  EXPECT_EQ(r.triggered, 1);
  EXPECT_EQ(r.ready_gap_sum_ms, 0);
  EXPECT_TRUE(r.became_ready);
  EXPECT_EQ(Head(), std::vector<std::string>{"a"});
  EXPECT_EQ(topic_.Info().ready, 1);
  EXPECT_EQ(topic_.Info().waiting, 0);
}

TEST_F(TopicTest, ReadyGapMeasuresLateness) {
  Send("a", Millis(1'000));
  Send("b", Millis(1'500));
  AdvanceResult r = AdvanceTo(At(2'000));
  EXPECT_EQ(r.triggered, 2);
  EXPECT_EQ(r.ready_gap_sum_ms, 1'000 + 500);
  EXPECT_EQ(r.ready_gap_max_ms, 1'000);
}

TEST_F(TopicTest, SendReadyNowIsNotCountedAsTriggered) {
  Send("a", Millis(0));
  Send("b", Millis(-10));
  AdvanceResult r = AdvanceTo(At(10));
  EXPECT_EQ(r.triggered, 0);
  EXPECT_EQ(topic_.Info().ready, 2);
}

TEST_F(TopicTest, AckTimeoutMakesMessageReadyAgain) {
  Send("a", Millis(0));
  Deliver("a", Millis(5'000));
  EXPECT_EQ(topic_.Info().consuming, 1);
  EXPECT_TRUE(Head().empty());
  AdvanceResult r = AdvanceTo(At(4'999));
  EXPECT_EQ(r.ack_timeouts, 0);
  EXPECT_EQ(topic_.Info().consuming, 1);
  r = AdvanceTo(At(5'000));
  EXPECT_EQ(r.ack_timeouts, 1);
  EXPECT_TRUE(r.became_ready);
  EXPECT_EQ(r.triggered, 0);
  EXPECT_TRUE(r.finalized.empty());
  EXPECT_EQ(topic_.Info().consuming, 0);
  EXPECT_EQ(topic_.Info().ready, 1);
  EXPECT_EQ(Head(), std::vector<std::string>{"a"});
  EXPECT_EQ(Deliver("a").retry, 2);
}

TEST_F(TopicTest, LastAckTimeoutFinalizesAsRetryExhaust) {
  Send("a", Millis(0), Millis(kDay), /*max_retry=*/0);
  Deliver("a", Millis(5'000));
  AdvanceResult r = AdvanceTo(At(5'000));
  EXPECT_EQ(r.ack_timeouts, 1);
  EXPECT_FALSE(r.became_ready);  // nothing consumable came of it
  ASSERT_EQ(r.finalized.size(), 1u);
  EXPECT_EQ(r.finalized[0].end_status, MsgStatus::kRetryExhaust);
  EXPECT_EQ(r.finalized[0].ended_at, At(5'000));
  EXPECT_EQ(topic_.FindLive("a"), nullptr);
  EXPECT_EQ(topic_.Info(), core::TopicInfo{.topic = "t"});
  EXPECT_EQ(topic_.retained_count(), 1u);
}

TEST_F(TopicTest, ExpiryFinalizesAtExpireTime) {
  Send("never", Millis(1'000), Millis(2'000));  // expires at 3,000
  Send("once", Millis(0), Millis(2'000));       // expires at 2,000
  Deliver("once", Millis(60'000));
  AdvanceResult r = AdvanceTo(At(1'999));
  EXPECT_TRUE(r.finalized.empty());
  r = AdvanceTo(At(2'000));
  ASSERT_EQ(r.finalized.size(), 1u);
  EXPECT_EQ(r.finalized[0].msg_id, "once");
  EXPECT_EQ(r.finalized[0].end_status, MsgStatus::kRetryExhaust);
  EXPECT_EQ(topic_.Info().consuming, 0);
  EXPECT_EQ(topic_.Info().ready, 1);
  r = AdvanceTo(At(10'000));  // finalized at its expire time even when processed late
  ASSERT_EQ(r.finalized.size(), 1u);
  EXPECT_EQ(r.finalized[0].msg_id, "never");
  EXPECT_EQ(r.finalized[0].end_status, MsgStatus::kExpire);
  EXPECT_EQ(r.finalized[0].ended_at, At(3'000));
  EXPECT_EQ(topic_.Info(), core::TopicInfo{.topic = "t"});
}

TEST_F(TopicTest, JumpPastTriggerAndExpiryCountsBothAndEndsIt) {
  Send("a", Millis(1'000), Millis(1'000));
  AdvanceResult r = AdvanceTo(At(50'000));
  EXPECT_EQ(r.triggered, 1);
  ASSERT_EQ(r.finalized.size(), 1u);
  EXPECT_EQ(r.finalized[0].end_status, MsgStatus::kExpire);
  EXPECT_EQ(topic_.Info(), core::TopicInfo{.topic = "t"});
  EXPECT_TRUE(Head().empty());
}

TEST_F(TopicTest, DueHeadOrderIsVisibleAtThenSendOrder) {
  Send("late", Millis(300));
  Send("b", Millis(100));
  Send("c", Millis(100));
  Send("a", Millis(50));
  AdvanceTo(At(100));
  Send("now", Millis(0));  // visible at 100, after b and c (same time, later seq)
  EXPECT_EQ(Head(), (std::vector<std::string>{"a", "b", "c", "now"}));
  EXPECT_EQ(Head(2), (std::vector<std::string>{"a", "b"}));
  Deliver("a");
  // Visible again at 100; among equal visible_at the send order (seq) decides, so "a" (sent
  // before "now") comes before it.
  Apply("a", core::Event{EventKind::kNack});
  EXPECT_EQ(Head(), (std::vector<std::string>{"b", "c", "a", "now"}));
}

TEST_F(TopicTest, NackMakesReadyAtOnce) {
  Send("a", Millis(0));
  Deliver("a");
  AdvanceTo(At(10));
  MessageRecord n = Apply("a", core::Event{EventKind::kNack});
  EXPECT_EQ(n.visible_at, At(10));
  EXPECT_EQ(topic_.Info().ready, 1);
  EXPECT_EQ(topic_.Info().consuming, 0);
  AdvanceResult r = AdvanceTo(At(20));
  EXPECT_EQ(r.triggered, 0);  // a nack is not a trigger
  EXPECT_EQ(r.ack_timeouts, 0);
}

TEST_F(TopicTest, UpdateToEndedMovesToRetention) {
  Send("a", Millis(0));
  Deliver("a");
  AdvanceTo(At(100));
  MessageRecord acked = Apply("a", core::Event{EventKind::kAck});
  EXPECT_EQ(topic_.FindLive("a"), nullptr);
  EXPECT_EQ(topic_.live_count(), 0u);
  EXPECT_EQ(topic_.retained_count(), 1u);
  EXPECT_EQ(topic_.PurgeTime(acked), At(100) + kRetention);
  EXPECT_EQ(topic_.Info(), core::TopicInfo{.topic = "t"});
}

TEST_F(TopicTest, RetentionPurgeAtEndedAtPlusRetention) {
  Send("a", Millis(0));
  Send("b", Millis(0));
  Apply("a", core::Event{EventKind::kDelete});
  AdvanceTo(At(1'000));
  Apply("b", core::Event{EventKind::kDelete});
  EXPECT_EQ(topic_.NextDue(Millis::max()), kT0 + kRetention);
  EXPECT_TRUE(topic_.PopPurgeable(kT0 + kRetention - Millis(1)).empty());
  std::vector<Topic::Purge> p = topic_.PopPurgeable(kT0 + kRetention);
  ASSERT_EQ(p.size(), 1u);
  EXPECT_EQ(p[0].msg_id, "a");
  EXPECT_TRUE(topic_.PopPurgeable(kT0 + kRetention).empty());  // popped once only
  p = topic_.PopPurgeable(At(10 * kDay));
  ASSERT_EQ(p.size(), 1u);
  EXPECT_EQ(p[0].msg_id, "b");
  EXPECT_EQ(topic_.retained_count(), 0u);
}

TEST_F(TopicTest, RemoveRetentionCancelsThePurgeOfAReplacedRecord) {
  Send("a", Millis(0));
  MessageRecord del = Apply("a", core::Event{EventKind::kDelete});
  topic_.RemoveRetention(del);
  EXPECT_EQ(topic_.retained_count(), 0u);
  Send("a", Millis(0));  // the replacement
  EXPECT_TRUE(topic_.PopPurgeable(At(kDay)).empty());
  EXPECT_NE(topic_.FindLive("a"), nullptr);
}

TEST_F(TopicTest, ForgetDropsWithoutRetention) {
  Send("a", Millis(10));
  topic_.Forget("a", now_);
  topic_.Forget("unknown", now_);  // no-op
  EXPECT_EQ(topic_.live_count(), 0u);
  EXPECT_EQ(topic_.retained_count(), 0u);
  EXPECT_EQ(topic_.Info(), core::TopicInfo{.topic = "t"});
  AdvanceResult r = AdvanceTo(At(100));
  EXPECT_EQ(r.triggered, 0);
}

TEST_F(TopicTest, AdvanceBackwardsIsANoOp) {
  Send("a", Millis(100));
  AdvanceTo(At(50));
  AdvanceResult r;
  topic_.AdvanceTo(At(10), &r);
  EXPECT_EQ(topic_.processed(), At(50));
  EXPECT_EQ(topic_.Info().buckets[0], 1);
}

TEST_F(TopicTest, NextDueIsTheEarliestPendingEvent) {
  Send("w", Millis(1'000), Millis(10'000));  // trigger 1,000, expire 11,000
  Send("r", Millis(0), Millis(500));         // expires 500
  EXPECT_EQ(topic_.NextDue(Millis::max()), At(500));
  AdvanceTo(At(500));
  EXPECT_EQ(topic_.NextDue(Millis::max()), At(1'000));
  AdvanceTo(At(1'000));
  EXPECT_EQ(topic_.NextDue(Millis::max()), At(11'000));  // before the purge of "r"
  Deliver("w", Millis(2'000));
  EXPECT_EQ(topic_.NextDue(Millis::max()), At(3'000));  // ack deadline
}

TEST_F(TopicTest, NextDueIncludesInactivityOnlyWhenEmpty) {
  Send("a", Millis(kDay));
  EXPECT_EQ(topic_.NextDue(Millis(kMin)), At(kDay));
  topic_.Forget("a", now_);
  topic_.Touch(At(5));
  EXPECT_EQ(topic_.last_active(), At(5));
  topic_.Touch(At(1));  // never backwards
  EXPECT_EQ(topic_.last_active(), At(5));
  EXPECT_EQ(topic_.NextDue(Millis(kMin)), At(5 + kMin));
}

TEST_F(TopicTest, NextDueAfterInactivityWaitsForRetainedPurge) {
  // An idle topic whose last message expired long after the topic turned inactive still retains
  // the ended record; its next due time must be the purge, not the (past) inactivity time, or
  // the engine's timer would fire again and again at once.
  Send("a", Millis(0), Millis(kHour));
  AdvanceTo(At(kHour));  // expired, retained until kHour + retention
  ASSERT_EQ(topic_.live_count(), 0u);
  ASSERT_EQ(topic_.retained_count(), 1u);
  TimePoint next = topic_.NextDue(Millis(30 * kMin));
  EXPECT_GT(next, topic_.processed());
  EXPECT_EQ(next, At(kHour) + kRetention);
  EXPECT_EQ(topic_.PopPurgeable(next).size(), 1u);
}

TEST_F(TopicTest, SaturatedTimesStayWaiting) {
  Send("max", Millis::max(), Millis::max());
  EXPECT_EQ(topic_.Info().buckets[8], 1);
  AdvanceTo(At(100 * 365 * kDay));
  EXPECT_EQ(topic_.Info().waiting, 1);
  EXPECT_EQ(topic_.Info().buckets[8], 1);
  EXPECT_EQ(topic_.NextDue(Millis::max()), kTimeMax);
}

}  // namespace
}  // namespace chronoq::engine
