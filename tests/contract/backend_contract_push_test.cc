// Contract cases for the push lane (issue 16, docs/push.md): TakePush, the lease, release and
// attempt-guarded acks, OnPushReady, and the push lane in the views every message has (counts,
// listMsg, getMsg, purge, dead letters, redrive, restart). See backend_contract.h.
//
// What every backend must do, in short: a message sent with a callback, or into a topic whose
// configuration has one at the time of the send, is in the push lane for life; Pull never returns
// it and TakePush returns nothing else; OnReady (long polls) never fires for push-lane work alone,
// OnPushReady does when push-lane messages may be due.
#include <algorithm>

#include "tests/contract/backend_contract.h"

namespace chronoq::contract {
namespace {

using core::MsgStatus;
using Ids = std::vector<std::string>;

constexpr Millis kMargin{1'000};  // the lease margin the cases take with

core::Callback Http(const std::string& url, int64_t timeout_ms,
                    std::optional<int64_t> retry_interval_ms = std::nullopt) {
  core::Callback cb;
  cb.type = core::CallbackType::kHttp;
  cb.url = url;
  cb.timeout = Millis(timeout_ms);
  if (retry_interval_ms) cb.retry_interval = Millis(*retry_interval_ms);
  return cb;
}

// A message with its own callback (100 ms timeout unless given).
core::NewMessage PushMsg(const std::string& topic, const std::string& id, int64_t delay_ms,
                         std::optional<core::Callback> cb = Http("http://127.0.0.1:9/own", 100)) {
  core::NewMessage m{topic, id, "push-" + id, Millis(delay_ms), Millis(3'600'000), 10};
  m.callback = std::move(cb);
  return m;
}

core::TopicConfig WithCallback(std::optional<core::Callback> cb) {
  core::TopicConfig c;
  c.callback = std::move(cb);
  return c;
}

Ids IdsOf(const std::vector<core::Message>& ms) {
  Ids ids;
  for (const core::Message& m : ms) ids.push_back(m.record.msg_id);
  return ids;
}

Ids Sorted(Ids ids) {
  std::sort(ids.begin(), ids.end());
  return ids;
}

bool Has(const Ids& calls, const std::string& topic) {
  return std::find(calls.begin(), calls.end(), topic) != calls.end();
}

class Push {
 public:
  explicit Push(testutil::SyncBackend* b) : b_(b) {}
  backend::PushTake Take(const std::string& topic, int32_t max = 10, Millis margin = kMargin) {
    Result<backend::PushTake> r = b_->TakePush(topic, max, margin);
    EXPECT_TRUE(r.has_value()) << "takePush " << topic << ": " << r.error().ToString();
    return r.has_value() ? std::move(*r) : backend::PushTake{};
  }
  Ids TakeIds(const std::string& topic, int32_t max = 10) {
    return IdsOf(Take(topic, max).messages);
  }
  // One AckBatch item's answer.
  Status Outcome(const std::string& topic, backend::AckItem item) {
    Result<std::vector<Status>> r = b_->AckBatch(topic, {std::move(item)});
    EXPECT_TRUE(r.has_value()) << r.error().ToString();
    return r.has_value() && r->size() == 1 ? (*r)[0] : Internal("no answer");
  }
  Status Ack(const std::string& topic, const std::string& id, int64_t attempt = 0) {
    return Outcome(topic, backend::AckItem{id, true, "", false, attempt});
  }
  Status Nack(const std::string& topic, const std::string& id, const std::string& reason,
              int64_t attempt = 0) {
    return Outcome(topic, backend::AckItem{id, false, reason, false, attempt});
  }
  Status Release(const std::string& topic, const std::string& id, int64_t attempt = 0) {
    return Outcome(topic, backend::AckItem{id, false, "", true, attempt});
  }

 private:
  testutil::SyncBackend* b_;
};

}  // namespace

void BackendContractTest::ExpectPushDueAfter(const std::string& topic, int64_t ms) {
  PushReadyCalls();
  Advance(ms - 1);
  Result<backend::PushTake> early = b_->TakePush(topic, 10, kMargin);
  ASSERT_TRUE(early.has_value()) << early.error().ToString();
  EXPECT_EQ(IdsOf(early->messages), Ids{}) << "taken " << ms - 1 << " ms on";
  Advance(1);
  EXPECT_TRUE(Has(PushReadyCalls(), topic)) << "OnPushReady not told " << ms << " ms on";
}

namespace {

// ---- the two lanes ----

TEST_P(BackendContractTest, PushLaneMessagesAreNeverPulledAndPullOnesNeverTaken) {
  Push push(b_.get());
  const core::Callback cb = Http("http://127.0.0.1:9/hook", 250, 40);
  core::Message sent = SendMsg(PushMsg("t", "p", 0, cb));
  EXPECT_TRUE(sent.record.push);
  EXPECT_EQ(sent.record.callback, cb);
  EXPECT_EQ(sent.status, MsgStatus::kReady);
  core::Message plain = SendMsg(NewMsg("t", "q", 0));
  EXPECT_FALSE(plain.record.push);
  EXPECT_EQ(plain.record.callback, std::nullopt);

  EXPECT_EQ(PullIds("t", 10), Ids{"q"});
  backend::PushTake take = push.Take("t");
  ASSERT_EQ(IdsOf(take.messages), Ids{"p"});
  const core::Message& p = take.messages[0];
  EXPECT_EQ(p.status, MsgStatus::kConsuming);
  EXPECT_EQ(p.record.retry, 1);  // the first attempt
  EXPECT_EQ(p.record.payload, "push-p");
  EXPECT_EQ(p.record.callback, cb);
  EXPECT_TRUE(p.record.push);
  EXPECT_TRUE(push.Take("t").messages.empty());
  EXPECT_TRUE(Pull("t", 10).empty());

  // getMsg shows the callback and the lane, also after a restart.
  core::Message got = Get("t", "p");
  EXPECT_EQ(got.status, MsgStatus::kConsuming);
  EXPECT_EQ(got.record.callback, cb);
  EXPECT_TRUE(got.record.push);
  EXPECT_FALSE(Get("t", "q").record.push);
  if (Restart()) {
    EXPECT_EQ(Get("t", "p").record.callback, cb);
    EXPECT_TRUE(Get("t", "p").record.push);
    EXPECT_EQ(Get("t", "p").status, MsgStatus::kConsuming);
  }
}

TEST_P(BackendContractTest, TheTopicsCallbackAtTheSendDecidesTheLaneForLife) {
  Push push(b_.get());
  SendMsg(NewMsg("t", "before", 0));
  const core::Callback topic_cb = Http("http://127.0.0.1:9/topic", 300);
  SetConfig("t", WithCallback(topic_cb));
  core::Message after = SendMsg(NewMsg("t", "after", 0));
  EXPECT_TRUE(after.record.push);
  EXPECT_EQ(after.record.callback, std::nullopt);  // the topic's, resolved at each attempt
  // Removing the topic's callback moves nothing: the lane was decided at the send.
  SetConfig("t", WithCallback(std::nullopt));
  SendMsg(NewMsg("t", "plain", 0));
  EXPECT_EQ(PullIds("t", 10), (Ids{"before", "plain"}));
  backend::PushTake take = push.Take("t");
  EXPECT_EQ(IdsOf(take.messages), Ids{"after"});
  EXPECT_EQ(take.topic_callback, std::nullopt);  // the topic has none now
}

TEST_P(BackendContractTest, TakePushFollowsPullOrderAndTakesUpToMax) {
  Push push(b_.get());
  SendMsg(PushMsg("t", "late", 300));
  core::NewMessage p0 = PushMsg("t", "p0", 0);
  core::NewMessage p9 = PushMsg("t", "p9", 100);
  p9.priority = 9;
  core::NewMessage p5 = PushMsg("t", "p5", 0);
  p5.priority = 5;
  SendMsg(p0);
  SendMsg(p9);
  SendMsg(p5);
  SendMsg(PushMsg("t", "a", 0));
  Advance(300);
  EXPECT_EQ(push.TakeIds("t", 3), (Ids{"p9", "p5", "p0"}));
  EXPECT_EQ(push.TakeIds("t", 3), (Ids{"a", "late"}));
  EXPECT_TRUE(push.TakeIds("t", 3).empty());
}

TEST_P(BackendContractTest, ADelayedPushIsTakenAtItsTriggerTimeNotBefore) {
  Push push(b_.get());
  SendMsg(PushMsg("t", "d", 10'000));  // through the far tier on small-horizon engines
  AdvanceTo(At(9'999));
  EXPECT_TRUE(push.TakeIds("t").empty());
  Advance(1);
  EXPECT_TRUE(Pull("t", 10).empty());
  EXPECT_EQ(push.TakeIds("t"), Ids{"d"});
}

// ---- the lease ----

TEST_P(BackendContractTest, TheLeaseIsTheCallbacksTimeoutPlusTheMarginOwnFirst) {
  Push push(b_.get());
  const core::Callback topic_cb = Http("http://127.0.0.1:9/topic", 300);
  SetConfig("t", WithCallback(topic_cb));
  SendMsg(PushMsg("t", "own", 0, Http("http://127.0.0.1:9/own", 100)));
  SendMsg(NewMsg("t", "topics", 0));
  Advance(5);
  backend::PushTake take = push.Take("t", 10, Millis(2'000));
  ASSERT_EQ(IdsOf(take.messages), (Ids{"own", "topics"}));
  EXPECT_EQ(take.topic_callback, topic_cb);
  EXPECT_EQ(take.messages[0].record.ack_deadline(), Now() + Millis(2'100));
  EXPECT_EQ(take.messages[1].record.ack_deadline(), Now() + Millis(2'300));
  EXPECT_EQ(Get("t", "own").record.ack_deadline(), Now() + Millis(2'100));
}

TEST_P(BackendContractTest, WhenTheLeaseEndsThePushIsDueAgainAndOnPushReadyIsTold) {
  Push push(b_.get());
  SendMsg(PushMsg("t", "p", 0));  // timeout 100: lease 1'100
  ASSERT_EQ(push.TakeIds("t"), Ids{"p"});
  ReadyCalls();
  ExpectPushDueAfter("t", 1'100);
  EXPECT_FALSE(Has(ReadyCalls(), "t"));
  EXPECT_TRUE(Pull("t", 10).empty());
  backend::PushTake again = push.Take("t");
  ASSERT_EQ(IdsOf(again.messages), Ids{"p"});
  EXPECT_EQ(again.messages[0].record.retry, 2);  // the second attempt
}

// ---- outcomes: ack, nack, release, attempt guards ----

TEST_P(BackendContractTest, AnAckedPushEndsConsumed) {
  Push push(b_.get());
  SendMsg(PushMsg("t", "p", 0));
  ASSERT_EQ(push.TakeIds("t"), Ids{"p"});
  EXPECT_TRUE(push.Ack("t", "p").ok());
  EXPECT_EQ(StatusOf("t", "p"), MsgStatus::kConsumeOk);
  EXPECT_EQ(push.Ack("t", "p").code(), Errc::kInvalidState);
}

TEST_P(BackendContractTest, ANackedPushWaitsItsOwnCallbacksRetryIntervalAndKeepsTheError) {
  Push push(b_.get());
  core::TopicConfig c;
  c.retry_interval = Millis(10'000);
  SetConfig("t", c);
  SendMsg(PushMsg("t", "own", 0, Http("http://127.0.0.1:9/own", 100, 500)));
  SendMsg(PushMsg("t", "topics", 0, Http("http://127.0.0.1:9/other", 100)));
  ASSERT_EQ(push.TakeIds("t"), (Ids{"own", "topics"}));
  EXPECT_TRUE(push.Nack("t", "own", "HTTP 503: busy").ok());
  EXPECT_TRUE(push.Nack("t", "topics", "HTTP 500").ok());
  core::Message m = Get("t", "own");
  EXPECT_EQ(m.status, MsgStatus::kWaiting);
  EXPECT_EQ(m.record.last_error, "HTTP 503: busy");
  EXPECT_EQ(m.record.retry, 1);
  ExpectPushDueAfter("t", 500);
  backend::PushTake again = push.Take("t");
  ASSERT_EQ(IdsOf(again.messages), Ids{"own"});
  EXPECT_EQ(again.messages[0].record.retry, 2);
  EXPECT_TRUE(push.Ack("t", "own", 2).ok());
  // The other one has no retry interval of its own: the topic's.
  ExpectPushDueAfter("t", 9'500);
  EXPECT_EQ(push.TakeIds("t"), Ids{"topics"});
}

TEST_P(BackendContractTest, AReleasedPushIsDueAgainAfterTheBackOffWithoutCountingAnAttempt) {
  Push push(b_.get());
  SendMsg(PushMsg("t", "p", 0));
  ASSERT_EQ(push.TakeIds("t"), Ids{"p"});
  EXPECT_TRUE(push.Release("t", "p", 1).ok());
  core::Message m = Get("t", "p");
  EXPECT_EQ(m.record.retry, 0);  // not an attempt
  EXPECT_EQ(m.status, MsgStatus::kWaiting);
  EXPECT_EQ(m.record.visible_at, Now() + core::kReleaseBackoff);
  ExpectPushDueAfter("t", core::kReleaseBackoff.count());
  backend::PushTake again = push.Take("t");
  ASSERT_EQ(IdsOf(again.messages), Ids{"p"});
  EXPECT_EQ(again.messages[0].record.retry, 1);
  // Only a message being consumed can be released.
  EXPECT_TRUE(push.Ack("t", "p").ok());
  EXPECT_EQ(push.Release("t", "p").code(), Errc::kInvalidState);
}

TEST_P(BackendContractTest, AnOutcomeNamingAnOverAttemptChangesNothing) {
  Push push(b_.get());
  SendMsg(PushMsg("t", "p", 0));  // lease 1'100
  ASSERT_EQ(push.TakeIds("t"), Ids{"p"});
  for (Status s : {push.Ack("t", "p", 2), push.Nack("t", "p", "x", 2), push.Release("t", "p", 2)}) {
    EXPECT_EQ(s.code(), Errc::kInvalidState) << s.ToString();
  }
  EXPECT_EQ(StatusOf("t", "p"), MsgStatus::kConsuming);
  EXPECT_EQ(Get("t", "p").record.retry, 1);
  // The first attempt's lease runs out and a second attempt takes the message: the first's late
  // outcome must not end the second.
  Advance(1'100);
  ASSERT_EQ(push.TakeIds("t"), Ids{"p"});
  EXPECT_EQ(push.Nack("t", "p", "late", 1).code(), Errc::kInvalidState);
  EXPECT_EQ(push.Ack("t", "p", 1).code(), Errc::kInvalidState);
  core::Message m = Get("t", "p");
  EXPECT_EQ(m.status, MsgStatus::kConsuming);
  EXPECT_EQ(m.record.last_error, "");
  EXPECT_TRUE(push.Ack("t", "p", 2).ok());
  EXPECT_EQ(StatusOf("t", "p"), MsgStatus::kConsumeOk);
  // Unknown message: not found, whatever the attempt.
  EXPECT_EQ(push.Ack("t", "nope", 1).code(), Errc::kNotFound);
}

// ---- the end of a push: attempts used up, ttl; dead letters and redrive ----

TEST_P(BackendContractTest, APushWhoseAttemptsRunOutEndsAsRetryExhaustAndDeadLetters) {
  Push push(b_.get());
  core::TopicConfig c;
  c.dead_letter_topic = "t.dlq";
  SetConfig("t", c);
  const core::Callback cb = Http("http://127.0.0.1:9/own", 100);
  core::NewMessage m = PushMsg("t", "p", 0, cb);
  m.max_retry = 1;  // two attempts
  SendMsg(m);
  ASSERT_EQ(push.TakeIds("t"), Ids{"p"});
  EXPECT_TRUE(push.Nack("t", "p", "HTTP 500", 1).ok());
  ASSERT_EQ(push.TakeIds("t"), Ids{"p"});
  EXPECT_TRUE(push.Nack("t", "p", "HTTP 502", 2).ok());
  core::Message ended = Get("t", "p");
  EXPECT_EQ(ended.status, MsgStatus::kRetryExhaust);
  EXPECT_EQ(ended.record.retry, 2);
  EXPECT_EQ(ended.record.last_error, "HTTP 502");
  EXPECT_EQ(Info("t").ready + Info("t").waiting + Info("t").consuming, 0);
  // The dead letter waits for pullers (never pushed from the dead-letter topic) and keeps the
  // message's own callback, for getMsg and for a redrive.
  std::vector<core::Message> dead = Pull("t.dlq", 10);
  ASSERT_EQ(IdsOf(dead), Ids{"p"});
  EXPECT_EQ(dead[0].record.payload, "push-p");
  EXPECT_EQ(dead[0].record.last_error, "HTTP 502");
  EXPECT_EQ(dead[0].record.callback, cb);
  EXPECT_FALSE(dead[0].record.push);
  ASSERT_TRUE(dead[0].record.dead_letter.has_value());
  EXPECT_EQ(dead[0].record.dead_letter->status, MsgStatus::kRetryExhaust);
}

TEST_P(BackendContractTest, APushWhoseLastLeaseEndsOrWhoseTtlPassesEndsByTime) {
  Push push(b_.get());
  core::TopicConfig c;
  c.dead_letter_topic = "t.dlq";
  SetConfig("t", c);
  core::NewMessage once = PushMsg("t", "once", 0);
  once.max_retry = 0;
  SendMsg(once);
  core::NewMessage short_lived = PushMsg("t", "ttl", 0);
  short_lived.ttl = Millis(500);
  SendMsg(short_lived);
  ASSERT_EQ(push.TakeIds("t", 1), Ids{"once"});
  Advance(500);
  EXPECT_EQ(StatusOf("t", "ttl"), MsgStatus::kExpire);
  Advance(600);  // the lease of 1'100 ends on the last attempt
  EXPECT_EQ(StatusOf("t", "once"), MsgStatus::kRetryExhaust);
  EXPECT_TRUE(push.TakeIds("t").empty());
  EXPECT_EQ(Sorted(PullIds("t.dlq", 10)), (Ids{"once", "ttl"}));
}

TEST_P(BackendContractTest, ARedrivenPushGoesBackToThePushLane) {
  Push push(b_.get());
  core::TopicConfig c;
  c.dead_letter_topic = "t.dlq";
  c.max_retry = 0;
  SetConfig("t", c);
  const core::Callback own = Http("http://127.0.0.1:9/own", 100);
  core::NewMessage m = PushMsg("t", "own", 0, own);
  m.max_retry = std::nullopt;  // the topic's: one attempt
  SendMsg(m);
  ASSERT_EQ(push.TakeIds("t"), Ids{"own"});
  EXPECT_TRUE(push.Nack("t", "own", "HTTP 500").ok());
  ASSERT_EQ(StatusOf("t", "own"), MsgStatus::kRetryExhaust);
  ASSERT_TRUE(Get("t.dlq", "own").record.dead_letter.has_value());
  // A redriven message keeps its own callback and is in the push lane again.
  Result<int64_t> moved = b_->Redrive(backend::RedriveRequest{"t.dlq", std::string("own"), 100});
  ASSERT_TRUE(moved.has_value()) << moved.error().ToString();
  EXPECT_EQ(*moved, 1);
  core::Message back = Get("t", "own");
  EXPECT_EQ(back.status, MsgStatus::kReady);
  EXPECT_EQ(back.record.retry, 0);
  EXPECT_EQ(back.record.callback, own);
  EXPECT_TRUE(back.record.push);
  EXPECT_TRUE(Pull("t", 10).empty());
  backend::PushTake take = push.Take("t");
  ASSERT_EQ(IdsOf(take.messages), Ids{"own"});
  EXPECT_EQ(take.messages[0].record.payload, "push-own");

  // A plain message that died in the pull lane goes to the push lane when the topic has a
  // callback at the redrive.
  core::TopicConfig c2;
  c2.dead_letter_topic = "t2.dlq";
  c2.max_retry = 0;
  SetConfig("t2", c2);
  core::NewMessage plain = NewMsg("t2", "plain", 0);
  plain.max_retry = std::nullopt;
  SendMsg(plain);
  ASSERT_EQ(PullIds("t2", 1, 1'000), Ids{"plain"});
  Advance(1'000);
  ASSERT_EQ(StatusOf("t2", "plain"), MsgStatus::kRetryExhaust);
  SetConfig("t2", WithCallback(Http("http://127.0.0.1:9/t2", 100)));
  moved = b_->Redrive(backend::RedriveRequest{"t2.dlq", std::nullopt, 100});
  ASSERT_TRUE(moved.has_value()) << moved.error().ToString();
  EXPECT_EQ(*moved, 1);
  EXPECT_TRUE(Pull("t2", 10).empty());
  EXPECT_EQ(push.TakeIds("t2"), Ids{"plain"});
}

// ---- pause ----

TEST_P(BackendContractTest, TakePushOfAPausedOrUnknownTopicIsEmptyAndResumingTellsIt) {
  Push push(b_.get());
  EXPECT_TRUE(push.Take("nosuchtopic").messages.empty());
  EXPECT_TRUE(ListNames().empty());  // a take does not create a topic
  SendMsg(PushMsg("t", "p", 0));
  core::TopicConfig paused;
  paused.paused = true;
  SetConfig("t", paused);
  EXPECT_TRUE(push.Take("t").messages.empty());
  PushReadyCalls();
  core::TopicConfig resumed;
  resumed.paused = false;
  SetConfig("t", resumed);
  EXPECT_TRUE(Has(PushReadyCalls(), "t"));
  EXPECT_EQ(push.TakeIds("t"), Ids{"p"});
}

// ---- wake-ups ----

TEST_P(BackendContractTest, PushWorkTellsOnPushReadyAndNeverOnReady) {
  ReadyCalls();
  PushReadyCalls();
  SendMsg(PushMsg("t", "now", 0));
  EXPECT_TRUE(Has(PushReadyCalls(), "t"));
  EXPECT_FALSE(Has(ReadyCalls(), "t"));
  SendMsg(PushMsg("t", "later", 1'000));
  PushReadyCalls();
  Advance(999);
  EXPECT_FALSE(Has(PushReadyCalls(), "t"));
  Advance(1);
  EXPECT_TRUE(Has(PushReadyCalls(), "t"));  // the trigger time came
  EXPECT_FALSE(Has(ReadyCalls(), "t"));
  // Pull-lane work still tells OnReady.
  SendMsg(NewMsg("t", "plain", 0));
  EXPECT_TRUE(Has(ReadyCalls(), "t"));
}

// ---- the views every message has ----

TEST_P(BackendContractTest, CountsAndListMsgIncludePushMessages) {
  Push push(b_.get());
  SendMsg(PushMsg("t", "w", 60'000));
  SendMsg(PushMsg("t", "r", 0));
  SendMsg(PushMsg("t", "c", 0));
  SendMsg(NewMsg("t", "pull", 0));
  ASSERT_EQ(push.TakeIds("t", 1), Ids{"r"});  // r is consuming now, c stays ready
  core::TopicInfo info = Info("t");
  EXPECT_EQ(info.waiting, 1);
  EXPECT_EQ(info.ready, 2);
  EXPECT_EQ(info.consuming, 1);
  EXPECT_EQ(ListWalkIds("t", MsgStatus::kWaiting), Ids{"w"});
  EXPECT_EQ(Sorted(ListWalkIds("t", MsgStatus::kReady, 1)), (Ids{"c", "pull"}));
  EXPECT_EQ(ListWalkIds("t", MsgStatus::kConsuming), Ids{"r"});
  EXPECT_EQ(Sorted(ListWalkIds("t", std::nullopt, 1)), (Ids{"c", "pull", "r", "w"}));
  for (const core::Message& m : ListWalk("t", std::nullopt, 10)) {
    EXPECT_EQ(m.record.push, m.record.msg_id != "pull") << m.record.msg_id;
  }
}

TEST_P(BackendContractTest, PushMessagesCanBeUpdatedCountedDeletedAndPurged) {
  Push push(b_.get());
  SendMsg(PushMsg("t", "u", 60'000));
  core::NewMessage counted = PushMsg("t", "n", 60'000);
  counted.count_trigger = 2;
  SendMsg(counted);
  SendMsg(PushMsg("t", "d", 0));
  SendMsg(PushMsg("t", "x", 0));
  core::MessageUpdate up;
  up.trigger_time = Now();
  Result<core::Message> updated = b_->Update("t", "u", up);
  ASSERT_TRUE(updated.has_value()) << updated.error().ToString();
  EXPECT_TRUE(updated->record.push);
  ASSERT_TRUE(b_->Count("t", "n", 2).has_value());
  EXPECT_TRUE(b_->Delete("t", "d").ok());
  EXPECT_EQ(StatusOf("t", "d"), MsgStatus::kDelete);
  EXPECT_TRUE(Pull("t", 10).empty());
  EXPECT_EQ(Sorted(push.TakeIds("t")), (Ids{"n", "u", "x"}));
  SendMsg(PushMsg("t", "y", 0));
  SendMsg(PushMsg("t", "z", 30'000));
  Result<int64_t> purged = b_->Purge("t");
  ASSERT_TRUE(purged.has_value()) << purged.error().ToString();
  EXPECT_EQ(*purged, 5);  // n, u, x (consuming), y, z
  EXPECT_TRUE(push.TakeIds("t").empty());
  core::TopicInfo info = Info("t");
  EXPECT_EQ(info.waiting + info.ready + info.consuming, 0);
}

// ---- restart ----

TEST_P(BackendContractTest, AfterARestartPushMessagesStayInThePushLaneAndAreAnnounced) {
  Push push(b_.get());
  SendMsg(PushMsg("t", "taken", 0));
  SendMsg(PushMsg("t", "ready", 0));
  SendMsg(PushMsg("t", "later", 5'000));
  SendMsg(NewMsg("t", "plain", 0));
  ASSERT_EQ(push.TakeIds("t", 1), Ids{"taken"});
  PushReadyCalls();
  ASSERT_TRUE(Restart());
  Push again(b_.get());
  // Told at start (or when the listener is set): the lease of "taken" may have run out while the
  // process was down, and "ready" waits.
  EXPECT_TRUE(Has(PushReadyCalls(), "t"));
  EXPECT_EQ(PullIds("t", 10), Ids{"plain"});
  EXPECT_EQ(again.TakeIds("t"), Ids{"ready"});
  EXPECT_TRUE(again.Ack("t", "ready").ok());
  AdvanceTo(At(1'100));  // the lease of "taken"
  EXPECT_EQ(again.TakeIds("t"), Ids{"taken"});
  EXPECT_TRUE(again.Ack("t", "taken", 2).ok());
  AdvanceTo(At(5'000));
  EXPECT_EQ(again.TakeIds("t"), Ids{"later"});
  EXPECT_TRUE(Pull("t", 10).empty());
}

}  // namespace
}  // namespace chronoq::contract
