#include "core/message.h"

#include <gtest/gtest.h>

#include <set>
#include <string>

namespace chronoq::core {
namespace {

const TimePoint kT0 = FromEpochMs(1'700'000'000'000);
TimePoint At(int64_t ms) { return kT0 + Millis(ms); }

// Pending from At(100), expiring at At(1000), maxRetry 1.
MessageRecord Pending() {
  MessageRecord r;
  r.topic = "t";
  r.msg_id = "m";
  r.produce_time = kT0;
  r.trigger_time = At(100);
  r.expire_time = At(1000);
  r.max_retry = 1;
  r.visible_at = r.trigger_time;
  return r;
}

TEST(MessageTest, StatusAtTriggerBoundary) {
  MessageRecord r = Pending();
  EXPECT_EQ(StatusAt(r, kT0), MsgStatus::kWaiting);
  EXPECT_EQ(StatusAt(r, At(99)), MsgStatus::kWaiting);
  EXPECT_EQ(StatusAt(r, At(100)), MsgStatus::kReady);  // exactly at trigger time: READY
  EXPECT_EQ(StatusAt(r, At(101)), MsgStatus::kReady);
}

TEST(MessageTest, StatusAtExpireBoundary) {
  MessageRecord r = Pending();
  EXPECT_EQ(StatusAt(r, At(999)), MsgStatus::kReady);
  EXPECT_EQ(StatusAt(r, At(1000)), MsgStatus::kExpire);  // exactly at expire time: ended
  EXPECT_EQ(StatusAt(r, At(5000)), MsgStatus::kExpire);
}

TEST(MessageTest, StatusAtWaitingPastExpireIsExpire) {
  MessageRecord r = Pending();
  r.expire_time = At(50);  // cannot happen with ttl > 0, but status must still be ended
  EXPECT_EQ(StatusAt(r, At(60)), MsgStatus::kExpire);
}

TEST(MessageTest, StatusAtDeliveredBoundaries) {
  MessageRecord r = Pending();
  r.phase = Phase::kDelivered;
  r.retry = 1;
  r.visible_at = At(300);  // ack deadline
  EXPECT_EQ(StatusAt(r, At(299)), MsgStatus::kConsuming);
  EXPECT_EQ(StatusAt(r, At(300)), MsgStatus::kReady);  // ack timeout passed, one delivery left
  EXPECT_EQ(StatusAt(r, At(999)), MsgStatus::kReady);
  EXPECT_EQ(StatusAt(r, At(1000)), MsgStatus::kRetryExhaust);  // delivered once, then ttl
}

TEST(MessageTest, StatusAtLastDeliveryDeadlineEndsIt) {
  MessageRecord r = Pending();
  r.phase = Phase::kDelivered;
  r.retry = 2;  // == maxRetry + 1
  r.visible_at = At(300);
  EXPECT_EQ(NaturalEndTime(r), At(300));
  EXPECT_EQ(StatusAt(r, At(299)), MsgStatus::kConsuming);
  EXPECT_EQ(StatusAt(r, At(300)), MsgStatus::kRetryExhaust);
}

TEST(MessageTest, NaturalEndTimeIsEarlierOfExpireAndLastDeadline) {
  MessageRecord r = Pending();
  EXPECT_EQ(NaturalEndTime(r), At(1000));
  r.phase = Phase::kDelivered;
  r.retry = 1;
  r.visible_at = At(300);
  EXPECT_EQ(NaturalEndTime(r), At(1000));  // one delivery left: the deadline is not the end
  r.retry = 2;
  EXPECT_EQ(NaturalEndTime(r), At(300));
  r.visible_at = At(5000);
  EXPECT_EQ(NaturalEndTime(r), At(1000));  // deadline after expiry: expiry wins
}

TEST(MessageTest, EndedRecordReportsStoredStatusAndEndTime) {
  MessageRecord r = Pending();
  r.phase = Phase::kEnded;
  r.ended_at = At(42);
  for (MsgStatus s :
       {MsgStatus::kConsumeOk, MsgStatus::kExpire, MsgStatus::kRetryExhaust, MsgStatus::kDelete}) {
    r.end_status = s;
    EXPECT_EQ(StatusAt(r, kT0), s);
    EXPECT_EQ(StatusAt(r, At(100'000)), s);
  }
  EXPECT_EQ(NaturalEndTime(r), At(42));
}

TEST(MessageTest, NaturalEndTimeSaturated) {
  MessageRecord r = Pending();
  r.expire_time = kTimeMax;
  EXPECT_EQ(NaturalEndTime(r), kTimeMax);
  EXPECT_EQ(StatusAt(r, kTimeMax - Millis(1)), MsgStatus::kReady);
}

TEST(MessageTest, StatusNamesAndWireValues) {
  EXPECT_EQ(static_cast<int>(MsgStatus::kWaiting), 1);
  EXPECT_EQ(static_cast<int>(MsgStatus::kReady), 2);
  EXPECT_EQ(static_cast<int>(MsgStatus::kConsuming), 3);
  EXPECT_EQ(static_cast<int>(MsgStatus::kConsumeOk), 4);
  EXPECT_EQ(static_cast<int>(MsgStatus::kExpire), 5);
  EXPECT_EQ(static_cast<int>(MsgStatus::kRetryExhaust), 6);
  EXPECT_EQ(static_cast<int>(MsgStatus::kDelete), 7);
  EXPECT_EQ(StatusName(MsgStatus::kWaiting), "WAITING");
  EXPECT_EQ(StatusName(MsgStatus::kReady), "READY");
  EXPECT_EQ(StatusName(MsgStatus::kConsuming), "CONSUMING");
  EXPECT_EQ(StatusName(MsgStatus::kConsumeOk), "CONSUME_OK");
  EXPECT_EQ(StatusName(MsgStatus::kExpire), "EXPIRE");
  EXPECT_EQ(StatusName(MsgStatus::kRetryExhaust), "RETRY_EXHAUST");
  EXPECT_EQ(StatusName(MsgStatus::kDelete), "DELETE");
}

TEST(MessageTest, InLifeIsOneToThree) {
  for (int s = 1; s <= 7; ++s) EXPECT_EQ(InLife(static_cast<MsgStatus>(s)), s <= 3) << s;
}

TEST(MessageTest, MaxDeliveriesDoesNotOverflow) {
  MessageRecord r;
  r.max_retry = std::numeric_limits<int32_t>::max();
  EXPECT_EQ(r.max_deliveries(), int64_t{1} << 31);
  r.max_retry = 0;
  EXPECT_EQ(r.max_deliveries(), 1);
}

}  // namespace
}  // namespace chronoq::core
