// Contract cases for issue 14's message management (API-EXTENSIONS.md sections 1-3): the
// extension fields' defaults, absolute trigger times, sendMsgBatch, ackMsgBatch with nack
// reasons, updateMsg (trigger now included), touchMsg and countMsg. See backend_contract.h.
#include "tests/contract/backend_contract.h"

namespace chronoq::contract {
namespace {

using backend::AckItem;
using core::MsgStatus;
using Ids = std::vector<std::string>;
using Names = std::vector<std::string>;

constexpr int64_t kHour = 3'600'000;

core::MessageUpdate TriggerAt(TimePoint t) {
  core::MessageUpdate u;
  u.trigger_time = t;
  return u;
}

// ---- defaults: a camellia-style message is what it was before issue 14 ----

void ExpectDefaults(const core::Message& m, const std::string& where) {
  EXPECT_EQ(m.record.priority, 0) << where;
  EXPECT_EQ(m.record.count_trigger, 0) << where;
  EXPECT_EQ(m.record.count, 0) << where;
  EXPECT_EQ(m.record.last_error, "") << where;
}

TEST_P(BackendContractTest, MessageWithoutExtensionFieldsKeepsTheirDefaults) {
  ExpectDefaults(Send("t", "a", 0), "send answer");
  ExpectDefaults(Send("t", "w", 1'000), "send answer (waiting)");
  ExpectDefaults(Get("t", "a"), "get");
  std::vector<core::Message> got = Pull("t", 1, 1'000);
  ASSERT_EQ(got.size(), 1u);
  ExpectDefaults(got[0], "pull");
  ASSERT_TRUE(b_->Ack("t", "a", false).ok());  // a nack without a reason
  ExpectDefaults(Get("t", "a"), "after a nack");
  ASSERT_EQ(Pull("t", 1, 1'000).size(), 1u);
  Advance(1'000);  // an ack timeout
  ExpectDefaults(Get("t", "a"), "after an ack timeout");
  ASSERT_TRUE(b_->Ack("t", "a").ok());  // a late ack
  ExpectDefaults(Get("t", "a"), "ended");
  ExpectDefaults(Get("t", "w"), "waiting");
  ASSERT_TRUE(Restart());
  ExpectDefaults(Get("t", "a"), "ended, after a restart");
  ExpectDefaults(Get("t", "w"), "waiting, after a restart");
}

TEST_P(BackendContractTest, ExtensionFieldsAreKeptAsSent) {
  core::NewMessage m = NewMsg("t", "a", 1'000, 7, "body");
  m.count_trigger = 5;
  core::Message sent = SendMsg(m);
  EXPECT_EQ(sent.record.priority, 7);
  EXPECT_EQ(sent.record.count_trigger, 5);
  EXPECT_EQ(sent.record.count, 0);
  EXPECT_EQ(Get("t", "a").record, sent.record);
  ASSERT_TRUE(Restart());
  EXPECT_EQ(Get("t", "a").record, sent.record);
}

// ---- sendMsg with an absolute trigger time ----

TEST_P(BackendContractTest, SendWithTriggerTimeTriggersThen) {
  Advance(100);
  core::NewMessage m = NewMsg("t", "abs", 99'999);  // the delay is ignored
  m.trigger_time = At(5'000);
  m.ttl = Millis(10'000);
  core::Message sent = SendMsg(m);
  EXPECT_EQ(sent.status, MsgStatus::kWaiting);
  EXPECT_EQ(sent.record.trigger_time, At(5'000));
  EXPECT_EQ(sent.record.expire_time, At(15'000));
  AdvanceTo(At(4'999));
  EXPECT_TRUE(PullIds("t").empty());
  Advance(1);
  EXPECT_EQ(PullIds("t"), Ids{"abs"});
}

TEST_P(BackendContractTest, SendWithPastTriggerTimeIsReadyNow) {
  Advance(1'000);
  core::NewMessage m = NewMsg("t", "past", 5'000);
  m.trigger_time = At(0);
  core::Message sent = SendMsg(m);
  EXPECT_EQ(sent.status, MsgStatus::kReady);
  EXPECT_EQ(sent.record.trigger_time, Now());
  EXPECT_EQ(sent.record.expire_time, Now() + Millis(3'600'000));
  EXPECT_EQ(PullIds("t"), Ids{"past"});
}

// ---- sendMsgBatch ----

TEST_P(BackendContractTest, SendBatchAnswersInInputOrderAndStoresEveryItem) {
  Advance(10);
  std::vector<core::NewMessage> msgs = {
      NewMsg("t", "z", 0, 0, "zero"),      NewMsg("t", "a", 2'000, 3, "two s"),
      NewMsg("t", "m", 0, 9, "nine"),      NewMsg("t", "b", 1'000, 0, "one s"),
      NewMsg("t", "y", -5, 1, "negative"),
  };
  msgs[3].trigger_time = At(500);  // absolute: 490 ms from now
  msgs[4].count_trigger = 2;
  Result<std::vector<backend::Sent>> r = b_->SendBatch(msgs);
  ASSERT_TRUE(r.has_value()) << r.error().ToString();
  ASSERT_EQ(r->size(), msgs.size());
  for (size_t i = 0; i < msgs.size(); ++i) {
    const backend::Sent& s = (*r)[i];
    EXPECT_FALSE(s.existing) << i;
    EXPECT_EQ(s.message.record.msg_id, msgs[i].msg_id) << i;
    EXPECT_EQ(s.message.record.topic, "t") << i;
    EXPECT_EQ(s.message.record.payload, msgs[i].payload) << i;
    EXPECT_EQ(s.message.record.priority, msgs[i].priority) << i;
    EXPECT_EQ(s.message.record.produce_time, At(10)) << i;
    EXPECT_EQ(Get("t", msgs[i].msg_id).record, s.message.record) << i;
  }
  EXPECT_EQ((*r)[0].message.status, MsgStatus::kReady);
  EXPECT_EQ((*r)[1].message.status, MsgStatus::kWaiting);
  EXPECT_EQ((*r)[1].message.record.trigger_time, At(2'010));
  EXPECT_EQ((*r)[3].message.record.trigger_time, At(500));
  EXPECT_EQ((*r)[4].message.record.count_trigger, 2);
  EXPECT_EQ((*r)[4].message.status, MsgStatus::kReady);
  core::TopicInfo info = Info("t");
  EXPECT_EQ(info.ready, 3);
  EXPECT_EQ(info.waiting, 2);
  EXPECT_EQ(PullIds("t", 10), (Ids{"m", "y", "z"}));  // priority 9, 1, 0
  Advance(2'000);
  EXPECT_EQ(PullIds("t", 10), (Ids{"a", "b"}));  // priority 3 before 0, though 0 was ready first
}

TEST_P(BackendContractTest, SendBatchAnswersInLifeIdsAndReplacesEndedOnes) {
  core::Message waiting = Send("t", "waiting", 5'000, kHour, 10, "old waiting");
  core::Message ready = Send("t", "ready", 0, kHour, 10, "old ready");
  Send("t", "consuming", 0, kHour, 10, "old consuming");
  Send("t", "acked", 0, kHour, 10, "old acked");
  Send("t", "deleted", 0, kHour, 10, "old deleted");
  ASSERT_EQ(PullIds("t", 1), Ids{"ready"});
  Advance(10);
  ASSERT_TRUE(b_->Ack("t", "ready", false).ok());  // ready again, retry 1
  ASSERT_EQ(PullIds("t", 2), (Ids{"consuming", "acked"}));
  ASSERT_TRUE(b_->Ack("t", "acked").ok());
  ASSERT_TRUE(b_->Delete("t", "deleted").ok());
  const core::Message consuming = Get("t", "consuming");
  const core::Message ready_now = Get("t", "ready");
  Advance(10);
  std::vector<core::NewMessage> msgs;
  for (const std::string id : {"new1", "waiting", "ready", "consuming", "acked", "deleted", "new2"})
    msgs.push_back(NewMsg("t", id, 1'000, 5, "new " + id));
  Result<std::vector<backend::Sent>> r = b_->SendBatch(msgs);
  ASSERT_TRUE(r.has_value()) << r.error().ToString();
  ASSERT_EQ(r->size(), msgs.size());
  auto at = [&](size_t i) -> const backend::Sent& { return (*r)[i]; };
  EXPECT_FALSE(at(0).existing);
  EXPECT_TRUE(at(1).existing);
  EXPECT_EQ(at(1).message.record, waiting.record);
  EXPECT_EQ(at(1).message.status, MsgStatus::kWaiting);
  EXPECT_TRUE(at(2).existing);
  EXPECT_EQ(at(2).message.record, ready_now.record);
  EXPECT_EQ(at(2).message.status, MsgStatus::kReady);
  EXPECT_TRUE(at(3).existing);
  EXPECT_EQ(at(3).message.record, consuming.record);
  EXPECT_EQ(at(3).message.status, MsgStatus::kConsuming);
  for (size_t i : {size_t{4}, size_t{5}}) {  // ended: replaced by a new message
    EXPECT_FALSE(at(i).existing) << i;
    EXPECT_EQ(at(i).message.status, MsgStatus::kWaiting) << i;
    EXPECT_EQ(at(i).message.record.payload, msgs[i].payload) << i;
    EXPECT_EQ(at(i).message.record.retry, 0) << i;
    EXPECT_EQ(at(i).message.record.priority, 5) << i;
  }
  EXPECT_FALSE(at(6).existing);
  // The in-life ones were not stored again.
  EXPECT_EQ(Get("t", "waiting").record, waiting.record);
  EXPECT_EQ(Get("t", "ready").record, ready_now.record);
  EXPECT_EQ(Get("t", "consuming").record, consuming.record);
  core::TopicInfo info = Info("t");
  EXPECT_EQ(info.waiting, 5);  // waiting, new1, acked, deleted, new2
  EXPECT_EQ(info.ready, 1);
  EXPECT_EQ(info.consuming, 1);
  EXPECT_EQ(PullIds("t", 10), Ids{"ready"});
}

TEST_P(BackendContractTest, SendBatchOfAThousandIsVisibleAtOnceAndDurable) {
  std::vector<core::NewMessage> msgs;
  for (int i = 0; i < 1'000; ++i) {
    msgs.push_back(NewMsg("t", "m" + std::to_string(i), i % 2 == 0 ? 0 : 60'000, i % 10,
                          "payload " + std::to_string(i)));
  }
  Result<std::vector<backend::Sent>> r = b_->SendBatch(msgs);
  ASSERT_TRUE(r.has_value()) << r.error().ToString();
  ASSERT_EQ(r->size(), 1'000u);
  core::TopicInfo info = Info("t");
  EXPECT_EQ(info.ready, 500);
  EXPECT_EQ(info.waiting, 500);
  ASSERT_TRUE(Restart());
  for (int i = 0; i < 1'000; ++i) {
    core::Message m = Get("t", "m" + std::to_string(i));
    EXPECT_EQ(m.record, (*r)[i].message.record) << i;
  }
  EXPECT_EQ(Pull("t", 1'000, kHour).size(), 500u);
  Advance(60'000);
  EXPECT_EQ(Pull("t", 1'000).size(), 500u);
}

TEST_P(BackendContractTest, SendBatchNotifiesForReadyItemsOnly) {
  Result<std::vector<backend::Sent>> r =
      b_->SendBatch({NewMsg("t", "w1", 1'000), NewMsg("t", "w2", 2'000)});
  ASSERT_TRUE(r.has_value()) << r.error().ToString();
  EXPECT_TRUE(ReadyCalls().empty());
  r = b_->SendBatch({NewMsg("t", "w3", 1'000), NewMsg("t", "r", 0)});
  ASSERT_TRUE(r.has_value()) << r.error().ToString();
  Names calls = ReadyCalls();
  ASSERT_FALSE(calls.empty());
  for (const std::string& c : calls) EXPECT_EQ(c, "t");
  Advance(999);
  EXPECT_TRUE(ReadyCalls().empty());
  Advance(1);
  EXPECT_FALSE(ReadyCalls().empty());
}

// ---- ackMsgBatch ----

TEST_P(BackendContractTest, AckBatchAnswersEachItemByAcksRules) {
  for (const std::string id : {"a", "b", "c", "timedout", "ready"}) Send("t", id, 0);
  Send("t", "waiting", 5'000);
  Send("t", "done", 0);
  ASSERT_EQ(PullIds("t", 1), Ids{"a"});
  ASSERT_EQ(PullIds("t", 1), Ids{"b"});
  ASSERT_EQ(PullIds("t", 1), Ids{"c"});
  ASSERT_EQ(PullIds("t", 1, 100), Ids{"timedout"});
  Advance(100);
  ASSERT_EQ(PullIds("t", 1), Ids{"ready"});
  ASSERT_TRUE(b_->Ack("t", "ready", false).ok());  // READY again, consumable since 100
  ASSERT_EQ(PullIds("t", 1), Ids{"done"});
  ASSERT_TRUE(b_->Ack("t", "done").ok());
  const core::Message ready_before = Get("t", "ready");
  Advance(10);
  Result<std::vector<Status>> r =
      b_->AckBatch("t", {{"a", true, ""},
                         {"b", false, "boom: the consumer failed"},
                         {"unknown", true, ""},
                         {"ready", true, ""},  // READY after a nack: never delivered since
                         {"waiting", false, "x"},
                         {"c", true, ""},
                         {"done", false, "late"},
                         {"timedout", true, ""}});  // READY after an ack timeout: a late ack
  ASSERT_TRUE(r.has_value()) << r.error().ToString();
  ASSERT_EQ(r->size(), 8u);
  EXPECT_TRUE((*r)[0].ok()) << (*r)[0].ToString();
  EXPECT_TRUE((*r)[1].ok()) << (*r)[1].ToString();
  EXPECT_EQ((*r)[2].code(), Errc::kNotFound);
  EXPECT_EQ((*r)[3].code(), Errc::kInvalidState);
  EXPECT_EQ((*r)[4].code(), Errc::kInvalidState);
  EXPECT_TRUE((*r)[5].ok()) << (*r)[5].ToString();
  EXPECT_EQ((*r)[6].code(), Errc::kInvalidState);
  EXPECT_TRUE((*r)[7].ok()) << (*r)[7].ToString();
  EXPECT_EQ(StatusOf("t", "a"), MsgStatus::kConsumeOk);
  core::Message b = Get("t", "b");
  EXPECT_EQ(b.status, MsgStatus::kReady);
  EXPECT_EQ(b.record.retry, 1);
  EXPECT_EQ(b.record.last_error, "boom: the consumer failed");
  EXPECT_EQ(StatusOf("t", "c"), MsgStatus::kConsumeOk);
  EXPECT_EQ(StatusOf("t", "timedout"), MsgStatus::kConsumeOk);
  EXPECT_EQ(Get("t", "ready").record, ready_before.record);  // refused items change nothing
  EXPECT_EQ(StatusOf("t", "waiting"), MsgStatus::kWaiting);
  EXPECT_EQ(Get("t", "waiting").record.last_error, "");
  EXPECT_EQ(StatusOf("t", "done"), MsgStatus::kConsumeOk);
  EXPECT_EQ(Get("t", "done").record.last_error, "");
  EXPECT_EQ(PullIds("t", 10), (Ids{"ready", "b"}));  // nacked at 100 and at 110
}

TEST_P(BackendContractTest, AckBatchOfUnknownTopicIsNotFoundPerItem) {
  Result<std::vector<Status>> r = b_->AckBatch("nosuchtopic", {{"a", true, ""}, {"b", false, ""}});
  ASSERT_TRUE(r.has_value()) << r.error().ToString();
  ASSERT_EQ(r->size(), 2u);
  EXPECT_EQ((*r)[0].code(), Errc::kNotFound);
  EXPECT_EQ((*r)[1].code(), Errc::kNotFound);
  EXPECT_TRUE(ListNames().empty());
}

TEST_P(BackendContractTest, NackReasonIsTheLastError) {
  Send("t", "a", 0, kHour, 2);
  ASSERT_EQ(PullIds("t"), Ids{"a"});
  Result<std::vector<Status>> r = b_->AckBatch("t", {{"a", false, "first"}});
  ASSERT_TRUE(r.has_value() && r->size() == 1 && (*r)[0].ok());
  EXPECT_EQ(Get("t", "a").record.last_error, "first");
  ASSERT_EQ(PullIds("t"), Ids{"a"});
  EXPECT_EQ(Pull("t").size(), 0u);
  r = b_->AckBatch("t", {{"a", false, ""}});  // no reason: the last one stays
  ASSERT_TRUE(r.has_value() && r->size() == 1 && (*r)[0].ok());
  EXPECT_EQ(Get("t", "a").record.last_error, "first");
  std::vector<core::Message> got = Pull("t");
  ASSERT_EQ(got.size(), 1u);
  EXPECT_EQ(got[0].record.last_error, "first");  // deliveries carry it
  // The last delivery: the nack ends it as RETRY_EXHAUST, with the reason kept.
  r = b_->AckBatch("t", {{"a", false, "third: giving up"}});
  ASSERT_TRUE(r.has_value() && r->size() == 1 && (*r)[0].ok());
  core::Message m = Get("t", "a");
  EXPECT_EQ(m.status, MsgStatus::kRetryExhaust);
  EXPECT_EQ(m.record.last_error, "third: giving up");
  ASSERT_TRUE(Restart());
  EXPECT_EQ(Get("t", "a").record.last_error, "third: giving up");
}

TEST_P(BackendContractTest, AckBatchNackWakesTheListener) {
  Send("t", "a", 0);
  Send("t", "b", 0);
  ASSERT_EQ(PullIds("t", 2), (Ids{"a", "b"}));
  ReadyCalls();
  Result<std::vector<Status>> r = b_->AckBatch("t", {{"a", true, ""}});
  ASSERT_TRUE(r.has_value());
  EXPECT_TRUE(ReadyCalls().empty());  // an ack makes nothing consumable
  r = b_->AckBatch("t", {{"b", false, "again"}});
  ASSERT_TRUE(r.has_value());
  EXPECT_FALSE(ReadyCalls().empty());
}

// ---- updateMsg ----

TEST_P(BackendContractTest, UpdateChangesTheGivenFieldsOnly) {
  core::Message sent = SendMsg(NewMsg("t", "a", 10'000, 2, "old"));
  Advance(100);
  core::MessageUpdate u;
  u.payload = "new";
  u.priority = 8;
  u.max_retry = 4;
  u.ttl = Millis(5'000);
  Result<core::Message> r = b_->Update("t", "a", u);
  ASSERT_TRUE(r.has_value()) << r.error().ToString();
  EXPECT_EQ(r->status, MsgStatus::kWaiting);
  EXPECT_EQ(r->record.payload, "new");
  EXPECT_EQ(r->record.priority, 8);
  EXPECT_EQ(r->record.max_retry, 4);
  EXPECT_EQ(r->record.trigger_time, sent.record.trigger_time);                 // kept
  EXPECT_EQ(r->record.expire_time, sent.record.trigger_time + Millis(5'000));  // from the trigger
  EXPECT_EQ(r->record.produce_time, sent.record.produce_time);
  EXPECT_EQ(Get("t", "a").record, r->record);
  AdvanceTo(At(10'000));
  std::vector<core::Message> got = Pull("t");
  ASSERT_EQ(got.size(), 1u);
  EXPECT_EQ(got[0].record.payload, "new");
  EXPECT_EQ(got[0].record.priority, 8);
}

TEST_P(BackendContractTest, UpdateMovesTheTriggerTimeLaterAndEarlier) {
  Send("t", "later", 1'000, 60'000);
  Send("t", "earlier", 5'000, 60'000);
  Result<core::Message> r = b_->Update("t", "later", TriggerAt(At(3'000)));
  ASSERT_TRUE(r.has_value()) << r.error().ToString();
  EXPECT_EQ(r->record.trigger_time, At(3'000));
  EXPECT_EQ(r->record.expire_time, At(63'000));  // the ttl is kept, from the new trigger
  r = b_->Update("t", "earlier", TriggerAt(At(2'000)));
  ASSERT_TRUE(r.has_value()) << r.error().ToString();
  EXPECT_EQ(r->status, MsgStatus::kWaiting);
  ReadyCalls();
  Advance(1'000);  // the old trigger time of "later": nothing happens
  EXPECT_TRUE(PullIds("t").empty());
  EXPECT_EQ(StatusOf("t", "later"), MsgStatus::kWaiting);
  EXPECT_TRUE(ReadyCalls().empty());
  Advance(999);
  EXPECT_TRUE(PullIds("t").empty());
  Advance(1);
  EXPECT_FALSE(ReadyCalls().empty());
  EXPECT_EQ(PullIds("t", 10), Ids{"earlier"});
  AdvanceTo(At(3'000));
  EXPECT_EQ(PullIds("t", 10), Ids{"later"});
  AdvanceTo(At(5'000));  // the old trigger time of "earlier": no second delivery
  EXPECT_TRUE(PullIds("t", 10).empty());
}

TEST_P(BackendContractTest, UpdateTriggerNowMakesReadyAtOnceAndWakesTheListener) {
  Send("t", "other", 0);
  Send("t", "a", kHour, 60'000);
  Advance(100);
  ReadyCalls();
  Result<core::Message> r = b_->Update("t", "a", TriggerAt(Now()));
  ASSERT_TRUE(r.has_value()) << r.error().ToString();
  EXPECT_EQ(r->status, MsgStatus::kReady);
  EXPECT_EQ(r->record.trigger_time, Now());
  EXPECT_EQ(r->record.expire_time, Now() + Millis(60'000));
  EXPECT_FALSE(ReadyCalls().empty());
  EXPECT_EQ(StatusOf("t", "a"), MsgStatus::kReady);
  EXPECT_EQ(Info("t").ready, 2);
  EXPECT_EQ(Info("t").waiting, 0);
  EXPECT_EQ(PullIds("t", 10), (Ids{"other", "a"}));  // "other" was consumable first
}

TEST_P(BackendContractTest, UpdateWithPastTriggerTimeIsTriggerNow) {
  Advance(5'000);
  Send("t", "a", kHour);
  Result<core::Message> r = b_->Update("t", "a", TriggerAt(At(0)));
  ASSERT_TRUE(r.has_value()) << r.error().ToString();
  EXPECT_EQ(r->status, MsgStatus::kReady);
  EXPECT_EQ(r->record.trigger_time, Now());
  EXPECT_EQ(PullIds("t"), Ids{"a"});
}

TEST_P(BackendContractTest, UpdateOfAReadyMessage) {
  Send("t", "low", 0);
  Send("t", "up", 0);
  Send("t", "back", 0);
  core::MessageUpdate u;
  u.priority = 5;
  Result<core::Message> r = b_->Update("t", "up", u);
  ASSERT_TRUE(r.has_value()) << r.error().ToString();
  EXPECT_EQ(r->status, MsgStatus::kReady);
  r = b_->Update("t", "back", TriggerAt(At(1'000)));  // ready -> waiting again
  ASSERT_TRUE(r.has_value()) << r.error().ToString();
  EXPECT_EQ(r->status, MsgStatus::kWaiting);
  EXPECT_EQ(Info("t").ready, 2);
  EXPECT_EQ(Info("t").waiting, 1);
  EXPECT_EQ(PullIds("t", 10), (Ids{"up", "low"}));
  Advance(1'000);
  EXPECT_EQ(PullIds("t", 10), Ids{"back"});
}

TEST_P(BackendContractTest, UpdateOfATimedOutDeliveryWithALaterTriggerTimeMakesItWaiting) {
  Send("t", "a", 0);
  ASSERT_EQ(PullIds("t", 1, 1'000), Ids{"a"});
  Advance(1'000);
  ASSERT_EQ(StatusOf("t", "a"), MsgStatus::kReady);
  Result<core::Message> r = b_->Update("t", "a", TriggerAt(At(5'000)));
  ASSERT_TRUE(r.has_value()) << r.error().ToString();
  EXPECT_EQ(r->status, MsgStatus::kWaiting);
  EXPECT_EQ(r->record.retry, 1);
  EXPECT_EQ(StatusOf("t", "a"), MsgStatus::kWaiting);
  EXPECT_TRUE(PullIds("t").empty());
  AdvanceTo(At(5'000));
  std::vector<core::Message> got = Pull("t");
  ASSERT_EQ(got.size(), 1u);
  EXPECT_EQ(got[0].record.retry, 2);
}

TEST_P(BackendContractTest, UpdateErrorsChangeNothing) {
  core::MessageUpdate u;
  u.payload = "changed";
  u.priority = 9;
  EXPECT_EQ(b_->Update("nosuchtopic", "a", u).error().code(), Errc::kNotFound);
  Send("t", "consuming", 0);
  Send("t", "acked", 0);
  Send("t", "deleted", 1'000);
  ASSERT_EQ(PullIds("t", 2), (Ids{"consuming", "acked"}));
  ASSERT_TRUE(b_->Ack("t", "acked").ok());
  ASSERT_TRUE(b_->Delete("t", "deleted").ok());
  EXPECT_EQ(b_->Update("t", "unknown", u).error().code(), Errc::kNotFound);
  for (const std::string id : {"consuming", "acked", "deleted"}) {
    const core::Message before = Get("t", id);
    EXPECT_EQ(b_->Update("t", id, u).error().code(), Errc::kInvalidState) << id;
    EXPECT_EQ(b_->Update("t", id, TriggerAt(Now())).error().code(), Errc::kInvalidState) << id;
    core::Message after = Get("t", id);
    EXPECT_EQ(after.record, before.record) << id;
    EXPECT_EQ(after.status, before.status) << id;
  }
}

// ---- touchMsg ----

TEST_P(BackendContractTest, TouchMovesTheAckDeadline) {
  Send("t", "a", 0, kHour, 10, "body");
  ASSERT_EQ(PullIds("t", 1, 1'000), Ids{"a"});
  Advance(800);
  Result<core::Message> r = b_->Touch("t", "a", Millis(5'000));
  ASSERT_TRUE(r.has_value()) << r.error().ToString();
  EXPECT_EQ(r->status, MsgStatus::kConsuming);
  EXPECT_EQ(r->record.payload, "body");
  EXPECT_EQ(r->record.retry, 1);
  EXPECT_EQ(r->record.visible_at, At(5'800));
  ReadyCalls();
  Advance(200);  // the old deadline: no redelivery
  EXPECT_EQ(StatusOf("t", "a"), MsgStatus::kConsuming);
  EXPECT_TRUE(PullIds("t").empty());
  EXPECT_TRUE(ReadyCalls().empty());
  AdvanceTo(At(5'799));
  EXPECT_TRUE(PullIds("t").empty());
  Advance(1);
  EXPECT_FALSE(ReadyCalls().empty());
  EXPECT_EQ(StatusOf("t", "a"), MsgStatus::kReady);
  EXPECT_EQ(PullIds("t"), Ids{"a"});
}

TEST_P(BackendContractTest, TouchWithAShorterTimeoutBringsTheDeadlineCloser) {
  Send("t", "a", 0);
  ASSERT_EQ(PullIds("t", 1, 60'000), Ids{"a"});
  Result<core::Message> r = b_->Touch("t", "a", Millis(1'000));
  ASSERT_TRUE(r.has_value()) << r.error().ToString();
  Advance(1'000);
  EXPECT_EQ(StatusOf("t", "a"), MsgStatus::kReady);
  EXPECT_EQ(PullIds("t"), Ids{"a"});
}

TEST_P(BackendContractTest, TouchedMessageCanBeAcked) {
  Send("t", "a", 0);
  ASSERT_EQ(PullIds("t", 1, 1'000), Ids{"a"});
  Advance(999);
  ASSERT_TRUE(b_->Touch("t", "a", Millis(1'000)).has_value());
  Advance(999);
  EXPECT_TRUE(b_->Ack("t", "a").ok());
  EXPECT_EQ(StatusOf("t", "a"), MsgStatus::kConsumeOk);
}

TEST_P(BackendContractTest, TouchErrorsChangeNothing) {
  EXPECT_EQ(b_->Touch("nosuchtopic", "a", Millis(1'000)).error().code(), Errc::kNotFound);
  Send("t", "waiting", 1'000);
  Send("t", "ready", 0);
  Send("t", "timedout", 0);
  Send("t", "acked", 0);
  EXPECT_EQ(b_->Touch("t", "unknown", Millis(1'000)).error().code(), Errc::kNotFound);
  ASSERT_EQ(PullIds("t", 1, 100), Ids{"ready"});
  Advance(10);
  ASSERT_TRUE(b_->Ack("t", "ready", false).ok());    // READY again, from 10
  ASSERT_EQ(PullIds("t", 1, 100), Ids{"timedout"});  // its deadline is 110
  ASSERT_EQ(PullIds("t", 1), Ids{"acked"});
  ASSERT_TRUE(b_->Ack("t", "acked").ok());
  Advance(100);
  for (const std::string id : {"waiting", "ready", "timedout", "acked"}) {
    const core::Message before = Get("t", id);
    EXPECT_EQ(b_->Touch("t", id, Millis(60'000)).error().code(), Errc::kInvalidState) << id;
    EXPECT_EQ(Get("t", id).record, before.record) << id;
  }
  EXPECT_EQ(PullIds("t", 10), (Ids{"ready", "timedout"}));  // both still consumable
}

// ---- countMsg ----

TEST_P(BackendContractTest, CountGrowsTheCountOfAWaitingMessage) {
  Send("t", "plain", 10'000, kHour, 10, "body");  // no count trigger
  Result<core::Message> r = b_->Count("t", "plain", 1);
  ASSERT_TRUE(r.has_value()) << r.error().ToString();
  EXPECT_EQ(r->record.count, 1);
  EXPECT_EQ(r->record.payload, "body");
  EXPECT_EQ(r->status, MsgStatus::kWaiting);
  r = b_->Count("t", "plain", 41);
  ASSERT_TRUE(r.has_value()) << r.error().ToString();
  EXPECT_EQ(r->record.count, 42);
  EXPECT_EQ(Get("t", "plain").record.count, 42);
  EXPECT_EQ(StatusOf("t", "plain"), MsgStatus::kWaiting);
  EXPECT_TRUE(PullIds("t").empty());
  ASSERT_TRUE(Restart());
  EXPECT_EQ(Get("t", "plain").record.count, 42);
}

TEST_P(BackendContractTest, CountReachingTheTriggerMakesReadyNowAndWakesTheListener) {
  // Its trigger time comes within the retention period of its ack, so it can be checked then.
  core::NewMessage m = NewMsg("t", "a", 100'000, 0, "body");
  m.count_trigger = 3;
  SendMsg(m);
  Send("t", "older", 0);
  Advance(100);
  ReadyCalls();
  Result<core::Message> r = b_->Count("t", "a", 2);
  ASSERT_TRUE(r.has_value()) << r.error().ToString();
  EXPECT_EQ(r->status, MsgStatus::kWaiting);
  EXPECT_TRUE(ReadyCalls().empty());
  r = b_->Count("t", "a", 1);
  ASSERT_TRUE(r.has_value()) << r.error().ToString();
  EXPECT_EQ(r->status, MsgStatus::kReady);
  EXPECT_EQ(r->record.count, 3);
  EXPECT_EQ(r->record.payload, "body");
  EXPECT_FALSE(ReadyCalls().empty());
  EXPECT_EQ(StatusOf("t", "a"), MsgStatus::kReady);
  EXPECT_EQ(Info("t").ready, 2);
  EXPECT_EQ(PullIds("t", 10), (Ids{"older", "a"}));
  ASSERT_TRUE(b_->Ack("t", "a").ok());
  ASSERT_TRUE(b_->Ack("t", "older").ok());
  AdvanceTo(At(100'000));  // its trigger time: nothing more happens
  EXPECT_TRUE(PullIds("t", 10).empty());
  EXPECT_EQ(StatusOf("t", "a"), MsgStatus::kConsumeOk);
}

TEST_P(BackendContractTest, CountPastTheTriggerInOneCallMakesReady) {
  core::NewMessage m = NewMsg("t", "a", kHour);
  m.count_trigger = 2;
  SendMsg(m);
  Result<core::Message> r = b_->Count("t", "a", 10);
  ASSERT_TRUE(r.has_value()) << r.error().ToString();
  EXPECT_EQ(r->status, MsgStatus::kReady);
  EXPECT_EQ(r->record.count, 10);
  EXPECT_EQ(b_->Count("t", "a", 1).error().code(), Errc::kInvalidState);  // READY now
  EXPECT_EQ(PullIds("t"), Ids{"a"});
}

TEST_P(BackendContractTest, CountTriggeredMessageIsPulledInPriorityOrder) {
  Send("t", "p0", 0);
  core::NewMessage m = NewMsg("t", "p5", kHour, 5);
  m.count_trigger = 1;
  SendMsg(m);
  Advance(10);
  ASSERT_TRUE(b_->Count("t", "p5", 1).has_value());
  EXPECT_EQ(PullIds("t", 10), (Ids{"p5", "p0"}));
}

TEST_P(BackendContractTest, WaitingCountTriggerMessageStillTriggersAtItsTime) {
  core::NewMessage m = NewMsg("t", "a", 1'000);
  m.count_trigger = 5;
  SendMsg(m);
  ASSERT_TRUE(b_->Count("t", "a", 2).has_value());
  Advance(1'000);
  std::vector<core::Message> got = Pull("t");
  ASSERT_EQ(got.size(), 1u);
  EXPECT_EQ(got[0].record.count, 2);
}

TEST_P(BackendContractTest, CountErrorsChangeNothing) {
  EXPECT_EQ(b_->Count("nosuchtopic", "a", 1).error().code(), Errc::kNotFound);
  Send("t", "ready", 0);
  Send("t", "consuming", 0);
  Send("t", "deleted", 1'000);
  core::NewMessage m = NewMsg("t", "waiting", 1'000);
  m.count_trigger = 100;
  SendMsg(m);
  EXPECT_EQ(b_->Count("t", "unknown", 1).error().code(), Errc::kNotFound);
  ASSERT_EQ(PullIds("t", 1), Ids{"ready"});
  Advance(10);
  ASSERT_TRUE(b_->Ack("t", "ready", false).ok());
  ASSERT_EQ(PullIds("t", 1), Ids{"consuming"});
  ASSERT_TRUE(b_->Delete("t", "deleted").ok());
  for (const std::string id : {"ready", "consuming", "deleted"}) {
    const core::Message before = Get("t", id);
    EXPECT_EQ(b_->Count("t", id, 1).error().code(), Errc::kInvalidState) << id;
    EXPECT_EQ(Get("t", id).record, before.record) << id;
  }
  Advance(990);  // "waiting" triggers by time: READY now, so no longer counted
  EXPECT_EQ(b_->Count("t", "waiting", 1).error().code(), Errc::kInvalidState);
  EXPECT_EQ(Get("t", "waiting").record.count, 0);
}

}  // namespace
}  // namespace chronoq::contract
