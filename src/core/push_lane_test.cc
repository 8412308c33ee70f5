// Push delivery in the state machine (docs/push.md): the lane decided at the send, the callback's
// lease and retry interval, attempt-guarded outcomes, and what dead letters and redrive keep.
#include <gtest/gtest.h>

#include "core/state_machine.h"

namespace chronoq::core {
namespace {

const TimePoint kT0 = FromEpochMs(1'700'000'000'000);
TimePoint At(int64_t ms) { return kT0 + Millis(ms); }

MessageRecord MustApply(const MessageRecord& r, Event e, TimePoint now) {
  Result<MessageRecord> out = Apply(r, e, now);
  EXPECT_TRUE(out.has_value()) << out.error().ToString();
  return out.has_value() ? *out : r;
}

Event Deliver() { return Event{EventKind::kDeliver, Millis(5'000)}; }
Event Nack() { return Event{EventKind::kNack}; }

Callback HttpTo(std::string url, Millis timeout) {
  Callback cb;
  cb.url = std::move(url);
  cb.timeout = timeout;
  return cb;
}

TEST(PushLaneTest, ResolveDefaultsPutsAMessageInThePushLaneWhenItOrItsTopicHasACallback) {
  EffectiveTopicConfig topic;
  topic.ttl = Millis(1000);
  topic.max_retry = 2;
  NewMessage plain;
  plain.topic = "t";
  ResolveDefaults(plain, topic);
  EXPECT_FALSE(plain.push);
  NewMessage own;
  own.topic = "t";
  own.callback = HttpTo("http://h/x", Millis(5'000));
  ResolveDefaults(own, topic);
  EXPECT_TRUE(own.push);
  EXPECT_TRUE(CreateRecord(own, TimePoint(Millis(5)), 1).push);
  EXPECT_EQ(CreateRecord(own, TimePoint(Millis(5)), 1).callback, own.callback);
  topic.callback = HttpTo("http://h/topic", Millis(5'000));
  NewMessage by_topic;
  by_topic.topic = "t";
  ResolveDefaults(by_topic, topic);
  EXPECT_TRUE(by_topic.push);
}

TEST(PushLaneTest, TheMessagesOwnCallbackWinsForTargetLeaseAndRetryInterval) {
  EffectiveTopicConfig topic;
  topic.retry_interval = Millis(700);
  MessageRecord r;
  EXPECT_EQ(CallbackOf(r, topic), std::nullopt);
  EXPECT_EQ(PushLease(r, topic, Millis(2000)), kDefaultCallbackTimeout + Millis(2000));
  EXPECT_EQ(RetryIntervalOf(r, topic), Millis(700));
  topic.callback = HttpTo("http://h/topic", Millis(300));
  EXPECT_EQ(CallbackOf(r, topic)->url, "http://h/topic");
  EXPECT_EQ(PushLease(r, topic, Millis(2000)), Millis(2300));
  Callback own = HttpTo("http://h/own", Millis(100));
  own.retry_interval = Millis(5);
  r.callback = own;
  EXPECT_EQ(CallbackOf(r, topic)->url, "http://h/own");
  EXPECT_EQ(PushLease(r, topic, Millis(2000)), Millis(2100));
  EXPECT_EQ(RetryIntervalOf(r, topic), Millis(5));
}

TEST(PushLaneTest, AnOutcomeAppliesOnlyToTheAttemptItNames) {
  MessageRecord r;
  r.msg_id = "m";
  r.retry = 2;
  EXPECT_TRUE(CheckAttempt(r, 0).ok());
  EXPECT_TRUE(CheckAttempt(r, 2).ok());
  Status s = CheckAttempt(r, 1);
  EXPECT_EQ(s.code(), Errc::kInvalidState);
  EXPECT_EQ(s.message(), "push attempt 1 of message 'm' is over: the message is at attempt 2");
}

TEST(PushLaneTest, ADeadLetterKeepsItsCallbackInThePullLaneAndARedriveGoesBackToPush) {
  EffectiveTopicConfig topic;
  topic.ttl = Millis(1'000);
  topic.max_retry = 0;
  NewMessage m;
  m.topic = "src";
  m.msg_id = "m";
  m.callback = HttpTo("http://h/own", Millis(100));
  ResolveDefaults(m, topic);
  MessageRecord r = MustApply(CreateRecord(m, At(0), 1), Deliver(), At(0));
  MessageRecord ended = MustApply(r, Nack(), At(10));
  ASSERT_EQ(ended.end_status, MsgStatus::kRetryExhaust);
  EffectiveTopicConfig dlq = topic;
  dlq.callback = HttpTo("http://h/dlq", Millis(100));  // does not make dead letters pushed
  MessageRecord dead = DeadLetterOf(ended, "dlq", dlq, At(20), 2);
  EXPECT_EQ(dead.callback, m.callback);
  EXPECT_FALSE(dead.push);
  MessageRecord back = RedriveOf(dead, topic, Millis(0), At(30), 3);
  EXPECT_EQ(back.callback, m.callback);
  EXPECT_TRUE(back.push);
  // Without a callback of its own: the push lane when the source topic has one at the redrive.
  dead.callback.reset();
  EXPECT_FALSE(RedriveOf(dead, topic, Millis(0), At(30), 3).push);
  EffectiveTopicConfig pushing = topic;
  pushing.callback = HttpTo("http://h/src", Millis(100));
  MessageRecord by_topic = RedriveOf(dead, pushing, Millis(0), At(30), 3);
  EXPECT_TRUE(by_topic.push);
  EXPECT_EQ(by_topic.callback, std::nullopt);
}

}  // namespace
}  // namespace chronoq::core
