#include "core/state_machine.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <functional>
#include <limits>
#include <set>
#include <string>
#include <tuple>
#include <vector>

namespace chronoq::core {
namespace {

const TimePoint kT0 = FromEpochMs(1'700'000'000'000);
constexpr Millis kDelay(1'000);
constexpr Millis kTtl(60'000);
constexpr Millis kAck(5'000);

TimePoint At(int64_t ms) { return kT0 + Millis(ms); }

NewMessage NewMsg(Millis delay = kDelay, Millis ttl = kTtl, int32_t max_retry = 2) {
  return NewMessage{"topic", "m1", "payload", delay, ttl, max_retry};
}

MessageRecord MustApply(const MessageRecord& r, Event e, TimePoint now) {
  Result<MessageRecord> out = Apply(r, e, now);
  EXPECT_TRUE(out.has_value()) << out.error().ToString();
  return out.has_value() ? *out : r;
}

Event Deliver(Millis ack = kAck) { return Event{EventKind::kDeliver, ack}; }
Event Ack() { return Event{EventKind::kAck}; }
Event Nack() { return Event{EventKind::kNack}; }
Event Delete() { return Event{EventKind::kDelete}; }
Event Finalize() { return Event{EventKind::kFinalize}; }

// ---- The (status, event) table ----

// One record in a given status, built through legal moves only, plus the time it is looked at.
struct Case {
  std::string name;
  MsgStatus status;
  std::function<std::pair<MessageRecord, TimePoint>()> make;
  std::set<EventKind> legal;
};

// The trigger is at At(1000), the expiry at At(61000); maxRetry 2 (3 deliveries).
std::vector<Case> AllCases() {
  using E = EventKind;
  auto base = [] { return CreateRecord(NewMsg(), kT0, 7); };
  auto delivered = [base] { return MustApply(base(), Deliver(), At(1000)); };  // deadline 6000
  return {
      {"WaitingJustSent",
       MsgStatus::kWaiting,
       [base] {
         return std::pair{base(), kT0};
       },
       {E::kDelete, E::kCount}},
      {"WaitingOneMsBeforeTrigger",
       MsgStatus::kWaiting,
       [base] {
         return std::pair{base(), At(999)};
       },
       {E::kDelete, E::kCount}},
      {"ReadyAtTriggerTime",
       MsgStatus::kReady,
       [base] {
         return std::pair{base(), At(1000)};
       },
       {E::kDeliver, E::kDelete}},
      {"ReadySentWithoutDelay",
       MsgStatus::kReady,
       [] {
         return std::pair{CreateRecord(NewMsg(Millis(0)), kT0, 7), kT0};
       },
       {E::kDeliver, E::kDelete}},
      {"ReadyAfterNack",
       MsgStatus::kReady,
       [delivered] {
         return std::pair{MustApply(delivered(), Nack(), At(2000)), At(2500)};
       },
       {E::kDeliver, E::kDelete}},
      {"ReadyAfterAckTimeout",
       MsgStatus::kReady,
       [delivered] {
         return std::pair{delivered(), At(6000)};
       },
       {E::kDeliver, E::kAck, E::kDelete}},
      {"Consuming",
       MsgStatus::kConsuming,
       [delivered] {
         return std::pair{delivered(), At(2000)};
       },
       {E::kAck, E::kNack, E::kDelete, E::kTouch, E::kRelease}},
      {"ConsumingLastDelivery",
       MsgStatus::kConsuming,
       [] {
         MessageRecord r = CreateRecord(NewMsg(kDelay, kTtl, 0), kT0, 7);
         return std::pair{MustApply(r, Deliver(), At(1000)), At(2000)};
       },
       {E::kAck, E::kNack, E::kDelete, E::kTouch, E::kRelease}},
      {"ConsumeOk",
       MsgStatus::kConsumeOk,
       [delivered] {
         return std::pair{MustApply(delivered(), Ack(), At(2000)), At(2000)};
       },
       {}},
      {"ExpireDerived",
       MsgStatus::kExpire,
       [base] {
         return std::pair{base(), At(61000)};
       },
       {E::kFinalize}},
      {"ExpireDerivedLongAfter",
       MsgStatus::kExpire,
       [base] {
         return std::pair{base(), At(999'999'999)};
       },
       {E::kFinalize}},
      {"ExpireStored",
       MsgStatus::kExpire,
       [base] {
         return std::pair{MustApply(base(), Finalize(), At(61000)), At(61000)};
       },
       {}},
      {"RetryExhaustDerivedByTtlWhileConsuming",
       MsgStatus::kRetryExhaust,
       [base] {
         return std::pair{MustApply(base(), Deliver(Millis(100'000)), At(1000)), At(61000)};
       },
       {E::kFinalize}},
      {"RetryExhaustDerivedByTtlAfterNack",
       MsgStatus::kRetryExhaust,
       [delivered] {
         return std::pair{MustApply(delivered(), Nack(), At(2000)), At(61000)};
       },
       {E::kFinalize}},
      {"RetryExhaustDerivedByLastAckTimeout",
       MsgStatus::kRetryExhaust,
       [] {
         MessageRecord r = CreateRecord(NewMsg(kDelay, kTtl, 0), kT0, 7);
         return std::pair{MustApply(r, Deliver(), At(1000)), At(6000)};
       },
       {E::kFinalize}},
      {"RetryExhaustStoredByNack",
       MsgStatus::kRetryExhaust,
       [] {
         MessageRecord r = CreateRecord(NewMsg(kDelay, kTtl, 0), kT0, 7);
         return std::pair{MustApply(MustApply(r, Deliver(), At(1000)), Nack(), At(2000)), At(2000)};
       },
       {}},
      {"RetryExhaustStoredByFinalize",
       MsgStatus::kRetryExhaust,
       [delivered] {
         return std::pair{MustApply(delivered(), Finalize(), At(61000)), At(70000)};
       },
       {}},
      {"DeletedWhileWaiting",
       MsgStatus::kDelete,
       [base] {
         return std::pair{MustApply(base(), Delete(), kT0), kT0};
       },
       {}},
      {"DeletedWhileConsuming",
       MsgStatus::kDelete,
       [delivered] {
         return std::pair{MustApply(delivered(), Delete(), At(2000)), At(3000)};
       },
       {}},
  };
}

const std::vector<EventKind> kAllEvents = {
    EventKind::kDeliver,  EventKind::kAck,   EventKind::kNack,  EventKind::kDelete,
    EventKind::kFinalize, EventKind::kTouch, EventKind::kCount, EventKind::kRelease};

MessageRecord EndedCopy(const MessageRecord& r, MsgStatus status, TimePoint at) {
  MessageRecord out = r;
  out.phase = Phase::kEnded;
  out.end_status = status;
  out.ended_at = at;
  return out;
}

// The exact record each legal move must produce, spelled out field by field.
MessageRecord ExpectedAfter(const MessageRecord& r, EventKind e, TimePoint now) {
  MessageRecord out = r;
  switch (e) {
    case EventKind::kDeliver:
      out.phase = Phase::kDelivered;
      out.retry = r.retry + 1;
      out.visible_at = now + kAck;
      return out;
    case EventKind::kAck:
      return EndedCopy(r, MsgStatus::kConsumeOk, now);
    case EventKind::kNack:
      if (r.retry == r.max_retry + 1) return EndedCopy(r, MsgStatus::kRetryExhaust, now);
      out.phase = Phase::kPending;
      out.visible_at = now;
      return out;
    case EventKind::kDelete:
      return EndedCopy(r, MsgStatus::kDelete, now);
    case EventKind::kFinalize:
      return EndedCopy(r, r.retry == 0 ? MsgStatus::kExpire : MsgStatus::kRetryExhaust,
                       NaturalEndTime(r));
    case EventKind::kTouch:
      out.visible_at = now + kAck;
      return out;
    case EventKind::kCount:
      out.count = r.count + 1;  // no count trigger in these cases: it stays waiting
      return out;
    case EventKind::kRelease:  // not an attempt: the delivery is not counted
      out.phase = Phase::kPending;
      out.retry = r.retry - 1;
      out.retry_interval = Millis(0);
      out.visible_at = now;
      return out;
  }
  return out;
}

class StateMachinePairTest : public ::testing::TestWithParam<std::tuple<size_t, EventKind>> {};

TEST_P(StateMachinePairTest, LegalMovesExactlyAsDocumented) {
  const Case c = AllCases()[std::get<0>(GetParam())];
  const EventKind e = std::get<1>(GetParam());
  auto [r, now] = c.make();
  ASSERT_EQ(StatusAt(r, now), c.status) << c.name;
  const MessageRecord before = r;
  Result<MessageRecord> out = Apply(r, Event{e, kAck, 1}, now);
  EXPECT_EQ(r, before);  // the input is never modified
  if (!c.legal.contains(e)) {
    ASSERT_FALSE(out.has_value()) << c.name << " + " << EventName(e) << " must be refused";
    EXPECT_EQ(out.error().code(), Errc::kInvalidState);
    EXPECT_FALSE(out.error().message().empty());
    EXPECT_NE(out.error().message().find(std::string(StatusName(c.status))), std::string::npos)
        << out.error().message();
    return;
  }
  ASSERT_TRUE(out.has_value()) << c.name << " + " << EventName(e) << ": " << out.error().ToString();
  EXPECT_EQ(*out, ExpectedAfter(r, e, now));
  // The status right after the move.
  MsgStatus after = StatusAt(*out, now);
  switch (e) {
    case EventKind::kDeliver:
      EXPECT_EQ(after, MsgStatus::kConsuming);
      break;
    case EventKind::kAck:
      EXPECT_EQ(after, MsgStatus::kConsumeOk);
      break;
    case EventKind::kNack:
      EXPECT_EQ(after,
                r.retry == r.max_deliveries() ? MsgStatus::kRetryExhaust : MsgStatus::kReady);
      break;
    case EventKind::kDelete:
      EXPECT_EQ(after, MsgStatus::kDelete);
      break;
    case EventKind::kFinalize:
      EXPECT_EQ(after, c.status);
      break;
    case EventKind::kTouch:
      EXPECT_EQ(after, MsgStatus::kConsuming);
      break;
    case EventKind::kCount:
      EXPECT_EQ(after, MsgStatus::kWaiting);
      break;
    case EventKind::kRelease:
      EXPECT_EQ(after, MsgStatus::kReady);
      break;
  }
}

INSTANTIATE_TEST_SUITE_P(AllPairs, StateMachinePairTest,
                         ::testing::Combine(::testing::Range<size_t>(0, AllCases().size()),
                                            ::testing::ValuesIn(kAllEvents)),
                         [](const ::testing::TestParamInfo<StateMachinePairTest::ParamType>& info) {
                           std::string ev(EventName(std::get<1>(info.param)));
                           ev[0] = static_cast<char>(ev[0] - 'a' + 'A');
                           return AllCases()[std::get<0>(info.param)].name + "_" + ev;
                         });

TEST(StateMachineTest, TableCoversEveryStatus) {
  std::set<MsgStatus> seen;
  for (const Case& c : AllCases()) seen.insert(c.status);
  EXPECT_EQ(seen.size(), 7u);
}

// ---- Specific behaviours ----

TEST(StateMachineTest, CreateRecordWaitingWhenTriggerIsLater) {
  MessageRecord r = CreateRecord(NewMsg(), kT0, 42);
  EXPECT_EQ(r.topic, "topic");
  EXPECT_EQ(r.msg_id, "m1");
  EXPECT_EQ(r.payload, "payload");
  EXPECT_EQ(r.produce_time, kT0);
  EXPECT_EQ(r.trigger_time, At(1000));
  EXPECT_EQ(r.expire_time, At(61000));  // ttl counts from the trigger time
  EXPECT_EQ(r.visible_at, r.trigger_time);
  EXPECT_EQ(r.max_retry, 2);
  EXPECT_EQ(r.retry, 0);
  EXPECT_EQ(r.phase, Phase::kPending);
  EXPECT_EQ(r.seq, 42u);
  EXPECT_EQ(StatusAt(r, kT0), MsgStatus::kWaiting);
}

TEST(StateMachineTest, CreateRecordReadyForZeroAndNegativeDelay) {
  for (Millis d : {Millis(0), Millis(-1), Millis(-1'000'000), Millis::min()}) {
    MessageRecord r = CreateRecord(NewMsg(d), kT0, 1);
    EXPECT_EQ(r.trigger_time, kT0) << d.count();
    EXPECT_EQ(r.expire_time, kT0 + kTtl);
    EXPECT_EQ(StatusAt(r, kT0), MsgStatus::kReady);
  }
  EXPECT_EQ(StatusAt(CreateRecord(NewMsg(Millis(1)), kT0, 1), kT0), MsgStatus::kWaiting);
}

TEST(StateMachineTest, AckOfConsumingEndsAsConsumeOk) {
  MessageRecord r = MustApply(CreateRecord(NewMsg(Millis(0)), kT0, 1), Deliver(), kT0);
  MessageRecord acked = MustApply(r, Ack(), At(10));
  EXPECT_EQ(StatusAt(acked, At(10)), MsgStatus::kConsumeOk);
  EXPECT_EQ(acked.ended_at, At(10));
  EXPECT_EQ(StatusAt(acked, At(1'000'000'000)), MsgStatus::kConsumeOk);  // ended stays ended
}

TEST(StateMachineTest, LateAckAfterAckTimeoutWins) {
  MessageRecord r = MustApply(CreateRecord(NewMsg(Millis(0)), kT0, 1), Deliver(), kT0);
  ASSERT_EQ(StatusAt(r, At(5000)), MsgStatus::kReady);  // ack timeout passed
  ASSERT_EQ(StatusAt(r, At(30000)), MsgStatus::kReady);
  MessageRecord acked = MustApply(r, Ack(), At(30000));
  EXPECT_EQ(acked.end_status, MsgStatus::kConsumeOk);
  EXPECT_EQ(acked.retry, 1);
}

TEST(StateMachineTest, LateAckRefusedOnceLastDeliveryTimedOut) {
  MessageRecord r = CreateRecord(NewMsg(Millis(0), kTtl, 0), kT0, 1);
  r = MustApply(r, Deliver(), kT0);
  EXPECT_EQ(StatusAt(r, At(5000)), MsgStatus::kRetryExhaust);
  Result<MessageRecord> out = Apply(r, Ack(), At(5000));
  ASSERT_FALSE(out.has_value());
  EXPECT_EQ(out.error().code(), Errc::kInvalidState);
}

TEST(StateMachineTest, AckOfNackedMessageIsRefused) {
  MessageRecord r = MustApply(CreateRecord(NewMsg(Millis(0)), kT0, 1), Deliver(), kT0);
  r = MustApply(r, Nack(), At(1));
  EXPECT_EQ(Apply(r, Ack(), At(1)).error().code(), Errc::kInvalidState);
  EXPECT_EQ(Apply(r, Nack(), At(1)).error().code(), Errc::kInvalidState);
}

TEST(StateMachineTest, NackOnLastDeliveryEndsAsRetryExhaust) {
  MessageRecord r = CreateRecord(NewMsg(Millis(0), kTtl, 2), kT0, 1);
  for (int i = 1; i <= 3; ++i) {
    r = MustApply(r, Deliver(), At(i * 10));
    EXPECT_EQ(r.retry, i);
    r = MustApply(r, Nack(), At(i * 10 + 1));
    EXPECT_EQ(StatusAt(r, At(i * 10 + 1)), i < 3 ? MsgStatus::kReady : MsgStatus::kRetryExhaust);
  }
  EXPECT_EQ(r.phase, Phase::kEnded);
  EXPECT_EQ(r.ended_at, At(31));
  EXPECT_EQ(r.retry, 3);  // == maxRetry + 1
}

TEST(StateMachineTest, AtMostMaxRetryPlusOneDeliveries) {
  MessageRecord r = CreateRecord(NewMsg(Millis(0), Millis(10'000'000), 2), kT0, 1);
  TimePoint now = kT0;
  for (int i = 1; i <= 3; ++i) {
    ASSERT_EQ(StatusAt(r, now), MsgStatus::kReady) << i;
    r = MustApply(r, Deliver(), now);
    now += kAck;  // the ack timeout passes
  }
  EXPECT_EQ(r.retry, 3);
  EXPECT_EQ(StatusAt(r, now - Millis(1)), MsgStatus::kConsuming);
  EXPECT_EQ(StatusAt(r, now), MsgStatus::kRetryExhaust);  // 6, not 2
  EXPECT_EQ(NaturalEndTime(r), now);
  EXPECT_EQ(Apply(r, Deliver(), now).error().code(), Errc::kInvalidState);
  MessageRecord fin = MustApply(r, Finalize(), now + Millis(777));
  EXPECT_EQ(fin.end_status, MsgStatus::kRetryExhaust);
  EXPECT_EQ(fin.ended_at, now);  // at its natural end, not when finalized
}

TEST(StateMachineTest, TtlCountedFromTriggerTime) {
  MessageRecord r = CreateRecord(NewMsg(Millis(10'000), Millis(500)), kT0, 1);
  EXPECT_EQ(r.expire_time, At(10'500));
  EXPECT_EQ(StatusAt(r, At(9'999)), MsgStatus::kWaiting);
  EXPECT_EQ(StatusAt(r, At(10'000)), MsgStatus::kReady);
  EXPECT_EQ(StatusAt(r, At(10'499)), MsgStatus::kReady);
  EXPECT_EQ(StatusAt(r, At(10'500)), MsgStatus::kExpire);
  MessageRecord fin = MustApply(r, Finalize(), At(20'000));
  EXPECT_EQ(fin.ended_at, At(10'500));
}

TEST(StateMachineTest, TtlPassingDuringDeliveryEndsAsRetryExhaust) {
  MessageRecord r = CreateRecord(NewMsg(Millis(0), Millis(1'000)), kT0, 1);
  r = MustApply(r, Deliver(Millis(30'000)), kT0);
  EXPECT_EQ(StatusAt(r, At(999)), MsgStatus::kConsuming);
  EXPECT_EQ(StatusAt(r, At(1'000)), MsgStatus::kRetryExhaust);
  EXPECT_EQ(Apply(r, Ack(), At(1'000)).error().code(), Errc::kInvalidState);
  EXPECT_TRUE(Apply(r, Ack(), At(999)).has_value());
}

TEST(StateMachineTest, SaturatesHugeDelayTtlAndAckTimeout) {
  MessageRecord r = CreateRecord(NewMsg(Millis::max(), Millis::max()), kT0, 1);
  EXPECT_EQ(r.trigger_time, kTimeMax);
  EXPECT_EQ(r.expire_time, kTimeMax);
  EXPECT_EQ(StatusAt(r, kT0), MsgStatus::kWaiting);

  MessageRecord now_ready = CreateRecord(NewMsg(Millis(0), Millis::max()), kT0, 1);
  EXPECT_EQ(now_ready.expire_time, kTimeMax);  // not wrapped into the past
  EXPECT_EQ(StatusAt(now_ready, kT0), MsgStatus::kReady);
  EXPECT_EQ(StatusAt(now_ready, At(int64_t{1} << 60)), MsgStatus::kReady);

  MessageRecord d = MustApply(now_ready, Deliver(Millis::max()), kT0);
  EXPECT_EQ(d.visible_at, kTimeMax);
  EXPECT_EQ(StatusAt(d, At(int64_t{1} << 60)), MsgStatus::kConsuming);

  MessageRecord near_end = CreateRecord(
      NewMsg(Millis(std::numeric_limits<int64_t>::max() - ToEpochMs(kT0) - 5), Millis(1'000)), kT0,
      1);
  EXPECT_EQ(near_end.trigger_time, kTimeMax - Millis(5));
  EXPECT_EQ(near_end.expire_time, kTimeMax);
}

TEST(StateMachineTest, MaxRetryZeroAllowsOneDelivery) {
  MessageRecord r = CreateRecord(NewMsg(Millis(0), kTtl, 0), kT0, 1);
  EXPECT_EQ(r.max_deliveries(), 1);
  MessageRecord d = MustApply(r, Deliver(), kT0);
  MessageRecord nacked = MustApply(d, Nack(), At(1));
  EXPECT_EQ(nacked.end_status, MsgStatus::kRetryExhaust);
  EXPECT_EQ(StatusAt(d, At(4'999)), MsgStatus::kConsuming);
  EXPECT_EQ(StatusAt(d, At(5'000)), MsgStatus::kRetryExhaust);
  EXPECT_EQ(MustApply(d, Ack(), At(4'999)).end_status, MsgStatus::kConsumeOk);
}

TEST(StateMachineTest, MaxRetryInt32MaxDoesNotOverflow) {
  constexpr int32_t kMax = std::numeric_limits<int32_t>::max();
  MessageRecord r = CreateRecord(NewMsg(Millis(0), kTtl, kMax), kT0, 1);
  EXPECT_EQ(r.max_deliveries(), int64_t{kMax} + 1);
  r.retry = kMax - 1;  // pretend all but two deliveries happened
  r = MustApply(r, Deliver(), kT0);
  EXPECT_EQ(r.retry, kMax);
  r = MustApply(r, Nack(), At(1));
  EXPECT_EQ(StatusAt(r, At(1)), MsgStatus::kReady);
  r = MustApply(r, Deliver(), At(1));
  EXPECT_EQ(r.retry, int64_t{kMax} + 1);  // the last allowed delivery
  EXPECT_EQ(StatusAt(r, At(1) + kAck), MsgStatus::kRetryExhaust);
  EXPECT_EQ(MustApply(r, Nack(), At(2)).end_status, MsgStatus::kRetryExhaust);
}

TEST(StateMachineTest, DeliverNeedsPositiveAckTimeout) {
  MessageRecord r = CreateRecord(NewMsg(Millis(0)), kT0, 1);
  for (Millis a : {Millis(0), Millis(-1)}) {
    Result<MessageRecord> out = Apply(r, Event{EventKind::kDeliver, a}, kT0);
    ASSERT_FALSE(out.has_value());
    EXPECT_EQ(out.error().code(), Errc::kInvalidArgument);
  }
}

TEST(StateMachineTest, DeleteKeepsRetryAndTimes) {
  MessageRecord r = MustApply(CreateRecord(NewMsg(Millis(0)), kT0, 1), Deliver(), kT0);
  MessageRecord del = MustApply(r, Delete(), At(3));
  EXPECT_EQ(del.retry, 1);
  EXPECT_EQ(del.trigger_time, r.trigger_time);
  EXPECT_EQ(del.expire_time, r.expire_time);
  EXPECT_EQ(StatusAt(del, At(100'000'000)), MsgStatus::kDelete);            // ttl no longer matters
  EXPECT_EQ(Apply(del, Ack(), At(4)).error().code(), Errc::kInvalidState);  // no revival
}

TEST(StateMachineTest, RedeliveryAfterAckTimeoutMovesDeadline) {
  MessageRecord r = MustApply(CreateRecord(NewMsg(Millis(0)), kT0, 1), Deliver(), kT0);
  MessageRecord again = MustApply(r, Deliver(Millis(7)), At(5'000));
  EXPECT_EQ(again.retry, 2);
  EXPECT_EQ(again.visible_at, At(5'007));
  EXPECT_EQ(StatusAt(again, At(5'006)), MsgStatus::kConsuming);
}

TEST(StateMachineTest, ReplaceableOnlyWhenEnded) {
  MessageRecord r = CreateRecord(NewMsg(), kT0, 1);
  EXPECT_FALSE(Replaceable(r, kT0));       // waiting
  EXPECT_FALSE(Replaceable(r, At(1000)));  // ready
  EXPECT_TRUE(Replaceable(r, At(61000)));  // expired, not yet stored
  MessageRecord d = MustApply(r, Deliver(), At(1000));
  EXPECT_FALSE(Replaceable(d, At(2000)));  // consuming
  EXPECT_TRUE(Replaceable(MustApply(d, Ack(), At(2000)), At(2000)));
  EXPECT_TRUE(Replaceable(MustApply(r, Delete(), kT0), kT0));
}

TEST(StateMachineTest, EventNames) {
  EXPECT_EQ(EventName(EventKind::kDeliver), "deliver");
  EXPECT_EQ(EventName(EventKind::kAck), "ack");
  EXPECT_EQ(EventName(EventKind::kNack), "nack");
  EXPECT_EQ(EventName(EventKind::kDelete), "delete");
  EXPECT_EQ(EventName(EventKind::kFinalize), "finalize");
}

TEST(StateMachineTest, EventNamesOfTheExtensions) {
  EXPECT_EQ(EventName(EventKind::kTouch), "touch");
  EXPECT_EQ(EventName(EventKind::kCount), "count");
}

TEST(StateMachineTest, AnAbsoluteTriggerTimeWinsOverTheDelayAndThePastMeansNow) {
  NewMessage m = NewMsg(Millis(5));
  m.trigger_time = At(9'000);
  m.priority = 7;
  m.count_trigger = 3;
  MessageRecord r = CreateRecord(m, kT0, 1);
  EXPECT_EQ(r.trigger_time, At(9'000));
  EXPECT_EQ(r.visible_at, At(9'000));
  EXPECT_EQ(r.expire_time, At(9'000) + kTtl);
  EXPECT_EQ(r.priority, 7);
  EXPECT_EQ(r.count_trigger, 3);
  m.trigger_time = At(-50'000);
  MessageRecord past = CreateRecord(m, kT0, 2);
  EXPECT_EQ(past.trigger_time, kT0);
  EXPECT_EQ(StatusAt(past, kT0), MsgStatus::kReady);
}

TEST(StateMachineTest, ReachingTheCountTriggerMakesAWaitingMessageReadyNow) {
  NewMessage m = NewMsg(Millis(60'000));
  m.count_trigger = 3;
  MessageRecord r = CreateRecord(m, kT0, 1);
  MessageRecord once = MustApply(r, Event{EventKind::kCount, Millis(0), 2}, At(10));
  EXPECT_EQ(once.count, 2);
  EXPECT_EQ(StatusAt(once, At(10)), MsgStatus::kWaiting);
  MessageRecord twice = MustApply(once, Event{EventKind::kCount, Millis(0), 5}, At(20));
  EXPECT_EQ(twice.count, 7);
  EXPECT_EQ(twice.visible_at, At(20));
  EXPECT_EQ(StatusAt(twice, At(20)), MsgStatus::kReady);
  // A ready message is counted no more.
  Result<MessageRecord> again = Apply(twice, Event{EventKind::kCount, Millis(0), 1}, At(20));
  ASSERT_FALSE(again.has_value());
  EXPECT_EQ(again.error().code(), Errc::kInvalidState);
  EXPECT_NE(again.error().message().find("READY"), std::string::npos);
  // A count below 1 is a programming error of the caller.
  EXPECT_EQ(Apply(r, Event{EventKind::kCount, Millis(0), 0}, At(10)).error().code(),
            Errc::kInvalidArgument);
}

TEST(StateMachineTest, ANackReasonBecomesTheLastErrorAlsoOnTheLastDelivery) {
  MessageRecord d = MustApply(CreateRecord(NewMsg(Millis(0), kTtl, 0), kT0, 1), Deliver(), kT0);
  Event nack{EventKind::kNack};
  nack.reason = "payment service down";
  MessageRecord ended = MustApply(d, nack, At(10));
  EXPECT_EQ(ended.end_status, MsgStatus::kRetryExhaust);
  EXPECT_EQ(ended.last_error, "payment service down");
  MessageRecord d2 = MustApply(CreateRecord(NewMsg(Millis(0)), kT0, 2), Deliver(), kT0);
  EXPECT_EQ(MustApply(d2, nack, At(10)).last_error, "payment service down");
  EXPECT_EQ(MustApply(d2, Nack(), At(10)).last_error, "");
}

TEST(StateMachineTest, TouchGivesAConsumingMessageANewDeadline) {
  MessageRecord d = MustApply(CreateRecord(NewMsg(Millis(0)), kT0, 1), Deliver(), kT0);
  MessageRecord t = MustApply(d, Event{EventKind::kTouch, Millis(60'000)}, At(4'000));
  EXPECT_EQ(t.visible_at, At(64'000));
  EXPECT_EQ(t.retry, d.retry);
  EXPECT_EQ(StatusAt(t, At(10'000)), MsgStatus::kConsuming);
}

TEST(StateMachineTest, UpdateMovesTheTriggerTimeAndKeepsTheTtl) {
  MessageRecord r = CreateRecord(NewMsg(), kT0, 1);  // trigger At(1000), expiry At(61000)
  MessageUpdate later;
  later.trigger_time = At(30'000);
  Result<MessageRecord> u = ApplyUpdate(r, later, At(10));
  ASSERT_TRUE(u.has_value());
  EXPECT_EQ(u->trigger_time, At(30'000));
  EXPECT_EQ(u->visible_at, At(30'000));
  EXPECT_EQ(u->expire_time, At(90'000));
  MessageUpdate now;
  now.trigger_time = At(-5);
  u = ApplyUpdate(r, now, At(10));
  ASSERT_TRUE(u.has_value());
  EXPECT_EQ(u->visible_at, At(10));
  EXPECT_EQ(StatusAt(*u, At(10)), MsgStatus::kReady);
  MessageUpdate fields;
  fields.payload = "new";
  fields.ttl = Millis(5'000);
  fields.max_retry = 4;
  fields.priority = 9;
  u = ApplyUpdate(r, fields, At(10));
  ASSERT_TRUE(u.has_value());
  EXPECT_EQ(u->payload, "new");
  EXPECT_EQ(u->expire_time, At(6'000));
  EXPECT_EQ(u->max_retry, 4);
  EXPECT_EQ(u->priority, 9);
  EXPECT_EQ(u->visible_at, r.visible_at);
}

// A delivery whose ack deadline passed is READY; given a later trigger time it waits again like a
// fresh send (pending), rather than turning into a delivery with a new deadline.
TEST(StateMachineTest, UpdateOfATimedOutDeliveryMakesItPending) {
  MessageRecord d = MustApply(CreateRecord(NewMsg(Millis(0)), kT0, 1), Deliver(), kT0);
  ASSERT_EQ(StatusAt(d, At(10'000)), MsgStatus::kReady);  // the 5 s deadline passed
  MessageUpdate later;
  later.trigger_time = At(20'000);
  Result<MessageRecord> u = ApplyUpdate(d, later, At(10'000));
  ASSERT_TRUE(u.has_value());
  EXPECT_EQ(u->phase, Phase::kPending);
  EXPECT_EQ(u->retry, 1);
  EXPECT_EQ(StatusAt(*u, At(10'000)), MsgStatus::kWaiting);
  EXPECT_EQ(StatusAt(*u, At(20'000)), MsgStatus::kReady);
  MessageUpdate priority;
  priority.priority = 3;  // no new trigger time: still the timed-out delivery (a late ack applies)
  u = ApplyUpdate(d, priority, At(10'000));
  ASSERT_TRUE(u.has_value());
  EXPECT_EQ(u->phase, Phase::kDelivered);
  EXPECT_TRUE(Apply(*u, Ack(), At(10'000)).has_value());
}

TEST(StateMachineTest, UpdateAppliesToWaitingAndReadyOnly) {
  MessageRecord d = MustApply(CreateRecord(NewMsg(Millis(0)), kT0, 1), Deliver(), kT0);
  MessageUpdate u;
  u.priority = 1;
  Result<MessageRecord> out = ApplyUpdate(d, u, At(10));
  ASSERT_FALSE(out.has_value());
  EXPECT_EQ(out.error().code(), Errc::kInvalidState);
  EXPECT_NE(out.error().message().find("CONSUMING"), std::string::npos);
  EXPECT_TRUE(ApplyUpdate(CreateRecord(NewMsg(Millis(0)), kT0, 2), u, At(10)).has_value());
}

}  // namespace
}  // namespace chronoq::core

namespace chronoq::core {
namespace {

// ---- Issue 15: retry intervals, dead letters, redrive ----

Event DeliverWithInterval(Millis interval) {
  Event e = Deliver();
  e.retry_interval = interval;
  return e;
}

TEST(StateMachineTest, ANackWithARetryIntervalWaitsThenIsReady) {
  MessageRecord r = CreateRecord(NewMsg(Millis(0)), At(0), 1);
  r = MustApply(r, Deliver(), At(10));
  Event nack = Nack();
  nack.retry_interval = Millis(2'000);
  r = MustApply(r, nack, At(20));
  EXPECT_EQ(r.phase, Phase::kPending);
  EXPECT_EQ(r.visible_at, At(2'020));
  EXPECT_EQ(r.retry_interval, Millis(0));  // only a delivery carries one
  EXPECT_EQ(StatusAt(r, At(2'019)), MsgStatus::kWaiting);
  EXPECT_EQ(StatusAt(r, At(2'020)), MsgStatus::kReady);
  EXPECT_FALSE(Apply(r, Deliver(), At(2'019)).has_value());
  EXPECT_TRUE(Apply(r, Deliver(), At(2'020)).has_value());
}

TEST(StateMachineTest, ATimedOutDeliveryWaitsForItsRetryIntervalAndMayStillBeAcked) {
  MessageRecord r = CreateRecord(NewMsg(Millis(0)), At(0), 1);
  r = MustApply(r, DeliverWithInterval(Millis(3'000)), At(0));
  EXPECT_EQ(r.ack_deadline(), At(5'000));
  EXPECT_EQ(r.visible_at, At(8'000));
  EXPECT_EQ(StatusAt(r, At(4'999)), MsgStatus::kConsuming);
  EXPECT_EQ(StatusAt(r, At(5'000)), MsgStatus::kWaiting);
  EXPECT_EQ(StatusAt(r, At(7'999)), MsgStatus::kWaiting);
  EXPECT_EQ(StatusAt(r, At(8'000)), MsgStatus::kReady);
  // Neither a nack nor a touch applies once the deadline passed; a late ack does.
  EXPECT_FALSE(Apply(r, Nack(), At(6'000)).has_value());
  EXPECT_FALSE(Apply(r, Event{EventKind::kTouch, kAck}, At(6'000)).has_value());
  EXPECT_EQ(MustApply(r, Ack(), At(6'000)).end_status, MsgStatus::kConsumeOk);
  // A touch before the deadline keeps the interval after the new deadline.
  MessageRecord touched = MustApply(r, Event{EventKind::kTouch, Millis(10'000)}, At(1'000));
  EXPECT_EQ(touched.ack_deadline(), At(11'000));
  EXPECT_EQ(touched.visible_at, At(14'000));
  // Delivered again after the interval, it takes the interval of that delivery.
  MessageRecord again = MustApply(r, DeliverWithInterval(Millis(0)), At(8'000));
  EXPECT_EQ(again.retry, 2);
  EXPECT_EQ(again.visible_at, again.ack_deadline());
}

TEST(StateMachineTest, TheLastDeliveryEndsAtItsDeadlineNotAfterTheInterval) {
  MessageRecord r = CreateRecord(NewMsg(Millis(0), kTtl, /*max_retry=*/0), At(0), 1);
  r = MustApply(r, DeliverWithInterval(Millis(3'000)), At(0));
  EXPECT_EQ(NaturalEndTime(r), At(5'000));
  EXPECT_EQ(StatusAt(r, At(5'000)), MsgStatus::kRetryExhaust);
  MessageRecord ended = MustApply(r, Finalize(), At(9'000));
  EXPECT_EQ(ended.ended_at, At(5'000));
}

TEST(StateMachineTest, UpdatingATimedOutDeliveryDropsItsRetryInterval) {
  MessageRecord r = CreateRecord(NewMsg(Millis(0)), At(0), 1);
  r = MustApply(r, DeliverWithInterval(Millis(3'000)), At(0));
  MessageUpdate u;
  u.trigger_time = At(20'000);
  Result<MessageRecord> up = ApplyUpdate(r, u, At(6'000));  // WAITING for its retry
  ASSERT_TRUE(up.has_value()) << up.error().ToString();
  EXPECT_EQ(up->phase, Phase::kPending);
  EXPECT_EQ(up->retry_interval, Millis(0));
  EXPECT_EQ(up->visible_at, At(20'000));
}

TEST(StateMachineTest, ResolveDefaultsFillsOnlyWhatTheMessageLeftOut) {
  EffectiveTopicConfig topic;
  topic.ttl = Millis(7'000);
  topic.max_retry = 4;
  NewMessage bare{"t", "a", "p", Millis(0), std::nullopt, std::nullopt};
  ResolveDefaults(bare, topic);
  EXPECT_EQ(bare.ttl, Millis(7'000));
  EXPECT_EQ(bare.max_retry, 4);
  NewMessage own{"t", "a", "p", Millis(0), Millis(9'000), 0};
  ResolveDefaults(own, topic);
  EXPECT_EQ(own.ttl, Millis(9'000));
  EXPECT_EQ(own.max_retry, 0);
}

TEST(StateMachineTest, ADeadLetterKeepsIdPayloadPriorityAndErrorAndSaysWhereItDied) {
  NewMessage m = NewMsg(Millis(0), Millis(1'000), 0);
  m.priority = 7;
  MessageRecord r = CreateRecord(m, At(0), 1);
  r = MustApply(r, Deliver(), At(0));
  Event nack = Nack();
  nack.reason = "boom";
  MessageRecord ended = MustApply(r, nack, At(100));
  ASSERT_EQ(ended.end_status, MsgStatus::kRetryExhaust);
  EffectiveTopicConfig dlq;
  dlq.ttl = Millis(50'000);
  dlq.max_retry = 3;
  MessageRecord dead = DeadLetterOf(ended, "dlq", dlq, At(200), 99);
  EXPECT_EQ(dead.topic, "dlq");
  EXPECT_EQ(dead.msg_id, "m1");
  EXPECT_EQ(dead.payload, "payload");
  EXPECT_EQ(dead.priority, 7);
  EXPECT_EQ(dead.last_error, "boom");
  EXPECT_EQ(dead.retry, 0);
  EXPECT_EQ(dead.seq, 99u);
  EXPECT_EQ(StatusAt(dead, At(200)), MsgStatus::kReady);
  EXPECT_EQ(dead.expire_time, At(50'200));
  EXPECT_EQ(dead.max_retry, 3);
  ASSERT_TRUE(dead.dead_letter.has_value());
  EXPECT_EQ(*dead.dead_letter, (DeadLetter{"topic", MsgStatus::kRetryExhaust, 1, At(100)}));

  EffectiveTopicConfig source;
  source.ttl = Millis(20'000);
  source.max_retry = 1;
  MessageRecord back = RedriveOf(dead, source, Millis(500), At(300), 100);
  EXPECT_EQ(back.topic, "topic");
  EXPECT_EQ(back.msg_id, "m1");
  EXPECT_EQ(back.payload, "payload");
  EXPECT_EQ(back.priority, 7);
  EXPECT_EQ(back.retry, 0);
  EXPECT_FALSE(back.dead_letter.has_value());
  EXPECT_EQ(back.trigger_time, At(800));
  EXPECT_EQ(back.expire_time, At(20'800));
  EXPECT_EQ(back.max_retry, 1);
  EXPECT_EQ(StatusAt(back, At(799)), MsgStatus::kWaiting);
  EXPECT_FALSE(back.push);  // no callback of its own, none in the source topic
}

}  // namespace
}  // namespace chronoq::core
