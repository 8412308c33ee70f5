// Push lane rules of the state machine (docs/push.md): the lane decided at send, the callback,
// lease and retry interval an attempt uses, and the attempt guard of outcomes.
#include <gtest/gtest.h>

#include "core/state_machine.h"

namespace chronoq::core {
namespace {

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
  r.callback = HttpTo("http://h/own", Millis(100));
  r.callback->retry_interval = Millis(5);
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

}  // namespace
}  // namespace chronoq::core
