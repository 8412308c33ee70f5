// Contract cases for pullMsg, ackMsg (ack and nack) and deleteMsg. See backend_contract.h.
#include "tests/contract/backend_contract.h"

namespace chronoq::contract {
namespace {

using core::MsgStatus;
using Ids = std::vector<std::string>;

// ---- pullMsg ----

TEST_P(BackendContractTest, PullOfUnknownTopicIsEmpty) {
  EXPECT_TRUE(Pull("nosuchtopic", 10).empty());
  EXPECT_TRUE(ListNames().empty());  // a pull does not create a topic
}

TEST_P(BackendContractTest, PullWithNothingReadyIsEmpty) {
  Send("t", "a", 1'000);
  EXPECT_TRUE(Pull("t", 10).empty());
  EXPECT_EQ(StatusOf("t", "a"), MsgStatus::kWaiting);
}

TEST_P(BackendContractTest, PullDeliversAsConsuming) {
  core::Message sent = Send("t", "a", 0, 60'000, 3, "body");
  Advance(40);
  std::vector<core::Message> got = Pull("t", 1, 5'000);
  ASSERT_EQ(got.size(), 1u);
  const core::Message& m = got[0];
  EXPECT_EQ(m.status, MsgStatus::kConsuming);
  EXPECT_EQ(m.record.retry, 1);
  EXPECT_EQ(m.record.payload, "body");
  EXPECT_EQ(m.record.produce_time, sent.record.produce_time);
  EXPECT_EQ(m.record.trigger_time, sent.record.trigger_time);
  EXPECT_EQ(m.record.expire_time, sent.record.expire_time);
  EXPECT_EQ(m.record.max_retry, 3);
  EXPECT_EQ(StatusOf("t", "a"), MsgStatus::kConsuming);
  EXPECT_TRUE(Pull("t", 10).empty());  // one consumer at a time
}

TEST_P(BackendContractTest, PullOrderIsTriggerTimeThenSendOrder) {
  Send("t", "late", 300);
  Send("t", "b", 100);
  Send("t", "c", 100);
  Send("t", "a", 50);
  Advance(40);
  Send("t", "d", 60);  // triggers at 100 as well, sent after b and c
  Advance(260);
  Send("t", "now", 0);  // ready at 300, sent after "late"
  EXPECT_EQ(PullIds("t", 10), (Ids{"a", "b", "c", "d", "late", "now"}));
}

TEST_P(BackendContractTest, PullBatchTakesUpToBatch) {
  for (int i = 0; i < 5; ++i) Send("t", "m" + std::to_string(i), 0);
  EXPECT_EQ(PullIds("t", 3), (Ids{"m0", "m1", "m2"}));
  EXPECT_EQ(PullIds("t", 3), (Ids{"m3", "m4"}));
  EXPECT_TRUE(PullIds("t", 3).empty());
  core::TopicInfo info = Info("t");
  EXPECT_EQ(info.consuming, 5);
  EXPECT_EQ(info.ready, 0);
}

TEST_P(BackendContractTest, PullSkipsEndedMessagesAndKeepsFillingTheBatch) {
  // Three messages whose ttl runs out before anyone pulls, ahead of two live ones. The clock
  // alone moves, so it is the pull that finds them ended.
  for (int i = 0; i < 3; ++i) Send("t", "short" + std::to_string(i), 0, 100);
  Send("t", "live0", 0);
  Send("t", "live1", 0);
  AdvanceClockOnly(100);
  EXPECT_EQ(PullIds("t", 2), (Ids{"live0", "live1"}));
  for (int i = 0; i < 3; ++i)
    EXPECT_EQ(StatusOf("t", "short" + std::to_string(i)), MsgStatus::kExpire);
  core::TopicInfo info = Info("t");
  EXPECT_EQ(info.ready, 0);
  EXPECT_EQ(info.consuming, 2);
}

TEST_P(BackendContractTest, PullSkipsMessagesWhoseDeliveriesAreUsedUp) {
  Send("t", "once", 0, 3'600'000, 0);
  ASSERT_EQ(PullIds("t", 1, 1'000), Ids{"once"});
  Send("t", "next", 0);
  AdvanceClockOnly(1'000);  // "once"'s only delivery timed out: ended, not ready
  EXPECT_EQ(StatusOf("t", "once"), MsgStatus::kRetryExhaust);
  EXPECT_EQ(PullIds("t", 5), Ids{"next"});
  EXPECT_EQ(StatusOf("t", "once"), MsgStatus::kRetryExhaust);
}

TEST_P(BackendContractTest, WaitingBecomesConsumableExactlyAtTriggerTime) {
  Send("t", "a", 10'000);
  Advance(9'999);
  EXPECT_TRUE(PullIds("t").empty());
  Advance(1);
  EXPECT_EQ(PullIds("t"), Ids{"a"});
}

TEST_P(BackendContractTest, AckTimeoutMakesMessageReadyAgain) {
  Send("t", "a", 0);
  ASSERT_EQ(Pull("t", 1, 5'000).size(), 1u);
  Advance(4'999);
  EXPECT_EQ(StatusOf("t", "a"), MsgStatus::kConsuming);
  EXPECT_TRUE(PullIds("t").empty());
  Advance(1);
  core::Message m = Get("t", "a");
  EXPECT_EQ(m.status, MsgStatus::kReady);
  EXPECT_EQ(m.record.retry, 1);
  EXPECT_EQ(Info("t").ready, 1);
  std::vector<core::Message> again = Pull("t", 1, 5'000);
  ASSERT_EQ(again.size(), 1u);
  EXPECT_EQ(again[0].record.retry, 2);
}

TEST_P(BackendContractTest, AtMostMaxRetryPlusOneDeliveries) {
  Send("t", "a", 0, 3'600'000, 2);
  for (int i = 1; i <= 3; ++i) {
    std::vector<core::Message> got = Pull("t", 1, 1'000);
    ASSERT_EQ(got.size(), 1u) << "delivery " << i;
    EXPECT_EQ(got[0].record.retry, i);
    Advance(1'000);
  }
  EXPECT_EQ(StatusOf("t", "a"), MsgStatus::kRetryExhaust);  // 6, not 2
  EXPECT_TRUE(PullIds("t").empty());
  EXPECT_EQ(Info("t"), core::TopicInfo{.topic = "t"});
}

// ---- ackMsg ----

TEST_P(BackendContractTest, AckOfConsumingEndsAsConsumeOk) {
  Send("t", "a", 0);
  Pull("t", 1, 5'000);
  EXPECT_TRUE(b_->Ack("t", "a").ok());
  EXPECT_EQ(StatusOf("t", "a"), MsgStatus::kConsumeOk);
  Advance(10'000);  // the ack deadline passing changes nothing now
  EXPECT_EQ(StatusOf("t", "a"), MsgStatus::kConsumeOk);
  EXPECT_TRUE(PullIds("t").empty());
  EXPECT_EQ(Info("t"), core::TopicInfo{.topic = "t"});
}

TEST_P(BackendContractTest, LateAckAfterAckTimeoutWins) {
  Send("t", "a", 0);
  Pull("t", 1, 5'000);
  Advance(20'000);
  ASSERT_EQ(StatusOf("t", "a"), MsgStatus::kReady);
  EXPECT_TRUE(b_->Ack("t", "a").ok());
  EXPECT_EQ(StatusOf("t", "a"), MsgStatus::kConsumeOk);
  EXPECT_TRUE(PullIds("t").empty());
}

TEST_P(BackendContractTest, AckAfterLastDeliveryTimedOutIsRefused) {
  Send("t", "a", 0, 3'600'000, 0);
  Pull("t", 1, 5'000);
  Advance(5'000);
  EXPECT_EQ(b_->Ack("t", "a").code(), Errc::kInvalidState);
  EXPECT_EQ(StatusOf("t", "a"), MsgStatus::kRetryExhaust);
}

TEST_P(BackendContractTest, AckErrorsChangeNothing) {
  EXPECT_EQ(b_->Ack("nosuchtopic", "a").code(), Errc::kNotFound);
  Send("t", "waiting", 1'000);
  Send("t", "ready", 0);
  EXPECT_EQ(b_->Ack("t", "unknown").code(), Errc::kNotFound);
  EXPECT_EQ(b_->Ack("t", "waiting").code(), Errc::kInvalidState);
  EXPECT_EQ(b_->Ack("t", "ready").code(), Errc::kInvalidState);  // never delivered
  EXPECT_EQ(StatusOf("t", "waiting"), MsgStatus::kWaiting);
  EXPECT_EQ(StatusOf("t", "ready"), MsgStatus::kReady);
  EXPECT_EQ(Get("t", "ready").record.retry, 0);
  EXPECT_EQ(PullIds("t"), Ids{"ready"});  // still deliverable: nothing changed
}

TEST_P(BackendContractTest, AckOfNackedMessageIsRefused) {
  Send("t", "a", 0);
  Pull("t");
  ASSERT_TRUE(b_->Ack("t", "a", false).ok());
  EXPECT_EQ(b_->Ack("t", "a").code(), Errc::kInvalidState);
  EXPECT_EQ(StatusOf("t", "a"), MsgStatus::kReady);
}

TEST_P(BackendContractTest, AckOfEndedMessagesIsRefused) {
  Send("t", "acked", 0);
  Send("t", "deleted", 0);
  Send("t", "expired", 0, 10);
  Pull("t", 1);
  ASSERT_TRUE(b_->Ack("t", "acked").ok());
  ASSERT_TRUE(b_->Delete("t", "deleted").ok());
  Advance(10);
  for (bool ack : {true, false}) {
    EXPECT_EQ(b_->Ack("t", "acked", ack).code(), Errc::kInvalidState) << ack;
    EXPECT_EQ(b_->Ack("t", "deleted", ack).code(), Errc::kInvalidState) << ack;
    EXPECT_EQ(b_->Ack("t", "expired", ack).code(), Errc::kInvalidState) << ack;
  }
  EXPECT_EQ(StatusOf("t", "acked"), MsgStatus::kConsumeOk);
  EXPECT_EQ(StatusOf("t", "deleted"), MsgStatus::kDelete);  // an ack never revives
  EXPECT_EQ(StatusOf("t", "expired"), MsgStatus::kExpire);
  Advance(options().retention.count());  // purged: unknown now
  EXPECT_EQ(b_->Ack("t", "acked").code(), Errc::kNotFound);
}

TEST_P(BackendContractTest, NackMakesReadyAtOnce) {
  Send("t", "a", 0);
  Send("t", "b", 0);
  Pull("t", 1);
  Advance(10);
  EXPECT_TRUE(b_->Ack("t", "a", false).ok());
  core::Message m = Get("t", "a");
  EXPECT_EQ(m.status, MsgStatus::kReady);
  EXPECT_EQ(m.record.retry, 1);
  EXPECT_EQ(Info("t").ready, 2);
  std::vector<core::Message> got = Pull("t", 2);
  ASSERT_EQ(got.size(), 2u);
  EXPECT_EQ(got[0].record.msg_id, "b");  // "b" was consumable since 0, "a" since the nack
  EXPECT_EQ(got[1].record.msg_id, "a");
  EXPECT_EQ(got[1].record.retry, 2);
}

TEST_P(BackendContractTest, NackOnLastDeliveryEndsAsRetryExhaust) {
  Send("t", "a", 0, 3'600'000, 1);
  Pull("t");
  ASSERT_TRUE(b_->Ack("t", "a", false).ok());
  EXPECT_EQ(StatusOf("t", "a"), MsgStatus::kReady);
  Pull("t");
  ASSERT_TRUE(b_->Ack("t", "a", false).ok());
  core::Message m = Get("t", "a");
  EXPECT_EQ(m.status, MsgStatus::kRetryExhaust);
  EXPECT_EQ(m.record.retry, 2);
  EXPECT_TRUE(PullIds("t").empty());
  EXPECT_EQ(Info("t"), core::TopicInfo{.topic = "t"});
}

TEST_P(BackendContractTest, NackOnlyAppliesToConsuming) {
  Send("t", "waiting", 1'000);
  Send("t", "ready", 0);
  Send("t", "timedout", 0);
  EXPECT_EQ(b_->Ack("t", "unknown", false).code(), Errc::kNotFound);
  EXPECT_EQ(b_->Ack("t", "waiting", false).code(), Errc::kInvalidState);
  EXPECT_EQ(b_->Ack("t", "ready", false).code(), Errc::kInvalidState);
  EXPECT_EQ(StatusOf("t", "waiting"), MsgStatus::kWaiting);  // not delivered early
  EXPECT_EQ(Get("t", "ready").record.retry, 0);
  ASSERT_EQ(PullIds("t", 2, 500), (Ids{"ready", "timedout"}));
  Advance(500);
  EXPECT_EQ(b_->Ack("t", "timedout", false).code(), Errc::kInvalidState);  // status 2 now
  EXPECT_EQ(Get("t", "timedout").record.retry, 1);
}

// ---- deleteMsg ----

TEST_P(BackendContractTest, DeleteInLifeEndsAsDelete) {
  Send("t", "consuming", 0);
  Send("t", "timedout", 0);
  Send("t", "ready", 0);
  Send("t", "waiting", 1'000);
  ASSERT_EQ(PullIds("t", 1, 60'000), Ids{"consuming"});
  ASSERT_EQ(PullIds("t", 1, 100), Ids{"timedout"});
  Advance(100);
  ASSERT_EQ(StatusOf("t", "consuming"), MsgStatus::kConsuming);
  ASSERT_EQ(StatusOf("t", "timedout"), MsgStatus::kReady);
  ASSERT_EQ(StatusOf("t", "ready"), MsgStatus::kReady);
  ASSERT_EQ(StatusOf("t", "waiting"), MsgStatus::kWaiting);
  for (const std::string id : {"consuming", "timedout", "ready", "waiting"}) {
    EXPECT_TRUE(b_->Delete("t", id).ok()) << id;
    EXPECT_EQ(StatusOf("t", id), MsgStatus::kDelete) << id;
  }
  EXPECT_EQ(Info("t"), core::TopicInfo{.topic = "t"});
  Advance(100'000);
  EXPECT_TRUE(PullIds("t", 10).empty());                             // never delivered again
  EXPECT_EQ(b_->Ack("t", "consuming").code(), Errc::kInvalidState);  // a late ack never revives
  EXPECT_EQ(b_->Ack("t", "timedout").code(), Errc::kInvalidState);
  EXPECT_EQ(StatusOf("t", "consuming"), MsgStatus::kDelete);
}

TEST_P(BackendContractTest, DeleteErrors) {
  EXPECT_EQ(b_->Delete("nosuchtopic", "a").code(), Errc::kNotFound);
  Send("t", "a", 0);
  EXPECT_EQ(b_->Delete("t", "unknown").code(), Errc::kNotFound);
  ASSERT_TRUE(b_->Delete("t", "a").ok());
  EXPECT_EQ(b_->Delete("t", "a").code(), Errc::kInvalidState);        // already ended
  EXPECT_EQ(b_->Delete("t", "a", true).code(), Errc::kInvalidState);  // even with release
  EXPECT_EQ(StatusOf("t", "a"), MsgStatus::kDelete);
  Send("t", "b", 0, 10);
  Advance(10);
  EXPECT_EQ(b_->Delete("t", "b").code(), Errc::kInvalidState);
  EXPECT_EQ(StatusOf("t", "b"), MsgStatus::kExpire);
}

TEST_P(BackendContractTest, DeleteWithReleaseForgetsAtOnce) {
  Send("t", "a", 5'000);
  Send("t", "b", 0);
  Pull("t");
  ASSERT_TRUE(b_->Delete("t", "a", true).ok());
  ASSERT_TRUE(b_->Delete("t", "b", true).ok());
  EXPECT_EQ(GetError("t", "a"), Errc::kNotFound);
  EXPECT_EQ(GetError("t", "b"), Errc::kNotFound);
  EXPECT_EQ(b_->Delete("t", "a", true).code(), Errc::kNotFound);
  EXPECT_EQ(b_->Ack("t", "b").code(), Errc::kNotFound);
  EXPECT_EQ(Info("t"), core::TopicInfo{.topic = "t"});
  core::Message again = Send("t", "a", 0, 1'000, 10, "again");  // a new message, not a reply
  EXPECT_EQ(again.record.payload, "again");
  EXPECT_EQ(again.status, MsgStatus::kReady);
}

TEST_P(BackendContractTest, DeleteWithoutReleaseReadableForRetention) {
  Send("t", "a", 5'000);
  Advance(100);
  ASSERT_TRUE(b_->Delete("t", "a").ok());
  AdvanceTo(At(100) + options().retention - Millis(1));
  EXPECT_EQ(StatusOf("t", "a"), MsgStatus::kDelete);
  Advance(1);
  EXPECT_EQ(GetError("t", "a"), Errc::kNotFound);
}

}  // namespace
}  // namespace chronoq::contract
