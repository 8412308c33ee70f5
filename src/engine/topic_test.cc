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

TimePoint At(int64_t ms) { return kT0 + Millis(ms); }

class TopicTest : public ::testing::Test {
 protected:
  TopicTest() : topic_("t", kT0) {}

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
  // A message sent while its visibility is at or after the cursor: only counted (AddFar); the
  // record is returned for a later LoadFar, as the store would give it back.
  MessageRecord SendFar(const std::string& id, Millis delay, Millis ttl = Millis(kDay)) {
    MessageRecord r =
        core::CreateRecord(core::NewMessage{"t", id, "payload", delay, ttl, 2}, now_, seq_++);
    EXPECT_TRUE(topic_.IsFar(r.visible_at, r.seq)) << id;
    topic_.AddFar(r.trigger_time, 1, now_);
    r.payload.clear();
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
    for (const MessageRecord* r : topic_.DueHead(now_, max, Lane::kPull)) ids.push_back(r->msg_id);
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

TEST_F(TopicTest, InsertKeepsASmallPayloadDropsALargeOneAndCounts) {
  Send("a", Millis(0));
  Send("b", Millis(10));
  ASSERT_NE(topic_.FindLive("a"), nullptr);
  EXPECT_EQ(topic_.FindLive("a")->payload, "payload");  // at most kHeldPayloadBytes: kept
  EXPECT_EQ(topic_.FindLive("a")->topic, "");
  MessageRecord large =
      core::CreateRecord(core::NewMessage{"t", "l", std::string(kHeldPayloadBytes + 1, 'x'),
                                          Millis(0), Millis(kDay), 2},
                         now_, seq_++);
  topic_.Insert(large, now_);
  EXPECT_EQ(topic_.FindLive("l")->payload, "");  // read from the store when delivered
  topic_.Forget("l", now_);
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
  EXPECT_EQ(r.finalized[0].after.end_status, MsgStatus::kRetryExhaust);
  EXPECT_EQ(r.finalized[0].after.ended_at, At(5'000));
  EXPECT_EQ(r.finalized[0].after.topic, "t");
  // `before`: the record as it was held, with its topic, for the store's index updates.
  EXPECT_EQ(r.finalized[0].before.phase, Phase::kDelivered);
  EXPECT_EQ(r.finalized[0].before.topic, "t");
  EXPECT_EQ(r.finalized[0].before.visible_at, At(5'000));
  EXPECT_EQ(topic_.FindLive("a"), nullptr);
  EXPECT_EQ(topic_.Info(), core::TopicInfo{.topic = "t"});
  EXPECT_TRUE(topic_.empty());
}

TEST_F(TopicTest, ExpiryFinalizesAtExpireTime) {
  Send("never", Millis(1'000), Millis(2'000));  // expires at 3,000
  Send("once", Millis(0), Millis(2'000));       // expires at 2,000
  Deliver("once", Millis(60'000));
  AdvanceResult r = AdvanceTo(At(1'999));
  EXPECT_TRUE(r.finalized.empty());
  r = AdvanceTo(At(2'000));
  ASSERT_EQ(r.finalized.size(), 1u);
  EXPECT_EQ(r.finalized[0].after.msg_id, "once");
  EXPECT_EQ(r.finalized[0].after.end_status, MsgStatus::kRetryExhaust);
  EXPECT_EQ(topic_.Info().consuming, 0);
  EXPECT_EQ(topic_.Info().ready, 1);
  r = AdvanceTo(At(10'000));  // finalized at its expire time even when processed late
  ASSERT_EQ(r.finalized.size(), 1u);
  EXPECT_EQ(r.finalized[0].after.msg_id, "never");
  EXPECT_EQ(r.finalized[0].after.end_status, MsgStatus::kExpire);
  EXPECT_EQ(r.finalized[0].after.ended_at, At(3'000));
  EXPECT_EQ(r.finalized[0].before.phase, Phase::kPending);
  EXPECT_EQ(topic_.Info(), core::TopicInfo{.topic = "t"});
}

TEST_F(TopicTest, JumpPastTriggerAndExpiryCountsBothAndEndsIt) {
  Send("a", Millis(1'000), Millis(1'000));
  AdvanceResult r = AdvanceTo(At(50'000));
  EXPECT_EQ(r.triggered, 1);
  ASSERT_EQ(r.finalized.size(), 1u);
  EXPECT_EQ(r.finalized[0].after.end_status, MsgStatus::kExpire);
  EXPECT_EQ(topic_.Info(), core::TopicInfo{.topic = "t"});
  EXPECT_TRUE(Head().empty());
}

TEST_F(TopicTest, HeldAfterItsLastDeadlinePassedEndsAtTheNextAdvance) {
  // As loaded at recovery: delivered for the last time, and the deadline passed while down.
  MessageRecord r =
      core::CreateRecord(core::NewMessage{"t", "a", "", Millis(0), Millis(kDay), 0}, now_, seq_++);
  r = *core::Apply(r, core::Event{EventKind::kDeliver, Millis(1'000)}, now_);
  AdvanceTo(At(5'000));
  topic_.Insert(r, now_);  // its deadline (1,000) is behind processed() (5,000)
  EXPECT_EQ(topic_.Info().ready, 1);
  EXPECT_EQ(topic_.NextDue(Millis::max()), At(1'000));  // due at once
  AdvanceResult res = AdvanceTo(At(5'001));
  ASSERT_EQ(res.finalized.size(), 1u);
  EXPECT_EQ(res.finalized[0].after.end_status, MsgStatus::kRetryExhaust);
  EXPECT_EQ(res.finalized[0].after.ended_at, At(1'000));
  EXPECT_TRUE(Head().empty());
  EXPECT_EQ(topic_.Info(), core::TopicInfo{.topic = "t"});
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

TEST_F(TopicTest, UpdateToEndedDropsTheRecord) {
  Send("a", Millis(0));
  Deliver("a");
  AdvanceTo(At(100));
  Apply("a", core::Event{EventKind::kAck});
  EXPECT_EQ(topic_.FindLive("a"), nullptr);
  EXPECT_EQ(topic_.live_count(), 0u);
  EXPECT_TRUE(topic_.empty());  // ended records live in the store only
  EXPECT_EQ(topic_.Info(), core::TopicInfo{.topic = "t"});
  Send("a", Millis(0));  // the id is free for a replacement
  EXPECT_NE(topic_.FindLive("a"), nullptr);
}

TEST_F(TopicTest, ForgetDrops) {
  Send("a", Millis(10));
  topic_.Forget("a", now_);
  topic_.Forget("unknown", now_);  // no-op
  EXPECT_EQ(topic_.live_count(), 0u);
  EXPECT_TRUE(topic_.empty());
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
  EXPECT_EQ(topic_.NextDue(Millis::max()), At(11'000));  // the expiry of "w"
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

TEST_F(TopicTest, NextDueOfATopicEmptiedByExpiryIsItsInactivityTime) {
  // Its last message expired after the topic turned inactive: nothing is held any more (the
  // ended record is the engine's retention business), so the topic is due to be forgotten.
  Send("a", Millis(0), Millis(kHour));
  AdvanceTo(At(kHour));
  ASSERT_EQ(topic_.live_count(), 0u);
  EXPECT_TRUE(topic_.empty());
  EXPECT_EQ(topic_.NextDue(Millis(30 * kMin)), At(30 * kMin));
  EXPECT_EQ(topic_.NextDue(Millis::max()), kTimeMax);
}

TEST_F(TopicTest, SaturatedTimesStayWaiting) {
  Send("max", Millis::max(), Millis::max());
  EXPECT_EQ(topic_.Info().buckets[8], 1);
  AdvanceTo(At(100 * 365 * kDay));
  EXPECT_EQ(topic_.Info().waiting, 1);
  EXPECT_EQ(topic_.Info().buckets[8], 1);
  EXPECT_EQ(topic_.NextDue(Millis::max()), kTimeMax);
}

// ---- Far tier ----

TEST_F(TopicTest, NewTopicHoldsEverythingNear) {
  EXPECT_EQ(topic_.cursor(), (IndexKey{kTimeMax, UINT64_MAX}));
  EXPECT_FALSE(topic_.IsFar(At(100 * kDay), 1));
  EXPECT_FALSE(topic_.IsFar(kTimeMax, UINT64_MAX - 1));
  EXPECT_EQ(topic_.far_count(), 0);
  EXPECT_EQ(topic_.FirstFar(), kTimeMax);
}

TEST_F(TopicTest, IsFarFollowsTheCursor) {
  topic_.set_cursor(IndexKey{At(1'000), 5});
  EXPECT_FALSE(topic_.IsFar(At(999), 100));
  EXPECT_FALSE(topic_.IsFar(At(1'000), 4));
  EXPECT_TRUE(topic_.IsFar(At(1'000), 5));  // the cursor itself is far
  EXPECT_TRUE(topic_.IsFar(At(1'000), 6));
  EXPECT_TRUE(topic_.IsFar(At(1'001), 0));
}

TEST_F(TopicTest, FarMessagesAreCountedNotHeld) {
  topic_.set_cursor(IndexKey{At(kMin), 0});
  Send("near", Millis(10));
  MessageRecord a = SendFar("a", Millis(2 * kHour));
  SendFar("b", Millis(2 * kHour));
  SendFar("c", Millis(40 * kDay), Millis(100 * kDay));
  core::TopicInfo info = topic_.Info();
  EXPECT_EQ(info.waiting, 4);
  EXPECT_EQ(info.buckets[0], 1);
  EXPECT_EQ(info.buckets[4], 2);  // [1 h, 6 h)
  EXPECT_EQ(info.buckets[8], 1);
  EXPECT_EQ(topic_.far_count(), 3);
  EXPECT_EQ(topic_.live_count(), 1u);
  EXPECT_EQ(topic_.FirstFar(), a.trigger_time);
  EXPECT_EQ(topic_.FindLive("a"), nullptr);
  EXPECT_FALSE(topic_.empty());
  // Only near messages are due; the next far trigger time is due too.
  EXPECT_EQ(topic_.NextDue(Millis::max()), At(10));
  topic_.Forget("near", now_);
  EXPECT_EQ(topic_.NextDue(Millis::max()), a.trigger_time);
  EXPECT_FALSE(topic_.empty());  // far messages keep it
}

TEST_F(TopicTest, FarBucketsShiftAndTriggerAsTimePasses) {
  topic_.set_cursor(IndexKey{At(1'000), 0});
  SendFar("a", Millis(2 * kMin));
  SendFar("b", Millis(2 * kMin));
  SendFar("c", Millis(11 * kMin));
  EXPECT_EQ(topic_.Info().buckets[1], 2);
  EXPECT_EQ(topic_.Info().buckets[2], 1);
  AdvanceTo(At(kMin + 1));  // a and b are now under a minute away
  EXPECT_EQ(topic_.Info().buckets[0], 2);
  EXPECT_EQ(topic_.Info().buckets[1], 1);
  AdvanceTo(At(kMin + 2 * kMin));  // c crossed into [1, 10 min)... and a, b triggered
  core::TopicInfo info = topic_.Info();
  EXPECT_EQ(info.ready, 2);
  EXPECT_EQ(info.waiting, 1);
  EXPECT_EQ(info.buckets[1], 1);
  // Far messages that came due unloaded are counted (the owner loads them before that).
  AdvanceResult r = AdvanceTo(At(11 * kMin + 5));
  EXPECT_EQ(r.triggered, 1);
  EXPECT_EQ(r.ready_gap_sum_ms, 5);
  EXPECT_TRUE(r.became_ready);
  EXPECT_EQ(topic_.Info().ready, 3);
  EXPECT_TRUE(Head().empty());  // nothing is held to deliver
}

TEST_F(TopicTest, LoadFarMovesNearWithoutChangingCounts) {
  topic_.set_cursor(IndexKey{At(500), 0});
  MessageRecord a = SendFar("a", Millis(1'000));
  MessageRecord b = SendFar("b", Millis(1'000));  // same millisecond
  MessageRecord c = SendFar("c", Millis(5'000));
  const core::TopicInfo before = topic_.Info();
  topic_.LoadFar(a, now_);
  EXPECT_EQ(topic_.Info(), before);
  EXPECT_EQ(topic_.far_count(), 2);
  EXPECT_EQ(topic_.FirstFar(), At(1'000));  // b still far in that millisecond
  ASSERT_NE(topic_.FindLive("a"), nullptr);
  EXPECT_EQ(topic_.Copy(*topic_.FindLive("a")), a);
  topic_.set_cursor(IndexKey{At(1'000), a.seq + 1});  // loading stopped inside the millisecond
  EXPECT_TRUE(topic_.IsFar(b.visible_at, b.seq));
  topic_.LoadFar(b, now_);
  topic_.set_cursor(IndexKey{At(2'000), 0});
  EXPECT_EQ(topic_.FirstFar(), At(5'000));
  EXPECT_EQ(topic_.Info(), before);
  AdvanceTo(At(1'000));
  EXPECT_EQ(Head(), (std::vector<std::string>{"a", "b"}));
  EXPECT_EQ(topic_.Info().ready, 2);
  EXPECT_EQ(topic_.Info().waiting, 1);
  topic_.LoadFar(c, now_);
  EXPECT_EQ(topic_.far_count(), 0);
  EXPECT_EQ(topic_.FirstFar(), kTimeMax);
  EXPECT_EQ(topic_.live_count(), 3u);
}

TEST_F(TopicTest, LoadedFarMessageExpiresLikeAnyOther) {
  topic_.set_cursor(IndexKey{At(10), 0});
  MessageRecord a = SendFar("a", Millis(1'000), Millis(500));  // expires at 1,500
  topic_.LoadFar(a, now_);
  AdvanceResult r = AdvanceTo(At(2'000));
  ASSERT_EQ(r.finalized.size(), 1u);
  EXPECT_EQ(r.finalized[0].after.end_status, MsgStatus::kExpire);
  EXPECT_EQ(r.finalized[0].after.ended_at, At(1'500));
  EXPECT_TRUE(topic_.empty());
  EXPECT_EQ(topic_.Info(), core::TopicInfo{.topic = "t"});
}

TEST_F(TopicTest, AddFarNegativeRemovesFarMessages) {
  topic_.set_cursor(IndexKey{At(10), 0});
  SendFar("a", Millis(kHour));
  SendFar("b", Millis(kHour));
  topic_.AddFar(At(kHour), -1, now_);  // "a" deleted while far
  EXPECT_EQ(topic_.far_count(), 1);
  EXPECT_EQ(topic_.Info().waiting, 1);
  EXPECT_EQ(topic_.Info().buckets[4], 1);
  topic_.AddFar(At(kHour), -1, now_);
  EXPECT_EQ(topic_.far_count(), 0);
  EXPECT_EQ(topic_.FirstFar(), kTimeMax);
  EXPECT_TRUE(topic_.empty());
  EXPECT_EQ(topic_.Info(), core::TopicInfo{.topic = "t"});
}

TEST_F(TopicTest, FarReadyMessagesCountAsReady) {
  // A message due now can be far when loading stopped inside the current millisecond.
  topic_.set_cursor(IndexKey{now_, seq_});
  MessageRecord a = SendFar("a", Millis(0));
  EXPECT_EQ(topic_.Info().ready, 1);
  EXPECT_EQ(topic_.Info().waiting, 0);
  topic_.LoadFar(a, now_);
  EXPECT_EQ(topic_.Info().ready, 1);
  EXPECT_EQ(Head(), std::vector<std::string>{"a"});
}

// ---- Priority (one visibility index per level, merged from 9 down) ----

class TopicPriorityTest : public TopicTest {
 protected:
  MessageRecord SendP(const std::string& id, int32_t priority, Millis delay = Millis(0),
                      int32_t max_retry = 2, bool push = false) {
    core::NewMessage m{"t", id, "payload", delay, Millis(kDay), max_retry};
    m.priority = priority;
    m.push = push;
    MessageRecord r = core::CreateRecord(std::move(m), now_, seq_++);
    topic_.Insert(r, now_);
    return r;
  }
  std::vector<std::string> Peek(const std::optional<PullPosition>& after, size_t max = 100) {
    std::vector<std::string> ids;
    for (const MessageRecord* r : topic_.PeekReady(now_, after, max, Lane::kPull))
      ids.push_back(r->msg_id);
    return ids;
  }
};

TEST_F(TopicPriorityTest, HighestPriorityFirstThenVisibilityOrder) {
  SendP("low-old", 0);
  SendP("mid", 5);
  SendP("high", 9);
  AdvanceTo(At(10));
  SendP("low-new", 0);
  SendP("high-new", 9);
  SendP("high-later", 9, Millis(1'000));  // not ready yet
  EXPECT_EQ(Head(), (std::vector<std::string>{"high", "high-new", "mid", "low-old", "low-new"}));
  EXPECT_EQ(Head(2), (std::vector<std::string>{"high", "high-new"}));
  AdvanceTo(At(1'010));
  EXPECT_EQ(Head(3), (std::vector<std::string>{"high", "high-new", "high-later"}));
  EXPECT_EQ(topic_.Info().ready, 6);
}

TEST_F(TopicPriorityTest, LateBecomingReadyDoesNotLoseItsPriority) {
  SendP("low", 0);
  SendP("high-late", 7, Millis(5'000));
  EXPECT_EQ(Head(), std::vector<std::string>{"low"});
  AdvanceTo(At(5'000));
  EXPECT_EQ(Head(), (std::vector<std::string>{"high-late", "low"}));
}

TEST_F(TopicPriorityTest, NackedAndTimedOutDeliveriesKeepTheirPriority) {
  SendP("low", 1);
  SendP("high", 8);
  SendP("top", 9);
  Deliver("top", Millis(2'000));
  Deliver("high", Millis(10'000));
  EXPECT_EQ(Head(), std::vector<std::string>{"low"});
  AdvanceTo(At(1'000));
  Apply("high", core::Event{EventKind::kNack});  // ready again at 1000, at priority 8
  EXPECT_EQ(Head(), (std::vector<std::string>{"high", "low"}));
  AdvanceResult r = AdvanceTo(At(2'000));  // "top"'s ack deadline passes: ready again, first
  EXPECT_EQ(r.ack_timeouts, 1);
  EXPECT_EQ(Head(), (std::vector<std::string>{"top", "high", "low"}));
  EXPECT_EQ(topic_.Info().ready, 3);
  EXPECT_EQ(topic_.Info().consuming, 0);
}

TEST_F(TopicPriorityTest, PeekReadyResumesAfterAPosition) {
  MessageRecord a = SendP("a", 9);
  MessageRecord b = SendP("b", 9);
  MessageRecord c = SendP("c", 3);
  SendP("d", 0);
  SendP("w", 5, Millis(1'000));  // waiting: never peeked
  EXPECT_EQ(Peek(std::nullopt), (std::vector<std::string>{"a", "b", "c", "d"}));
  EXPECT_EQ(Peek(Topic::PositionOf(a)), (std::vector<std::string>{"b", "c", "d"}));
  EXPECT_EQ(Peek(Topic::PositionOf(b), 1), std::vector<std::string>{"c"});
  EXPECT_EQ(Peek(Topic::PositionOf(c)), std::vector<std::string>{"d"});
  // A position whose record has gone still resumes where it was.
  Deliver("c");
  EXPECT_EQ(Peek(Topic::PositionOf(c)), std::vector<std::string>{"d"});
  EXPECT_EQ(Peek(PullPosition{7, IndexKey{kTimeMax, UINT64_MAX}}),
            (std::vector<std::string>{"d"}));  // empty levels between are skipped
  EXPECT_TRUE(Peek(PullPosition{-1, IndexKey{kTimeMin, 0}}).empty());                // past level 0
  EXPECT_EQ(Peek(PullPosition{kPriorityLevels, IndexKey{kTimeMax, 0}}).size(), 3u);  // before all
}

TEST_F(TopicPriorityTest, AnUpdateOfPriorityMovesTheMessageBetweenLevels) {
  SendP("a", 0);
  MessageRecord b = SendP("b", 0);
  EXPECT_EQ(Head(), (std::vector<std::string>{"a", "b"}));
  b.priority = 4;
  topic_.Update(b, now_);
  EXPECT_EQ(Head(), (std::vector<std::string>{"b", "a"}));
  EXPECT_EQ(topic_.Info().ready, 2);
  b.priority = 0;
  b.visible_at = At(500);  // and later: waiting again
  topic_.Update(b, now_);
  EXPECT_EQ(Head(), std::vector<std::string>{"a"});
  EXPECT_EQ(topic_.Info().waiting, 1);
  EXPECT_EQ(topic_.NextDue(Millis(kDay)), At(500));
}

// ---- lanes (docs/push.md) ----

class TopicLaneTest : public TopicPriorityTest {
 protected:
  MessageRecord SendPush(const std::string& id, int32_t priority, Millis delay = Millis(0)) {
    return SendP(id, priority, delay, 2, /*push=*/true);
  }
  std::vector<std::string> InLane(engine::Lane lane,
                                  const std::optional<PullPosition>& after = {}) {
    std::vector<std::string> ids;
    for (const MessageRecord* r : topic_.PeekReady(now_, after, 100, lane)) {
      ids.push_back(r->msg_id);
    }
    return ids;
  }
};

TEST_F(TopicLaneTest, EachLaneSeesOnlyItsOwnInPullOrderAndBothSeesPushFirst) {
  SendP("pull-low", 0);
  SendP("pull-high", 9);
  MessageRecord push_high = SendPush("push-high", 9);
  SendPush("push-low", 0);
  SendPush("push-later", 5, Millis(1'000));
  EXPECT_EQ(Topic::Level(push_high), 19);
  EXPECT_EQ(InLane(Lane::kPull), (std::vector<std::string>{"pull-high", "pull-low"}));
  EXPECT_EQ(InLane(Lane::kPush), (std::vector<std::string>{"push-high", "push-low"}));
  EXPECT_EQ(InLane(Lane::kBoth),
            (std::vector<std::string>{"push-high", "push-low", "pull-high", "pull-low"}));
  EXPECT_EQ(InLane(Lane::kBoth, Topic::PositionOf(push_high)),
            (std::vector<std::string>{"push-low", "pull-high", "pull-low"}));
  // A pull-lane position is past the whole push lane; a push-lane one is before the pull lane.
  EXPECT_TRUE(InLane(Lane::kPush, PullPosition{9, IndexKey{kTimeMin, 0}}).empty());
  EXPECT_EQ(InLane(Lane::kPull, Topic::PositionOf(push_high)).size(), 2u);
  // Counts and the topic's timer cover both lanes.
  EXPECT_EQ(topic_.Info().ready, 4);
  EXPECT_EQ(topic_.Info().waiting, 1);
  EXPECT_EQ(topic_.push_live_count(), 3u);
  EXPECT_EQ(topic_.NextDue(Millis(kDay)), At(1'000));
  Deliver("push-low");
  topic_.Forget("push-high", now_);
  EXPECT_EQ(topic_.push_live_count(), 2u);
  EXPECT_EQ(InLane(Lane::kPush), std::vector<std::string>{});
}

TEST_F(TopicLaneTest, AdvanceTellsWhichLaneHadSomethingBecomeConsumable) {
  SendPush("push", 0, Millis(100));
  AdvanceResult r = AdvanceTo(At(100));
  EXPECT_TRUE(r.became_push_ready);
  EXPECT_FALSE(r.became_ready);
  EXPECT_EQ(r.triggered, 1);
  SendP("pull", 0, Millis(100));
  r = AdvanceTo(At(200));
  EXPECT_TRUE(r.became_ready);
  EXPECT_FALSE(r.became_push_ready);
  // A push whose lease (ack deadline) passes is due again in its lane, with or without a retry
  // interval.
  Deliver("push", Millis(50));
  r = AdvanceTo(At(250));
  EXPECT_EQ(r.ack_timeouts, 1);
  EXPECT_TRUE(r.became_push_ready);
  EXPECT_FALSE(r.became_ready);
  core::Event deliver{EventKind::kDeliver, Millis(50)};
  deliver.retry_interval = Millis(100);
  Apply("push", deliver);
  r = AdvanceTo(At(300));
  EXPECT_FALSE(r.became_push_ready);  // the lease ended: waiting out the retry interval
  r = AdvanceTo(At(400));
  EXPECT_TRUE(r.became_push_ready);
  EXPECT_EQ(InLane(Lane::kPush), std::vector<std::string>{"push"});
}

}  // namespace
}  // namespace chronoq::engine
