// The contract fixture, and the cases for sendMsg and getMsg. See backend_contract.h.
#include "tests/contract/backend_contract.h"

#include <algorithm>
#include <condition_variable>
#include <set>

namespace chronoq::contract {

using core::MsgStatus;

std::string FactoryName(const ::testing::TestParamInfo<BackendFactory*>& info) {
  return info.param->name();
}

void RecordingListener::OnReady(std::string_view topic) {
  std::lock_guard l(mu_);
  calls_.emplace_back(topic);
}

void RecordingListener::OnPushReady(std::string_view topic) {
  std::lock_guard l(mu_);
  push_calls_.emplace_back(topic);
}

std::vector<std::string> RecordingListener::Take() {
  std::lock_guard l(mu_);
  return std::exchange(calls_, {});
}

std::vector<std::string> RecordingListener::TakePush() {
  std::lock_guard l(mu_);
  return std::exchange(push_calls_, {});
}

void BackendContractTest::SetUp() {
  h_ = GetParam()->Make(options_);
  ASSERT_NE(h_, nullptr);
  ASSERT_EQ(h_->clock()->Now(), options_.start);
  b_ = std::make_unique<testutil::SyncBackend>(h_->backend());
  h_->backend()->SetTopicDefaults(&node_layers_);
  h_->backend()->SetReadyListener(&listener_);
}

void BackendContractTest::TearDown() {
  if (h_) h_->backend()->SetReadyListener(nullptr);
  b_.reset();
  h_.reset();
}

void BackendContractTest::Advance(int64_t ms) {
  h_->scheduler()->Advance(Millis(ms));
  h_->Settle();
}
void BackendContractTest::AdvanceTo(TimePoint t) {
  h_->scheduler()->AdvanceTo(t);
  h_->Settle();
}
void BackendContractTest::AdvanceClockOnly(int64_t ms) { h_->clock()->Advance(Millis(ms)); }

std::vector<std::string> BackendContractTest::ReadyCalls() {
  h_->Settle();
  return listener_.Take();
}

std::vector<std::string> BackendContractTest::PushReadyCalls() {
  h_->Settle();
  return listener_.TakePush();
}

core::Message BackendContractTest::Send(const std::string& topic, const std::string& id,
                                        int64_t delay_ms, int64_t ttl_ms, int32_t max_retry,
                                        const std::string& payload) {
  Result<core::Message> r =
      b_->Send(topic, id, payload, Millis(delay_ms), Millis(ttl_ms), max_retry);
  EXPECT_TRUE(r.has_value()) << "send " << topic << "/" << id << ": " << r.error().ToString();
  return r.has_value() ? *r : core::Message{};
}

std::vector<core::Message> BackendContractTest::Pull(const std::string& topic, int32_t batch,
                                                     int64_t ack_timeout_ms) {
  Result<std::vector<core::Message>> r = b_->Pull(topic, batch, Millis(ack_timeout_ms));
  EXPECT_TRUE(r.has_value()) << "pull " << topic << ": " << r.error().ToString();
  return r.has_value() ? *r : std::vector<core::Message>{};
}

std::vector<std::string> BackendContractTest::PullIds(const std::string& topic, int32_t batch,
                                                      int64_t ack_timeout_ms) {
  std::vector<std::string> ids;
  for (const core::Message& m : Pull(topic, batch, ack_timeout_ms)) ids.push_back(m.record.msg_id);
  return ids;
}

core::Message BackendContractTest::Get(const std::string& topic, const std::string& id) {
  Result<core::Message> r = b_->Get(topic, id);
  EXPECT_TRUE(r.has_value()) << "get " << topic << "/" << id << ": " << r.error().ToString();
  return r.has_value() ? *r : core::Message{};
}

MsgStatus BackendContractTest::StatusOf(const std::string& topic, const std::string& id) {
  return Get(topic, id).status;
}

Errc BackendContractTest::GetError(const std::string& topic, const std::string& id) {
  return b_->Get(topic, id).error().code();
}

core::TopicInfo BackendContractTest::Info(const std::string& topic) {
  Result<core::TopicInfo> r = b_->Info(topic);
  EXPECT_TRUE(r.has_value()) << r.error().ToString();
  return r.has_value() ? *r : core::TopicInfo{};
}

std::vector<core::TopicInfo> BackendContractTest::List() {
  Result<std::vector<core::TopicInfo>> r = b_->List();
  EXPECT_TRUE(r.has_value()) << r.error().ToString();
  return r.has_value() ? *r : std::vector<core::TopicInfo>{};
}

std::vector<std::string> BackendContractTest::ListNames() {
  std::vector<std::string> names;
  for (const core::TopicInfo& i : List()) names.push_back(i.topic);
  return names;
}

core::NewMessage BackendContractTest::NewMsg(const std::string& topic, const std::string& id,
                                             int64_t delay_ms, int32_t priority,
                                             const std::string& payload) {
  core::NewMessage m{topic, id, payload, Millis(delay_ms), Millis(3'600'000), 10};
  m.priority = priority;
  return m;
}

core::Message BackendContractTest::SendMsg(core::NewMessage m) {
  const std::string what = m.topic + "/" + m.msg_id;
  Result<core::Message> r = b_->Send(std::move(m));
  EXPECT_TRUE(r.has_value()) << "send " << what << ": " << r.error().ToString();
  return r.has_value() ? *r : core::Message{};
}

namespace {

// Counts answers of calls made without waiting; Wait() returns when `n` have come.
class Countdown {
 public:
  explicit Countdown(size_t n) : left_(n) {}
  void Done() {
    std::lock_guard l(mu_);
    if (--left_ == 0) cv_.notify_all();
  }
  void Wait() {
    std::unique_lock l(mu_);
    cv_.wait(l, [&] { return left_ == 0; });
  }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  size_t left_;
};

}  // namespace

std::vector<core::Message> BackendContractTest::SendAll(std::vector<core::NewMessage> msgs) {
  // At most kWindow sends in flight: as many as a busy server sees, not so many that the last
  // waits for its answer longer than a backend's reply timeout (Redis runs scripts one by one).
  constexpr size_t kWindow = 256;
  std::vector<Result<backend::Sent>> answers(msgs.size(), Internal("no answer"));
  for (size_t start = 0; start < msgs.size(); start += kWindow) {
    const size_t end = std::min(msgs.size(), start + kWindow);
    Countdown countdown(end - start);
    for (size_t i = start; i < end; ++i) {
      h_->backend()->Send(std::move(msgs[i]), [&answers, &countdown, i](Result<backend::Sent> r) {
        answers[i] = std::move(r);
        countdown.Done();
      });
    }
    countdown.Wait();
  }
  std::vector<core::Message> out;
  for (Result<backend::Sent>& r : answers) {
    EXPECT_TRUE(r.has_value()) << r.error().ToString();
    out.push_back(r.has_value() ? std::move(r->message) : core::Message{});
  }
  return out;
}

void BackendContractTest::AckAll(const std::string& topic,
                                 const std::vector<std::pair<std::string, bool>>& acks) {
  std::vector<Status> answers(acks.size());
  Countdown countdown(acks.size());
  for (size_t i = 0; i < acks.size(); ++i) {
    h_->backend()->Ack(topic, acks[i].first, acks[i].second, [&answers, &countdown, i](Status s) {
      answers[i] = std::move(s);
      countdown.Done();
    });
  }
  countdown.Wait();
  for (size_t i = 0; i < acks.size(); ++i) {
    EXPECT_TRUE(answers[i].ok()) << (acks[i].second ? "ack " : "nack ") << acks[i].first << ": "
                                 << answers[i].ToString();
  }
}

backend::ListPage BackendContractTest::ListPage(const std::string& topic,
                                                std::optional<MsgStatus> status, int32_t limit,
                                                const std::string& cursor) {
  Result<backend::ListPage> r = b_->ListMsg(backend::ListRequest{topic, status, limit, cursor});
  EXPECT_TRUE(r.has_value()) << "listMsg " << topic << ": " << r.error().ToString();
  return r.has_value() ? std::move(*r) : backend::ListPage{};
}

std::vector<core::Message> BackendContractTest::ListWalk(const std::string& topic,
                                                         std::optional<MsgStatus> status,
                                                         int32_t limit, int max_pages) {
  std::vector<core::Message> all;
  std::string cursor;
  for (int page = 0; page < max_pages; ++page) {
    backend::ListPage p = ListPage(topic, status, limit, cursor);
    EXPECT_LE(p.messages.size(), static_cast<size_t>(limit));
    for (core::Message& m : p.messages) all.push_back(std::move(m));
    if (p.next_cursor.empty()) return all;
    cursor = std::move(p.next_cursor);
  }
  ADD_FAILURE() << "listMsg walk of " << topic << " did not end within " << max_pages << " pages";
  return all;
}

std::vector<std::string> BackendContractTest::ListWalkIds(const std::string& topic,
                                                          std::optional<MsgStatus> status,
                                                          int32_t limit) {
  std::vector<std::string> ids;
  for (const core::Message& m : ListWalk(topic, status, limit)) ids.push_back(m.record.msg_id);
  return ids;
}

bool BackendContractTest::Restart() {
  h_->Settle();
  h_->backend()->SetReadyListener(nullptr);
  const bool restarted = h_->Restart();
  b_ = std::make_unique<testutil::SyncBackend>(h_->backend());
  h_->backend()->SetTopicDefaults(&node_layers_);
  h_->backend()->SetReadyListener(&listener_);
  return restarted;
}

void BackendContractTest::SetNodeLayers(
    core::Defaults server, std::map<std::string, core::TopicConfig, std::less<>> file) {
  h_->Settle();
  node_layers_ = core::TopicDefaults(server, std::move(file));
}

core::TopicConfig BackendContractTest::SetConfig(const std::string& topic,
                                                 core::TopicConfig change) {
  Result<core::TopicConfig> r = b_->SetTopicConfig(topic, std::move(change));
  EXPECT_TRUE(r.has_value()) << "setTopicConfig " << topic << ": " << r.error().ToString();
  return r.has_value() ? *r : core::TopicConfig{};
}

core::TopicConfig BackendContractTest::GetConfig(const std::string& topic) {
  Result<core::TopicConfig> r = b_->GetTopicConfig(topic);
  EXPECT_TRUE(r.has_value()) << "getTopicConfig " << topic << ": " << r.error().ToString();
  return r.has_value() ? *r : core::TopicConfig{};
}

GTEST_ALLOW_UNINSTANTIATED_PARAMETERIZED_TEST(BackendContractTest);

namespace {

bool IsLowerHex32(const std::string& s) {
  return s.size() == 32 && s.find_first_not_of("0123456789abcdef") == std::string::npos;
}

// ---- sendMsg ----

TEST_P(BackendContractTest, SendWithDelayIsWaiting) {
  Advance(123);
  core::Message m = Send("t", "a", 10'000, 60'000, 3, "hello");
  EXPECT_EQ(m.status, MsgStatus::kWaiting);
  EXPECT_EQ(m.record.topic, "t");
  EXPECT_EQ(m.record.msg_id, "a");
  EXPECT_EQ(m.record.payload, "hello");
  EXPECT_EQ(m.record.produce_time, At(123));
  EXPECT_EQ(m.record.trigger_time, At(123 + 10'000));
  EXPECT_EQ(m.record.expire_time, At(123 + 10'000 + 60'000));  // ttl counts from the trigger
  EXPECT_EQ(m.record.max_retry, 3);
  EXPECT_EQ(m.record.retry, 0);
}

TEST_P(BackendContractTest, SendWithZeroOrNegativeDelayIsReady) {
  for (int64_t delay : {int64_t{0}, int64_t{-1}, int64_t{-86'400'000}}) {
    std::string id = "d" + std::to_string(delay);
    core::Message m = Send("t", id, delay, 1'000);
    EXPECT_EQ(m.status, MsgStatus::kReady) << delay;
    EXPECT_EQ(m.record.trigger_time, m.record.produce_time) << delay;
    EXPECT_EQ(m.record.expire_time, m.record.produce_time + Millis(1'000)) << delay;
    EXPECT_EQ(StatusOf("t", id), MsgStatus::kReady);
  }
}

TEST_P(BackendContractTest, SendWithOneMsDelayIsWaitingUntilThatMs) {
  Send("t", "a", 1);
  EXPECT_EQ(StatusOf("t", "a"), MsgStatus::kWaiting);
  EXPECT_TRUE(PullIds("t").empty());
  Advance(1);
  EXPECT_EQ(StatusOf("t", "a"), MsgStatus::kReady);
  EXPECT_EQ(PullIds("t"), std::vector<std::string>{"a"});
}

TEST_P(BackendContractTest, SendWithEmptyMsgIdGeneratesOne) {
  std::set<std::string> ids;
  for (int i = 0; i < 20; ++i) {
    core::Message m = Send("t", "", 0);
    EXPECT_TRUE(IsLowerHex32(m.record.msg_id)) << m.record.msg_id;
    ids.insert(m.record.msg_id);
    EXPECT_EQ(Get("t", m.record.msg_id).record.msg_id, m.record.msg_id);
  }
  EXPECT_EQ(ids.size(), 20u);
  EXPECT_EQ(Info("t").ready, 20);
}

TEST_P(BackendContractTest, SendIsIdempotentWhileInLife) {
  core::Message first = Send("t", "a", 5'000, 60'000, 2, "first");
  Advance(10);
  core::Message waiting = Send("t", "a", 0, 1, 9, "second");
  EXPECT_EQ(waiting.record, first.record);
  EXPECT_EQ(waiting.status, MsgStatus::kWaiting);
  Advance(5'000);
  core::Message ready = Send("t", "a", 0, 1, 9, "third");
  EXPECT_EQ(ready.record, first.record);
  EXPECT_EQ(ready.status, MsgStatus::kReady);
  ASSERT_EQ(Pull("t").size(), 1u);
  core::Message consuming = Send("t", "a", 0, 1, 9, "fourth");
  EXPECT_EQ(consuming.status, MsgStatus::kConsuming);
  EXPECT_EQ(consuming.record.retry, 1);
  EXPECT_EQ(consuming.record.payload, "first");
  EXPECT_EQ(consuming.record.produce_time, first.record.produce_time);
  core::TopicInfo info = Info("t");
  EXPECT_EQ(info.consuming, 1);
  EXPECT_EQ(info.ready + info.waiting, 0);  // nothing new was stored
}

TEST_P(BackendContractTest, SendSaysWhetherAnExistingMessageAnswered) {
  auto send = [&](const std::string& id, const std::string& payload) {
    Result<backend::Sent> r =
        b_->SendFull(core::NewMessage{"t", id, payload, Millis(1'000), Millis(60'000), 3});
    EXPECT_TRUE(r.has_value()) << r.error().ToString();
    return r.has_value() ? *r : backend::Sent{};
  };
  backend::Sent fresh = send("a", "first");
  EXPECT_FALSE(fresh.existing);
  backend::Sent again = send("a", "second");
  EXPECT_TRUE(again.existing);
  EXPECT_EQ(again.message.record.payload, "first");
  EXPECT_FALSE(send("", "generated").existing);
  ASSERT_TRUE(b_->Delete("t", "a").ok());
  backend::Sent replaced = send("a", "third");  // an ended message is replaced: a new one
  EXPECT_FALSE(replaced.existing);
  EXPECT_EQ(replaced.message.record.payload, "third");
}

TEST_P(BackendContractTest, SendReplacesAnEndedMessage) {
  // One ended message in each end status, then a send with each id.
  Send("t", "ok", 0);
  Send("t", "del", 0);
  Send("t", "exp", 0, 100);
  Send("t", "exh", 0, 3'600'000, 0);
  ASSERT_EQ(PullIds("t", 1), std::vector<std::string>{"ok"});
  ASSERT_TRUE(b_->Ack("t", "ok").ok());
  ASSERT_TRUE(b_->Delete("t", "del").ok());
  Advance(100);  // "exp" expires
  ASSERT_EQ(PullIds("t", 1), std::vector<std::string>{"exh"});
  ASSERT_TRUE(b_->Ack("t", "exh", false).ok());  // its only delivery: ends as 6
  EXPECT_EQ(StatusOf("t", "ok"), MsgStatus::kConsumeOk);
  EXPECT_EQ(StatusOf("t", "del"), MsgStatus::kDelete);
  EXPECT_EQ(StatusOf("t", "exp"), MsgStatus::kExpire);
  EXPECT_EQ(StatusOf("t", "exh"), MsgStatus::kRetryExhaust);
  Advance(50);
  for (const std::string id : {"ok", "del", "exp", "exh"}) {
    core::Message m = Send("t", id, 1'000, 60'000, 5, "new " + id);
    EXPECT_EQ(m.status, MsgStatus::kWaiting) << id;
    EXPECT_EQ(m.record.payload, "new " + id);
    EXPECT_EQ(m.record.retry, 0);
    EXPECT_EQ(m.record.max_retry, 5);
    EXPECT_EQ(m.record.produce_time, Now());
    EXPECT_EQ(Get("t", id).record, m.record) << id;
  }
  EXPECT_EQ(Info("t").waiting, 4);
  // The replaced records' retention ends; the replacements stay.
  Advance(options().retention.count());
  for (const std::string id : {"ok", "del", "exp", "exh"}) {
    EXPECT_EQ(Get("t", id).record.payload, "new " + id);
  }
}

TEST_P(BackendContractTest, SendReplacesMessageWhoseTtlPassedBeforeAnyTimerRan) {
  Send("t", "a", 0, 100, 10, "old");
  AdvanceClockOnly(100);
  core::Message m = Send("t", "a", 0, 1'000, 10, "new");
  EXPECT_EQ(m.record.payload, "new");
  EXPECT_EQ(m.status, MsgStatus::kReady);
  EXPECT_EQ(Info("t").ready, 1);
}

TEST_P(BackendContractTest, SameMsgIdInTwoTopicsAreIndependent) {
  Send("t1", "a", 0, 3'600'000, 10, "one");
  Send("t2", "a", 0, 3'600'000, 10, "two");
  EXPECT_EQ(Get("t1", "a").record.payload, "one");
  EXPECT_EQ(Get("t2", "a").record.payload, "two");
  ASSERT_TRUE(b_->Delete("t1", "a").ok());
  EXPECT_EQ(StatusOf("t2", "a"), MsgStatus::kReady);
  EXPECT_EQ(Pull("t2").at(0).record.payload, "two");
}

TEST_P(BackendContractTest, HugeTtlAndDelaySaturateInsteadOfWrapping) {
  core::Message m = Send("t", "ttl", 0, std::numeric_limits<int64_t>::max());
  EXPECT_GE(m.record.expire_time, m.record.trigger_time);
  EXPECT_GE(m.record.expire_time, At(int64_t{1} << 52));  // a valid, very late time
  core::Message d =
      Send("t", "delay", int64_t{10} * 365 * 86'400'000, std::numeric_limits<int64_t>::max());
  EXPECT_EQ(d.status, MsgStatus::kWaiting);
  EXPECT_GE(d.record.expire_time, d.record.trigger_time);
  Advance(int64_t{365} * 86'400'000);
  EXPECT_EQ(StatusOf("t", "ttl"), MsgStatus::kReady);
  EXPECT_EQ(StatusOf("t", "delay"), MsgStatus::kWaiting);
  EXPECT_EQ(Info("t").buckets[8], 1);
}

TEST_P(BackendContractTest, MaxRetryIsKeptAsGiven) {
  EXPECT_EQ(Send("t", "zero", 0, 1'000, 0).record.max_retry, 0);
  EXPECT_EQ(Send("t", "max", 0, 1'000, std::numeric_limits<int32_t>::max()).record.max_retry,
            std::numeric_limits<int32_t>::max());
}

// ---- getMsg ----

TEST_P(BackendContractTest, GetOfUnknownIsNotFound) {
  EXPECT_EQ(GetError("nosuchtopic", "a"), Errc::kNotFound);
  Send("t", "a", 0);
  EXPECT_EQ(GetError("t", "b"), Errc::kNotFound);
  EXPECT_EQ(GetError("t", "A"), Errc::kNotFound);  // ids are case-sensitive
}

TEST_P(BackendContractTest, GetFollowsTheLifecycle) {
  Send("t", "a", 1'000, 60'000, 1);
  EXPECT_EQ(StatusOf("t", "a"), MsgStatus::kWaiting);
  Advance(1'000);
  EXPECT_EQ(StatusOf("t", "a"), MsgStatus::kReady);
  ASSERT_EQ(Pull("t", 1, 5'000).size(), 1u);
  core::Message c = Get("t", "a");
  EXPECT_EQ(c.status, MsgStatus::kConsuming);
  EXPECT_EQ(c.record.retry, 1);
  Advance(5'000);
  EXPECT_EQ(StatusOf("t", "a"), MsgStatus::kReady);
  ASSERT_EQ(Pull("t", 1, 5'000).size(), 1u);
  EXPECT_EQ(Get("t", "a").record.retry, 2);
  ASSERT_TRUE(b_->Ack("t", "a").ok());
  core::Message done = Get("t", "a");
  EXPECT_EQ(done.status, MsgStatus::kConsumeOk);
  EXPECT_EQ(done.record.payload, "payload");
}

TEST_P(BackendContractTest, GetReportsTtlPassedAsEndedEvenBeforeTimersRun) {
  Send("t", "never", 0, 1'000);
  Send("t", "once", 0, 1'000);
  Send("t", "late", 500, 1'000);  // trigger 500, expire 1,500
  ASSERT_EQ(PullIds("t", 1, 60'000), std::vector<std::string>{"never"});
  // "never" is now delivered; send order makes "once" next. Deliver it too.
  ASSERT_EQ(PullIds("t", 1, 60'000), std::vector<std::string>{"once"});
  AdvanceClockOnly(1'000);
  EXPECT_EQ(StatusOf("t", "never"), MsgStatus::kRetryExhaust);  // delivered, then ttl
  EXPECT_EQ(StatusOf("t", "once"), MsgStatus::kRetryExhaust);
  EXPECT_EQ(StatusOf("t", "late"), MsgStatus::kReady);
  AdvanceClockOnly(500);
  EXPECT_EQ(StatusOf("t", "late"), MsgStatus::kExpire);  // never delivered, ttl passed
}

TEST_P(BackendContractTest, EndedMessageReadableUntilRetentionEnds) {
  Send("t", "a", 0);
  Pull("t");
  Advance(700);
  ASSERT_TRUE(b_->Ack("t", "a").ok());
  const TimePoint ended = Now();
  AdvanceTo(ended + options().retention - Millis(1));
  EXPECT_EQ(StatusOf("t", "a"), MsgStatus::kConsumeOk);
  Advance(1);
  EXPECT_EQ(GetError("t", "a"), Errc::kNotFound);
}

TEST_P(BackendContractTest, ExpiredMessageRetainedFromItsExpireTime) {
  Send("t", "a", 1'000, 2'000);  // expires at 3,000
  AdvanceTo(At(3'000) + options().retention - Millis(1));
  EXPECT_EQ(StatusOf("t", "a"), MsgStatus::kExpire);
  Advance(1);
  EXPECT_EQ(GetError("t", "a"), Errc::kNotFound);
}

TEST_P(BackendContractTest, ExpiredMessagePastRetentionIsGoneEvenBeforeTimersRun) {
  Send("t", "a", 0, 1'000);
  AdvanceClockOnly(1'000 + options().retention.count());
  EXPECT_EQ(GetError("t", "a"), Errc::kNotFound);
}

}  // namespace
}  // namespace chronoq::contract
