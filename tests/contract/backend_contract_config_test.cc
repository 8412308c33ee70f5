// Contract cases for issue 15 (API-EXTENSIONS.md section 4): topic configuration and its layers,
// capacity, pause, retry intervals, dead letters, redrive and purge. See backend_contract.h.
#include <latch>

#include "tests/contract/backend_contract.h"

namespace chronoq::contract {
namespace {

using core::MsgStatus;
using core::TopicConfig;
using Ids = std::vector<std::string>;

constexpr int64_t kHour = 3'600'000;

TopicConfig Capacity(int64_t n) {
  TopicConfig c;
  c.capacity = n;
  return c;
}

TopicConfig DeadLetterTo(const std::string& topic) {
  TopicConfig c;
  c.dead_letter_topic = topic;
  return c;
}

TopicConfig Paused(bool paused) {
  TopicConfig c;
  c.paused = paused;
  return c;
}

// A message that leaves its ttl and maxRetry to the topic.
core::NewMessage Bare(const std::string& topic, const std::string& id, int64_t delay_ms) {
  core::NewMessage m;
  m.topic = topic;
  m.msg_id = id;
  m.payload = "payload of " + id;
  m.delay = Millis(delay_ms);
  return m;
}

// ---- stored configuration ----

TEST_P(BackendContractTest, ConfigOfATopicWithoutOneIsEmpty) {
  EXPECT_EQ(GetConfig("t"), TopicConfig{});
  Send("t", "a", 0);
  EXPECT_EQ(GetConfig("t"), TopicConfig{});
}

TEST_P(BackendContractTest, SetConfigMergesTheGivenFieldsAndIsDurable) {
  TopicConfig first;
  first.capacity = 5;
  first.ttl = Millis(60'000);
  EXPECT_EQ(SetConfig("t", first), first);
  TopicConfig second;
  second.max_retry = 2;
  second.ttl = Millis(90'000);  // replaces the first ttl
  TopicConfig expected = first;
  expected.max_retry = 2;
  expected.ttl = Millis(90'000);
  EXPECT_EQ(SetConfig("t", second), expected);
  EXPECT_EQ(GetConfig("t"), expected);
  EXPECT_EQ(GetConfig("other"), TopicConfig{});
  ASSERT_TRUE(Restart());
  EXPECT_EQ(GetConfig("t"), expected);
}

TEST_P(BackendContractTest, DeleteConfigReturnsTheTopicToTheNodeLayers) {
  TopicConfig c;
  c.ttl = Millis(10'000);
  SetConfig("t", c);
  ASSERT_TRUE(b_->DeleteTopicConfig("t").ok());
  EXPECT_EQ(GetConfig("t"), TopicConfig{});
  core::Message m = SendMsg(Bare("t", "a", 0));
  EXPECT_EQ(m.record.expire_time - m.record.trigger_time, core::Defaults{}.ttl);
  ASSERT_TRUE(Restart());
  EXPECT_EQ(GetConfig("t"), TopicConfig{});
  // Deleting what is not there is fine.
  EXPECT_TRUE(b_->DeleteTopicConfig("never-configured").ok());
}

TEST_P(BackendContractTest, SendsThatLeaveTtlAndMaxRetryOutTakeTheTopics) {
  TopicConfig c;
  c.ttl = Millis(10'000);
  c.max_retry = 2;
  SetConfig("t", c);
  core::Message bare = SendMsg(Bare("t", "bare", 1'000));
  EXPECT_EQ(bare.record.expire_time, bare.record.trigger_time + Millis(10'000));
  EXPECT_EQ(bare.record.max_retry, 2);
  core::Message own = SendMsg(NewMsg("t", "own", 1'000));  // gives 1 h and 10
  EXPECT_EQ(own.record.expire_time, own.record.trigger_time + Millis(kHour));
  EXPECT_EQ(own.record.max_retry, 10);
  core::Message elsewhere = SendMsg(Bare("u", "x", 0));
  EXPECT_EQ(elsewhere.record.expire_time - elsewhere.record.trigger_time, core::Defaults{}.ttl);
  EXPECT_EQ(elsewhere.record.max_retry, core::Defaults{}.max_retry);
  // A batch resolves the same way.
  std::vector<core::NewMessage> batch;
  batch.push_back(Bare("t", "b1", 0));
  batch.push_back(NewMsg("t", "b2", 0));
  Result<std::vector<backend::Sent>> sent = b_->SendBatch(std::move(batch));
  ASSERT_TRUE(sent.has_value()) << sent.error().ToString();
  EXPECT_EQ((*sent)[0].message.record.max_retry, 2);
  EXPECT_EQ((*sent)[1].message.record.max_retry, 10);
}

TEST_P(BackendContractTest, TheFileLayerAppliesUnderTheStoredOne) {
  core::Defaults server;
  server.ttl = Millis(kHour);
  TopicConfig file;
  file.ttl = Millis(20'000);
  file.max_retry = 4;
  SetNodeLayers(server, {{"t", file}});
  core::Message m = SendMsg(Bare("t", "a", 0));
  EXPECT_EQ(m.record.expire_time - m.record.trigger_time, Millis(20'000));
  EXPECT_EQ(m.record.max_retry, 4);
  EXPECT_EQ(SendMsg(Bare("u", "a", 0)).record.max_retry, server.max_retry);
  TopicConfig stored;
  stored.ttl = Millis(30'000);
  SetConfig("t", stored);
  m = SendMsg(Bare("t", "b", 0));
  EXPECT_EQ(m.record.expire_time - m.record.trigger_time, Millis(30'000));  // stored wins
  EXPECT_EQ(m.record.max_retry, 4);                                         // file still fills
  EXPECT_EQ(GetConfig("t"), stored);  // the stored layer alone
}

TEST_P(BackendContractTest, PullsThatLeaveTheAckTimeoutOutTakeTheTopics) {
  TopicConfig c;
  c.ack_timeout = Millis(5'000);
  SetConfig("t", c);
  Send("t", "a", 0);
  Result<std::vector<core::Message>> got = b_->Pull(backend::PullRequest{"t", 1, std::nullopt});
  ASSERT_TRUE(got.has_value() && got->size() == 1u);
  EXPECT_EQ((*got)[0].record.ack_deadline(), Now() + Millis(5'000));
  Advance(4'999);
  EXPECT_EQ(StatusOf("t", "a"), MsgStatus::kConsuming);
  Advance(1);
  EXPECT_EQ(StatusOf("t", "a"), MsgStatus::kReady);
}

// ---- capacity ----

TEST_P(BackendContractTest, AFullTopicRefusesNewMessagesWith429sSentence) {
  SetConfig("t", Capacity(3));
  Send("t", "a", 0);
  Send("t", "b", 1'000);
  Send("t", "c", 10 * 24 * kHour);  // far messages count too
  Result<core::Message> refused = b_->Send(NewMsg("t", "d", 0));
  ASSERT_FALSE(refused.has_value());
  EXPECT_EQ(refused.error().code(), Errc::kResourceExhausted);
  EXPECT_EQ(refused.error().message(), "topic 't' is full: 3 messages in life, capacity 3");
  EXPECT_EQ(GetError("t", "d"), Errc::kNotFound);  // nothing stored
  // An idempotent re-send is answered, not refused.
  Result<backend::Sent> again = b_->SendFull(NewMsg("t", "a", 0));
  ASSERT_TRUE(again.has_value()) << again.error().ToString();
  EXPECT_TRUE(again->existing);
  // Other topics are not limited.
  Send("u", "d", 0);
  core::TopicInfo info = Info("t");
  EXPECT_EQ(info.waiting + info.ready + info.consuming, 3);
}

TEST_P(BackendContractTest, CapacityOneIsOneJobPerTopicAndEveryEndFreesRoom) {
  SetConfig("t", Capacity(1));
  Send("t", "a", 0);
  EXPECT_FALSE(b_->Send(NewMsg("t", "b", 0)).has_value());
  // An ack frees the room at once.
  ASSERT_EQ(PullIds("t"), Ids{"a"});
  EXPECT_FALSE(b_->Send(NewMsg("t", "b", 0)).has_value());  // consuming still counts
  ASSERT_TRUE(b_->Ack("t", "a").ok());
  Send("t", "b", 0);
  // A delete does too.
  ASSERT_TRUE(b_->Delete("t", "b").ok());
  Send("t", "c", 0, /*ttl_ms=*/1'000);
  // And an expiry.
  EXPECT_FALSE(b_->Send(NewMsg("t", "d", 0)).has_value());
  Advance(1'000);
  Send("t", "d", 0);
  // Raising the capacity lets more in; 0 means unlimited.
  SetConfig("t", Capacity(0));
  for (int i = 0; i < 20; ++i) Send("t", "many" + std::to_string(i), 0);
}

TEST_P(BackendContractTest, ABatchStoresItemsUntilTheTopicIsFullAndRefusesTheRest) {
  SetConfig("t", Capacity(5));
  Send("t", "old1", 0);
  Send("t", "old2", 0);
  std::vector<core::NewMessage> batch;
  batch.push_back(NewMsg("t", "old1", 0));  // in life: answered, takes no room
  for (int i = 0; i < 5; ++i) batch.push_back(NewMsg("t", "n" + std::to_string(i), 0));
  Result<std::vector<Result<backend::Sent>>> r = b_->SendBatchItems(std::move(batch));
  ASSERT_TRUE(r.has_value()) << r.error().ToString();
  ASSERT_EQ(r->size(), 6u);
  ASSERT_TRUE((*r)[0].has_value());
  EXPECT_TRUE((*r)[0]->existing);
  for (int i = 1; i <= 3; ++i) EXPECT_TRUE((*r)[i].has_value()) << i;
  for (int i = 4; i <= 5; ++i) {
    ASSERT_FALSE((*r)[i].has_value()) << i;
    EXPECT_EQ((*r)[i].error().code(), Errc::kResourceExhausted);
    EXPECT_EQ((*r)[i].error().message(), "topic 't' is full: 5 messages in life, capacity 5");
  }
  EXPECT_EQ(GetError("t", "n3"), Errc::kNotFound);
  EXPECT_EQ(Info("t").ready, 5);
}

TEST_P(BackendContractTest, CapacityHoldsUnderConcurrentSends) {
  SetConfig("t", Capacity(100));
  constexpr int kSends = 400;
  std::vector<Result<backend::Sent>> answers(kSends, Internal("no answer"));
  std::latch done(kSends);
  for (int i = 0; i < kSends; ++i) {
    h_->backend()->Send(NewMsg("t", "m" + std::to_string(i), i % 3 == 0 ? 0 : 5'000),
                        [&answers, &done, i](Result<backend::Sent> r) {
                          answers[i] = std::move(r);
                          done.count_down();
                        });
  }
  done.wait();
  int stored = 0;
  for (const Result<backend::Sent>& a : answers) {
    if (a.has_value()) {
      ++stored;
    } else {
      EXPECT_EQ(a.error().code(), Errc::kResourceExhausted) << a.error().ToString();
    }
  }
  EXPECT_EQ(stored, 100);
  core::TopicInfo info = Info("t");
  EXPECT_EQ(info.waiting + info.ready + info.consuming, 100);
}

// ---- pause ----

TEST_P(BackendContractTest, APausedTopicAcceptsSendsButDeliversNothingUntilResumed) {
  Send("t", "a", 0);
  SetConfig("t", Paused(true));
  Send("t", "b", 0);
  EXPECT_TRUE(PullIds("t", 10).empty());
  EXPECT_EQ(Info("t").ready, 2);
  Advance(1'000);
  EXPECT_TRUE(PullIds("t", 10).empty());
  ASSERT_TRUE(Restart());  // durable
  EXPECT_TRUE(PullIds("t", 10).empty());
  ReadyCalls();
  SetConfig("t", Paused(false));
  h_->Settle();
  const std::vector<std::string> woken = ReadyCalls();
  EXPECT_NE(std::find(woken.begin(), woken.end(), "t"), woken.end())
      << "resuming must wake the topic's long polls";
  EXPECT_EQ(PullIds("t", 10), (Ids{"a", "b"}));
  // Other topics never paused.
  Send("u", "x", 0);
  EXPECT_EQ(PullIds("u"), Ids{"x"});
}

TEST_P(BackendContractTest, DeletingThePausedConfigResumesAndWakes) {
  Send("t", "a", 0);
  SetConfig("t", Paused(true));
  EXPECT_TRUE(PullIds("t").empty());
  ReadyCalls();
  ASSERT_TRUE(b_->DeleteTopicConfig("t").ok());
  h_->Settle();
  const std::vector<std::string> woken = ReadyCalls();
  EXPECT_NE(std::find(woken.begin(), woken.end(), "t"), woken.end());
  EXPECT_EQ(PullIds("t"), Ids{"a"});
}

// ---- retry interval ----

TEST_P(BackendContractTest, ANackedMessageWaitsForTheRetryInterval) {
  TopicConfig c;
  c.retry_interval = Millis(2'000);
  SetConfig("t", c);
  Send("t", "a", 0);
  ASSERT_EQ(PullIds("t"), Ids{"a"});
  ASSERT_TRUE(b_->Ack("t", "a", false).ok());
  EXPECT_EQ(StatusOf("t", "a"), MsgStatus::kWaiting);
  EXPECT_TRUE(PullIds("t").empty());
  Advance(1'999);
  EXPECT_TRUE(PullIds("t").empty());
  ReadyCalls();
  Advance(1);
  EXPECT_EQ(StatusOf("t", "a"), MsgStatus::kReady);
  EXPECT_EQ(PullIds("t"), Ids{"a"});
}

TEST_P(BackendContractTest, ATimedOutDeliveryWaitsForTheRetryIntervalAndALateAckStillWorks) {
  TopicConfig c;
  c.retry_interval = Millis(2'000);
  SetConfig("t", c);
  Send("t", "a", 0);
  Send("t", "b", 0);
  ASSERT_EQ(PullIds("t", 2, 1'000), (Ids{"a", "b"}));
  Advance(1'000);  // the ack deadline
  EXPECT_EQ(StatusOf("t", "a"), MsgStatus::kWaiting);
  EXPECT_EQ(Info("t").waiting, 2);
  EXPECT_TRUE(PullIds("t", 2).empty());
  ASSERT_TRUE(b_->Ack("t", "b").ok());  // late, but not delivered again yet
  EXPECT_EQ(StatusOf("t", "b"), MsgStatus::kConsumeOk);
  Advance(1'999);
  EXPECT_TRUE(PullIds("t").empty());
  Advance(1);
  EXPECT_EQ(StatusOf("t", "a"), MsgStatus::kReady);
  ASSERT_TRUE(Restart());
  EXPECT_EQ(PullIds("t", 2), Ids{"a"});
}

TEST_P(BackendContractTest, TheRetryIntervalOfADeliveryIsTheOneAtItsDelivery) {
  TopicConfig c;
  c.retry_interval = Millis(5'000);
  SetConfig("t", c);
  Send("t", "a", 0);
  ASSERT_EQ(PullIds("t", 1, 1'000), Ids{"a"});
  c.retry_interval = Millis(0);
  SetConfig("t", c);
  Advance(1'000);
  EXPECT_EQ(StatusOf("t", "a"), MsgStatus::kWaiting);
  Advance(5'000);
  EXPECT_EQ(PullIds("t"), Ids{"a"});
}

// ---- dead letters ----

TEST_P(BackendContractTest, AnExpiredMessageMovesToTheDeadLetterTopic) {
  SetConfig("t", DeadLetterTo("t-dead"));
  core::NewMessage m = NewMsg("t", "a", 0, /*priority=*/3, "the body");
  m.ttl = Millis(1'000);
  SendMsg(m);
  Advance(1'000);
  EXPECT_EQ(StatusOf("t", "a"), MsgStatus::kExpire);
  core::Message dead = Get("t-dead", "a");
  EXPECT_EQ(dead.status, MsgStatus::kReady);
  EXPECT_EQ(dead.record.payload, "the body");
  EXPECT_EQ(dead.record.priority, 3);
  EXPECT_EQ(dead.record.retry, 0);
  ASSERT_TRUE(dead.record.dead_letter.has_value());
  EXPECT_EQ(dead.record.dead_letter->topic, "t");
  EXPECT_EQ(dead.record.dead_letter->status, MsgStatus::kExpire);
  EXPECT_EQ(dead.record.dead_letter->retry, 0);
  EXPECT_EQ(dead.record.dead_letter->end_time, At(1'000));
  // With the dead-letter topic's own ttl (here the server default).
  EXPECT_EQ(dead.record.expire_time - dead.record.trigger_time, core::Defaults{}.ttl);
  EXPECT_EQ(PullIds("t-dead"), Ids{"a"});
  ASSERT_TRUE(Restart());
  EXPECT_EQ(Get("t-dead", "a").record.dead_letter, dead.record.dead_letter);
  EXPECT_EQ(StatusOf("t", "a"), MsgStatus::kExpire);
}

TEST_P(BackendContractTest, ExhaustedRetriesMoveToTheDeadLetterTopicByTimeoutAndByNack) {
  SetConfig("t", DeadLetterTo("dlq"));
  Send("t", "timeout", 0, kHour, /*max_retry=*/0);
  ASSERT_EQ(PullIds("t", 1, 1'000), Ids{"timeout"});
  Advance(1'000);
  EXPECT_EQ(StatusOf("t", "timeout"), MsgStatus::kRetryExhaust);
  core::Message dead = Get("dlq", "timeout");
  ASSERT_TRUE(dead.record.dead_letter.has_value());
  EXPECT_EQ(dead.record.dead_letter->status, MsgStatus::kRetryExhaust);
  EXPECT_EQ(dead.record.dead_letter->retry, 1);

  Send("t", "nack", 0, kHour, /*max_retry=*/1);
  ASSERT_EQ(PullIds("t"), Ids{"nack"});
  ASSERT_TRUE(b_->Ack("t", "nack", false).ok());
  ASSERT_EQ(PullIds("t"), Ids{"nack"});
  Result<std::vector<Status>> r =
      b_->AckBatch("t", {backend::AckItem{"nack", false, "the handler threw"}});
  ASSERT_TRUE(r.has_value() && (*r)[0].ok());
  EXPECT_EQ(StatusOf("t", "nack"), MsgStatus::kRetryExhaust);
  dead = Get("dlq", "nack");
  ASSERT_TRUE(dead.record.dead_letter.has_value());
  EXPECT_EQ(dead.record.dead_letter->retry, 2);
  EXPECT_EQ(dead.record.last_error, "the handler threw");
  EXPECT_EQ(dead.status, MsgStatus::kReady);
}

TEST_P(BackendContractTest, MessagesEndingWithoutADeadLetterTopicGoNowhere) {
  Send("t", "b", 0, kHour, /*max_retry=*/0);
  ASSERT_EQ(PullIds("t"), Ids{"b"});
  ASSERT_TRUE(b_->Ack("t", "b", false).ok());
  EXPECT_EQ(StatusOf("t", "b"), MsgStatus::kRetryExhaust);
  Send("t", "a", 0, /*ttl_ms=*/1'000);
  Advance(1'000);
  EXPECT_EQ(StatusOf("t", "a"), MsgStatus::kExpire);
  EXPECT_EQ(ListNames(), std::vector<std::string>{"t"});
}

TEST_P(BackendContractTest, AckedAndDeletedMessagesAreNotDeadLetters) {
  SetConfig("t", DeadLetterTo("dlq"));
  Send("t", "acked", 0);
  Send("t", "deleted", 0);
  ASSERT_EQ(PullIds("t"), Ids{"acked"});
  ASSERT_TRUE(b_->Ack("t", "acked").ok());
  ASSERT_TRUE(b_->Delete("t", "deleted").ok());
  EXPECT_EQ(GetError("dlq", "acked"), Errc::kNotFound);
  EXPECT_EQ(GetError("dlq", "deleted"), Errc::kNotFound);
}

TEST_P(BackendContractTest, DeadLettersFollowAChainWithEachTopicsTtl) {
  SetConfig("t", DeadLetterTo("d1"));
  TopicConfig d1 = DeadLetterTo("d2");
  d1.ttl = Millis(5'000);
  SetConfig("d1", d1);
  Send("t", "a", 0, /*ttl_ms=*/1'000);
  Advance(1'000);
  EXPECT_EQ(StatusOf("d1", "a"), MsgStatus::kReady);
  Advance(5'000);
  EXPECT_EQ(StatusOf("d1", "a"), MsgStatus::kExpire);
  core::Message last = Get("d2", "a");
  ASSERT_TRUE(last.record.dead_letter.has_value());
  EXPECT_EQ(last.record.dead_letter->topic, "d1");
  EXPECT_EQ(last.status, MsgStatus::kReady);
}

TEST_P(BackendContractTest, ADeadLetterTopicHoldingTheMsgIdInLifeKeepsItsOwn) {
  SetConfig("t", DeadLetterTo("dlq"));
  Send("dlq", "a", 0, kHour, 10, "already there");
  Send("t", "a", 0, /*ttl_ms=*/1'000);
  Advance(1'000);
  EXPECT_EQ(StatusOf("t", "a"), MsgStatus::kExpire);
  core::Message kept = Get("dlq", "a");
  EXPECT_EQ(kept.record.payload, "already there");
  EXPECT_FALSE(kept.record.dead_letter.has_value());
}

TEST_P(BackendContractTest, ADeadLetterTopicIgnoresItsCapacity) {
  SetConfig("t", DeadLetterTo("dlq"));
  SetConfig("dlq", Capacity(1));
  Send("dlq", "x", 0);
  Send("t", "a", 0, /*ttl_ms=*/1'000);
  Advance(1'000);
  EXPECT_EQ(StatusOf("dlq", "a"), MsgStatus::kReady);
}

// ---- redrive ----

TEST_P(BackendContractTest, RedriveMovesADeadLetterBackOnce) {
  SetConfig("src", DeadLetterTo("dlq"));
  TopicConfig src;
  src.ttl = Millis(50'000);
  SetConfig("src", src);
  core::NewMessage m = NewMsg("src", "a", 0, /*priority=*/2, "body");
  m.ttl = Millis(1'000);
  SendMsg(m);
  Advance(1'000);
  ASSERT_EQ(StatusOf("dlq", "a"), MsgStatus::kReady);
  backend::RedriveRequest one{"dlq", std::string("a"), 100, Millis(0)};
  Result<int64_t> moved = b_->Redrive(one);
  ASSERT_TRUE(moved.has_value()) << moved.error().ToString();
  EXPECT_EQ(*moved, 1);
  core::Message back = Get("src", "a");
  EXPECT_EQ(back.status, MsgStatus::kReady);
  EXPECT_EQ(back.record.retry, 0);
  EXPECT_EQ(back.record.payload, "body");
  EXPECT_EQ(back.record.priority, 2);
  EXPECT_FALSE(back.record.dead_letter.has_value());
  EXPECT_EQ(back.record.expire_time - back.record.trigger_time, Millis(50'000));
  EXPECT_EQ(GetError("dlq", "a"), Errc::kNotFound);  // ended and released at once
  Result<int64_t> again = b_->Redrive(one);
  ASSERT_FALSE(again.has_value());
  EXPECT_EQ(again.error().code(), Errc::kNotFound);
  EXPECT_EQ(PullIds("src"), Ids{"a"});
}

TEST_P(BackendContractTest, RedriveWalksUpToTheLimitOldestFirstWithADelay) {
  SetConfig("src", DeadLetterTo("dlq"));
  for (int i = 0; i < 5; ++i) {
    Send("src", "m" + std::to_string(i), 0, /*ttl_ms=*/1'000 + i);
  }
  Advance(1'010);
  ASSERT_EQ(Info("dlq").ready, 5);
  Result<int64_t> moved = b_->Redrive(backend::RedriveRequest{"dlq", {}, 3, Millis(2'000)});
  ASSERT_TRUE(moved.has_value()) << moved.error().ToString();
  EXPECT_EQ(*moved, 3);
  for (int i = 0; i < 3; ++i) {
    EXPECT_EQ(StatusOf("src", "m" + std::to_string(i)), MsgStatus::kWaiting) << i;
  }
  EXPECT_EQ(Info("dlq").ready, 2);
  moved = b_->Redrive(backend::RedriveRequest{"dlq", {}, 100, Millis(0)});
  ASSERT_TRUE(moved.has_value());
  EXPECT_EQ(*moved, 2);
  EXPECT_EQ(Info("dlq").ready, 0);
  moved = b_->Redrive(backend::RedriveRequest{"dlq", {}, 100, Millis(0)});
  ASSERT_TRUE(moved.has_value());
  EXPECT_EQ(*moved, 0);
  Advance(2'000);
  EXPECT_EQ(Info("src").ready, 5);
}

TEST_P(BackendContractTest, RedriveRespectsTheSourceCapacityAndKeepsWhatItCannotMove) {
  SetConfig("src", DeadLetterTo("dlq"));
  Send("src", "a", 0, /*ttl_ms=*/1'000);
  Advance(1'000);
  SetConfig("src", Capacity(1));
  Send("src", "busy", 0);
  Result<int64_t> moved = b_->Redrive(backend::RedriveRequest{"dlq", std::string("a"), 1, {}});
  ASSERT_FALSE(moved.has_value());
  EXPECT_EQ(moved.error().code(), Errc::kResourceExhausted);
  EXPECT_EQ(StatusOf("dlq", "a"), MsgStatus::kReady);  // still a dead letter
  moved = b_->Redrive(backend::RedriveRequest{"dlq", {}, 10, {}});
  ASSERT_TRUE(moved.has_value());
  EXPECT_EQ(*moved, 0);
  EXPECT_EQ(StatusOf("dlq", "a"), MsgStatus::kReady);
}

TEST_P(BackendContractTest, RedriveRefusesWhatIsNotAReadyDeadLetter) {
  SetConfig("src", DeadLetterTo("dlq"));
  Send("dlq", "plain", 0);
  Result<int64_t> r = b_->Redrive(backend::RedriveRequest{"dlq", std::string("plain"), 1, {}});
  ASSERT_FALSE(r.has_value());
  EXPECT_EQ(r.error().code(), Errc::kInvalidState);
  r = b_->Redrive(backend::RedriveRequest{"dlq", std::string("nosuch"), 1, {}});
  ASSERT_FALSE(r.has_value());
  EXPECT_EQ(r.error().code(), Errc::kNotFound);
  // A dead letter being consumed stays with its consumer.
  Send("src", "a", 0, /*ttl_ms=*/1'000);
  Advance(1'000);
  ASSERT_EQ(PullIds("dlq", 10), (Ids{"plain", "a"}));
  r = b_->Redrive(backend::RedriveRequest{"dlq", std::string("a"), 1, {}});
  ASSERT_FALSE(r.has_value());
  EXPECT_EQ(r.error().code(), Errc::kInvalidState);
  // So does one whose source holds that msgId in life again.
  Send("src", "b", 0, /*ttl_ms=*/1'000);
  Advance(1'000);
  Send("src", "b", 0);
  r = b_->Redrive(backend::RedriveRequest{"dlq", std::string("b"), 1, {}});
  ASSERT_FALSE(r.has_value());
  EXPECT_EQ(r.error().code(), Errc::kInvalidState);
  EXPECT_EQ(StatusOf("dlq", "b"), MsgStatus::kReady);
}

// ---- purge ----

TEST_P(BackendContractTest, PurgeDeletesEveryInLifeMessageOfTheTopicOnly) {
  Send("t", "ready", 0);
  Send("t", "consuming", 0);
  Send("t", "waiting", 1'000);
  Send("t", "far", 30 * 24 * kHour);
  Send("t", "acked", 0);
  ASSERT_EQ(PullIds("t", 2), (Ids{"ready", "consuming"}));
  ASSERT_TRUE(b_->Ack("t", "ready").ok());
  // "ready" is acked; make another ready one.
  Send("t", "ready2", 0);
  ASSERT_EQ(PullIds("t"), Ids{"acked"});
  ASSERT_TRUE(b_->Ack("t", "acked").ok());
  Send("u", "other", 0);
  Result<int64_t> purged = b_->Purge("t");
  ASSERT_TRUE(purged.has_value()) << purged.error().ToString();
  EXPECT_EQ(*purged, 4);
  for (const char* id : {"consuming", "waiting", "far", "ready2"}) {
    EXPECT_EQ(StatusOf("t", id), MsgStatus::kDelete) << id;
  }
  EXPECT_EQ(StatusOf("t", "acked"), MsgStatus::kConsumeOk);
  EXPECT_EQ(StatusOf("u", "other"), MsgStatus::kReady);
  core::TopicInfo info = Info("t");
  EXPECT_EQ(info.waiting + info.ready + info.consuming, 0);
  ASSERT_TRUE(Restart());
  EXPECT_EQ(StatusOf("t", "far"), MsgStatus::kDelete);
}

TEST_P(BackendContractTest, PurgeOfOneStatusLeavesTheOthers) {
  Send("t", "r1", 0);
  Send("t", "r2", 0);
  Send("t", "w", 5'000);
  Result<int64_t> purged = b_->Purge("t", MsgStatus::kReady);
  ASSERT_TRUE(purged.has_value()) << purged.error().ToString();
  EXPECT_EQ(*purged, 2);
  EXPECT_EQ(StatusOf("t", "w"), MsgStatus::kWaiting);
  purged = b_->Purge("t", MsgStatus::kWaiting);
  ASSERT_TRUE(purged.has_value());
  EXPECT_EQ(*purged, 1);
  purged = b_->Purge("nosuchtopic");
  ASSERT_TRUE(purged.has_value());
  EXPECT_EQ(*purged, 0);
}

TEST_P(BackendContractTest, PurgeGoesThroughMoreThanOneChunk) {
  std::vector<core::NewMessage> msgs;
  for (int i = 0; i < 2'500; ++i) msgs.push_back(NewMsg("t", "m" + std::to_string(i), i % 2));
  SendAll(std::move(msgs));
  Result<int64_t> purged = b_->Purge("t");
  ASSERT_TRUE(purged.has_value()) << purged.error().ToString();
  EXPECT_EQ(*purged, 2'500);
  core::TopicInfo info = Info("t");
  EXPECT_EQ(info.waiting + info.ready + info.consuming, 0);
}

// Purge works in bounded steps; messages of other statuses in the way of one step (more than a
// step examines) must not end it early.
TEST_P(BackendContractTest, PurgeOfOneStatusGoesPastThousandsOfOtherStatusesInItsWay) {
  // 2,100 deliveries CONSUMING for an hour, then one delivery waiting out a two-hour retry
  // interval: consumable again after every one of them.
  std::vector<core::NewMessage> msgs;
  for (int i = 0; i < 2'100; ++i) msgs.push_back(NewMsg("t", "c" + std::to_string(i), 0));
  SendAll(std::move(msgs));
  for (int i = 0; i < 21; ++i) ASSERT_EQ(Pull("t", 100, kHour).size(), 100u);
  TopicConfig c;
  c.retry_interval = Millis(2 * kHour);
  SetConfig("t", c);
  Send("t", "w", 0);
  ASSERT_EQ(PullIds("t", 1, 1), Ids{"w"});
  Advance(1);
  ASSERT_EQ(StatusOf("t", "w"), MsgStatus::kWaiting);
  Result<int64_t> purged = b_->Purge("t", MsgStatus::kWaiting);
  ASSERT_TRUE(purged.has_value()) << purged.error().ToString();
  EXPECT_EQ(*purged, 1);
  EXPECT_EQ(StatusOf("t", "w"), MsgStatus::kDelete);
  EXPECT_EQ(StatusOf("t", "c2099"), MsgStatus::kConsuming);
  // And the other way round: CONSUMING ones behind 2,100 deliveries in their retry interval.
  purged = b_->Purge("t");
  ASSERT_TRUE(purged.has_value());
  EXPECT_EQ(*purged, 2'100);
  msgs.clear();
  for (int i = 0; i < 2'100; ++i) msgs.push_back(NewMsg("u", "w" + std::to_string(i), 0));
  SendAll(std::move(msgs));
  c.retry_interval = Millis(kHour);
  SetConfig("u", c);
  for (int i = 0; i < 21; ++i) ASSERT_EQ(Pull("u", 100, 1).size(), 100u);
  Advance(1);
  Send("u", "c", 0);
  ASSERT_EQ(PullIds("u", 1, 2 * kHour), Ids{"c"});
  purged = b_->Purge("u", MsgStatus::kConsuming);
  ASSERT_TRUE(purged.has_value());
  EXPECT_EQ(*purged, 1);
  EXPECT_EQ(StatusOf("u", "c"), MsgStatus::kDelete);
  EXPECT_EQ(StatusOf("u", "w0"), MsgStatus::kWaiting);
  EXPECT_EQ(Info("u").waiting, 2'100);
}

// Messages whose ttl ran out while no timer ran yet are ended on the way, not purged, and do not
// end the purge early however many lie ahead of the ones it must delete.
TEST_P(BackendContractTest, PurgeGoesPastThousandsOfMessagesWhoseTimeRanOut) {
  std::vector<core::NewMessage> msgs;
  for (int i = 0; i < 2'100; ++i) {
    core::NewMessage m = NewMsg("t", "x" + std::to_string(i), 0);
    m.ttl = Millis(1'000);
    msgs.push_back(std::move(m));
  }
  SendAll(std::move(msgs));
  Send("t", "r1", 0);
  Send("t", "r2", 0);
  AdvanceClockOnly(1'000);
  Result<int64_t> purged = b_->Purge("t", MsgStatus::kReady);
  ASSERT_TRUE(purged.has_value()) << purged.error().ToString();
  EXPECT_EQ(*purged, 2);
  EXPECT_EQ(StatusOf("t", "r1"), MsgStatus::kDelete);
  EXPECT_EQ(StatusOf("t", "r2"), MsgStatus::kDelete);
  EXPECT_EQ(StatusOf("t", "x0"), MsgStatus::kExpire);
  msgs.clear();
  for (int i = 0; i < 2'100; ++i) {
    core::NewMessage m = NewMsg("u", "x" + std::to_string(i), 0);
    m.ttl = Millis(1'000);
    msgs.push_back(std::move(m));
  }
  SendAll(std::move(msgs));
  Send("u", "w", 5'000);
  AdvanceClockOnly(1'000);
  purged = b_->Purge("u");
  ASSERT_TRUE(purged.has_value());
  EXPECT_EQ(*purged, 1);
  EXPECT_EQ(StatusOf("u", "w"), MsgStatus::kDelete);
  EXPECT_EQ(StatusOf("u", "x2099"), MsgStatus::kExpire);
}

}  // namespace
}  // namespace chronoq::contract
