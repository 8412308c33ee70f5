#include "service/queue_service.h"

#include <gtest/gtest.h>

#include <optional>
#include <string>
#include <vector>

#include "base/clock.h"
#include "base/scheduler.h"
#include "tests/testutil/fake_backend.h"

namespace chronoq::service {
namespace {

using core::MsgStatus;
using metrics::MonitorCounter;
using testutil::FakeBackend;

// Aligned to a monitor interval (60 s) so that interval arithmetic stays readable.
const TimePoint kT0 = FromEpochMs(1'700'000'040'000);

// Waits for nothing: the fake answers inline unless held.
template <typename T>
struct Got {
  std::optional<T> value;
  backend::Callback<T> Cb() {
    return [this](T v) { value.emplace(std::move(v)); };
  }
};

class QueueServiceTest : public ::testing::Test {
 protected:
  QueueServiceTest() : clock_(kT0), sched_(&clock_) { Make(Options()); }

  static ServiceOptions Options() {
    ServiceOptions o;
    o.limits.max_topic_bytes = 16;
    o.limits.max_msg_id_bytes = 8;
    o.limits.max_msg_bytes = 32;
    o.limits.max_pull_batch = 50;
    o.limits.max_delay = Millis(1'000'000);
    o.limits.max_long_polling_timeout = Millis(20'000);
    o.limits.max_parked_long_polls = 4;
    o.limits.max_parked_long_polls_per_topic = 2;
    o.defaults.ttl = Millis(111'000);
    o.defaults.max_retry = 7;
    o.defaults.ack_timeout = Millis(22'000);
    o.defaults.long_polling_timeout = Millis(5'000);
    return o;
  }
  void Make(ServiceOptions o) {
    service_.reset();
    service_ = std::make_unique<QueueService>(&fake_, &clock_, &sched_, std::move(o));
  }

  Result<backend::Sent> Send(SendRequest r) {
    Got<Result<backend::Sent>> g;
    service_->Send(std::move(r), g.Cb());
    EXPECT_TRUE(g.value.has_value());
    return g.value ? std::move(*g.value) : Result<backend::Sent>(Internal("no answer"));
  }
  Result<backend::Sent> Send(const std::string& topic, const std::string& id, int64_t delay = 0) {
    return Send(SendRequest{topic, id, "payload", delay, std::nullopt, std::nullopt});
  }
  Result<Messages> Pull(PullRequest r) {
    Got<Result<Messages>> g;
    service_->Pull(std::move(r), g.Cb());
    EXPECT_TRUE(g.value.has_value());
    return g.value ? std::move(*g.value) : Result<Messages>(Internal("no answer"));
  }
  Status Ack(const std::string& topic, const std::string& id, bool ack = true) {
    Got<Status> g;
    service_->Ack(AckRequest{{topic, id}, ack}, g.Cb());
    return g.value.value_or(Internal("no answer"));
  }
  // The monitor counts of `topic` in the interval that holds now, seen from the next one.
  metrics::RequestStats Counted(const std::string& topic) {
    clock_.Advance(Millis(60'000));
    for (const metrics::RequestStats& s : service_->MonitorData().request_stats) {
      if (s.topic == topic) return s;
    }
    return metrics::RequestStats{topic, {}};
  }
  std::string Scrape() {
    std::string text;
    service_->Scrape(nullptr, [&text](std::string t) { text = std::move(t); });
    return text;
  }
  static bool Has(const std::string& text, const std::string& line) {
    return text.find(line + "\n") != std::string::npos;
  }

  base::ManualClock clock_;
  base::ManualScheduler sched_;
  FakeBackend fake_;
  std::unique_ptr<QueueService> service_;
};

// ---- Validation: a refused request never reaches the backend ----

TEST_F(QueueServiceTest, RefusedSendsNeverReachTheBackend) {
  struct Row {
    SendRequest req;
    std::string sentence;
  };
  const std::vector<Row> rows = {
      {{"", "id", "m", 0, {}, {}}, "topic is empty"},
      {{std::string(17, 't'), "id", "m", 0, {}, {}},
       "topic is 17 bytes long; the limit is 16 bytes"},
      {{"t", std::string(9, 'i'), "m", 0, {}, {}}, "msgId is 9 bytes long; the limit is 8 bytes"},
      {{"t", "id", "", 0, {}, {}}, "msg is empty"},
      {{"t", "id", std::string(33, 'm'), 0, {}, {}}, "msg is 33 bytes long; the limit is 32 bytes"},
      {{"t", "id", "m", 1'000'001, {}, {}}, "delayMillis is 1000001; the limit is 1000000 ms"},
  };
  for (const Row& row : rows) {
    Result<backend::Sent> r = Send(row.req);
    ASSERT_FALSE(r.has_value()) << row.sentence;
    EXPECT_EQ(r.error().code(), Errc::kInvalidArgument);
    EXPECT_NE(r.error().message().find(row.sentence), std::string::npos) << r.error().message();
  }
  EXPECT_TRUE(fake_.calls().empty());
  EXPECT_EQ(Counted("t").get(MonitorCounter::kSendMsg), 0);
}

TEST_F(QueueServiceTest, ACallbackIsCheckedAgainstTheAllowlistAndThePayloadItNeeds) {
  ServiceOptions o = Options();
  o.push_allowed = core::TargetAllowlist::Parse("g").value();
  Make(std::move(o));
  SendRequest r;
  r.topic = "t";
  r.msg = "not base64!";
  r.delay_millis = 0;
  core::Callback cb;
  cb.type = core::CallbackType::kGrpc;
  cb.target = "g:1";
  cb.method = "/a.B/C";
  cb.base64 = true;
  r.callback = cb;
  EXPECT_EQ(Send(r).error().message(),
            "msg is not valid base64, which callback.format base64 needs (the gRPC request "
            "bytes)");
  r.callback->target = "h:1";
  EXPECT_EQ(Send(r).error().message(),
            "callback target 'h:1' is not allowed by push-allowed-targets ('g')");
  EXPECT_TRUE(fake_.calls().empty());  // refused sends reach nothing
  r.callback->target = "g:1";
  r.msg = "AAEC";
  ASSERT_TRUE(Send(r).has_value());
  ASSERT_EQ(fake_.calls().size(), 1u);
  EXPECT_EQ(fake_.calls()[0].send.callback, r.callback);  // handed to the backend as given
}

TEST_F(QueueServiceTest, EveryOperationChecksItsTopicAndMsgId) {
  Got<Status> ack, del;
  Got<Result<core::Message>> get;
  Got<Result<core::TopicInfo>> info;
  service_->Ack(AckRequest{{"", "id"}, true}, ack.Cb());
  service_->Delete(DeleteRequest{{"t", ""}, false}, del.Cb());
  service_->Get(MessageRef{"t", std::string(9, 'x')}, get.Cb());
  service_->GetTopicInfo("", info.Cb());
  EXPECT_EQ(ack.value->message(), "topic is empty");
  EXPECT_EQ(del.value->code(), Errc::kInvalidArgument);
  EXPECT_EQ(get.value->error().code(), Errc::kInvalidArgument);
  EXPECT_EQ(info.value->error().message(), "topic is empty");
  Result<Messages> pull = Pull(PullRequest{"", {}, {}});
  EXPECT_EQ(pull.error().message(), "topic is empty");
  Got<Result<Messages>> lp;
  EXPECT_EQ(service_->LongPoll(LongPollRequest{{"", {}, {}}, {}}, nullptr, lp.Cb()), nullptr);
  EXPECT_EQ(lp.value->error().code(), Errc::kInvalidArgument);
  EXPECT_TRUE(fake_.calls().empty());
}

// ---- Defaults and clamps ----

TEST_F(QueueServiceTest, SendAppliesServerDefaults) {
  ASSERT_TRUE(Send(SendRequest{"t", "a", "m", 5, std::nullopt, std::nullopt}).has_value());
  ASSERT_TRUE(Send(SendRequest{"t", "b", "m", 5, 0, -1}).has_value());  // out of range: default
  ASSERT_TRUE(Send(SendRequest{"t", "c", "m", 5, 9'000, 0}).has_value());
  std::vector<FakeBackend::Call> calls = fake_.calls();
  ASSERT_EQ(calls.size(), 3u);
  EXPECT_EQ(calls[0].send.ttl, Millis(111'000));
  EXPECT_EQ(calls[0].send.max_retry, 7);
  EXPECT_EQ(calls[1].send.ttl, Millis(111'000));
  EXPECT_EQ(calls[1].send.max_retry, 7);
  EXPECT_EQ(calls[2].send.ttl, Millis(9'000));
  EXPECT_EQ(calls[2].send.max_retry, 0);
  EXPECT_EQ(calls[2].send.delay, Millis(5));
}

TEST_F(QueueServiceTest, PullClampsTheBatchAndDefaultsTheAckTimeout) {
  ASSERT_TRUE(Pull(PullRequest{"t", std::nullopt, std::nullopt}).has_value());
  ASSERT_TRUE(Pull(PullRequest{"t", 0, -5}).has_value());
  ASSERT_TRUE(Pull(PullRequest{"t", 1'000, 3'000}).has_value());
  std::vector<FakeBackend::Call> calls = fake_.calls();
  ASSERT_EQ(calls.size(), 3u);
  EXPECT_EQ(calls[0].pull.batch, 1);
  EXPECT_EQ(calls[0].pull.ack_timeout, Millis(22'000));
  EXPECT_EQ(calls[1].pull.batch, 1);
  EXPECT_EQ(calls[1].pull.ack_timeout, Millis(22'000));
  EXPECT_EQ(calls[2].pull.batch, 50);
  EXPECT_EQ(calls[2].pull.ack_timeout, Millis(3'000));
}

// ---- Counting: each event once, in both recorders ----

TEST_F(QueueServiceTest, RequestsAreCountedOnceInBothRecorders) {
  ASSERT_TRUE(Send("t", "a").has_value());
  ASSERT_TRUE(Send("t", "a").has_value());  // an idempotent repeat counts as a send
  ASSERT_TRUE(Send("t", "b").has_value());
  ASSERT_EQ(Pull(PullRequest{"t", 10, {}})->size(), 2u);
  ASSERT_TRUE(Ack("t", "a").ok());
  ASSERT_TRUE(Ack("t", "b", false).ok());
  EXPECT_EQ(Ack("t", "zz").code(), Errc::kNotFound);  // failures count nothing
  fake_.FailNext(Unavailable("down"));
  EXPECT_FALSE(Send("t", "c").has_value());
  std::string text = Scrape();
  EXPECT_TRUE(Has(text, "cq_queue_sends_total{topic=\"t\"} 3")) << text;
  EXPECT_TRUE(Has(text, "cq_queue_deliveries_total{topic=\"t\"} 2")) << text;
  EXPECT_TRUE(Has(text, "cq_queue_acks_total{topic=\"t\"} 1")) << text;
  EXPECT_TRUE(Has(text, "cq_queue_nacks_total{topic=\"t\"} 1")) << text;
  EXPECT_TRUE(Has(text, "cq_queue_trigger_lateness_seconds_count{via=\"pull\"} 2")) << text;
  metrics::RequestStats s = Counted("t");
  EXPECT_EQ(s.get(MonitorCounter::kSendMsg), 3);
  EXPECT_EQ(s.get(MonitorCounter::kPullMsg), 2);
  EXPECT_EQ(s.get(MonitorCounter::kAckMsg), 2);
}

TEST_F(QueueServiceTest, WhatTheBackendReportsIsCountedOnceInBothRecorders) {
  backend::TopicEvents e;
  e.triggered = 3;
  e.ready_gap_sum_ms = 30;
  e.ready_gap_max_ms = 20;
  e.ack_timeouts = 2;
  e.expired = 1;
  e.retries_exhausted = 4;
  e.dead_lettered = 3;
  fake_.Emit("t", e);
  std::string text = Scrape();
  EXPECT_TRUE(Has(text, "cq_queue_dead_letters_total{topic=\"t\"} 3")) << text;
  EXPECT_TRUE(Has(text, "cq_queue_ack_timeouts_total{topic=\"t\"} 2")) << text;
  EXPECT_TRUE(Has(text, "cq_queue_expirations_total{topic=\"t\"} 1")) << text;
  EXPECT_TRUE(Has(text, "cq_queue_retry_exhaustions_total{topic=\"t\"} 4")) << text;
  clock_.Advance(Millis(60'000));
  metrics::MonitorSnapshot snap = service_->MonitorData();
  ASSERT_EQ(snap.request_stats.size(), 1u);
  EXPECT_EQ(snap.request_stats[0].get(MonitorCounter::kTriggerMsgReady), 3);
  EXPECT_EQ(snap.request_stats[0].get(MonitorCounter::kTriggerMsgTimeout), 2);
  EXPECT_EQ(snap.request_stats[0].get(MonitorCounter::kTriggerMsgEndLife), 5);
  ASSERT_EQ(snap.ready_gaps.size(), 1u);
  EXPECT_EQ(snap.ready_gaps[0].count, 3);
  EXPECT_EQ(snap.ready_gaps[0].max, 20);
}

TEST_F(QueueServiceTest, SendsRefusedByAFullTopicAreCountedOthersAreNot) {
  fake_.FailNext(core::TopicFull("t", 1, 1));
  ASSERT_FALSE(Send("t", "a").has_value());
  fake_.FailNext(Unavailable("down"));
  ASSERT_FALSE(Send("t", "b").has_value());
  std::string text = Scrape();
  EXPECT_TRUE(Has(text, "cq_queue_capacity_refusals_total{topic=\"t\"} 1")) << text;
}

TEST_F(QueueServiceTest, MonitorShowsNothingBeforeTheIntervalCompletes) {
  ASSERT_TRUE(Send("t", "a").has_value());
  EXPECT_TRUE(service_->MonitorData().request_stats.empty());
  EXPECT_EQ(Counted("t").get(MonitorCounter::kSendMsg), 1);
}

TEST_F(QueueServiceTest, AnswersThatComeLaterAreCountedWhenTheyCome) {
  fake_.Hold();
  Got<Result<backend::Sent>> sent;
  service_->Send(SendRequest{"t", "a", "m", 0, {}, {}}, sent.Cb());
  EXPECT_FALSE(sent.value.has_value());
  // (A scrape would ask the held backend too: read the monitor, which asks nothing.)
  EXPECT_EQ(Counted("t").get(MonitorCounter::kSendMsg), 0);  // not answered: not counted
  fake_.Release();
  ASSERT_TRUE(sent.value.has_value());
  EXPECT_TRUE((*sent.value)->message.status == MsgStatus::kReady);
  EXPECT_EQ(Counted("t").get(MonitorCounter::kSendMsg), 1);  // counted when the answer came
  EXPECT_TRUE(Has(Scrape(), "cq_queue_sends_total{topic=\"t\"} 1"));
}

TEST_F(QueueServiceTest, ScrapeShowsDepthsAndSaysWhenItCouldNotReadThem) {
  ASSERT_TRUE(Send("t", "a").has_value());
  ASSERT_TRUE(Send("t", "b", 1'000).has_value());
  std::string text = Scrape();
  EXPECT_TRUE(Has(text, "cq_queue_depth_read_ok 1")) << text;
  EXPECT_TRUE(Has(text, "cq_queue_messages{topic=\"t\",state=\"ready\"} 1")) << text;
  EXPECT_TRUE(Has(text, "cq_queue_messages{topic=\"t\",state=\"waiting\"} 1")) << text;
  fake_.FailNext(Unavailable("down"));
  text = Scrape();
  EXPECT_TRUE(Has(text, "cq_queue_depth_read_ok 0")) << text;
  metrics::Registry others;
  others.Add([](metrics::TextWriter& w) {
    w.Family("cq_other", "other", metrics::MetricType::kGauge);
    w.Sample("cq_other", {}, 5);
  });
  service_->Scrape(&others, [&text](std::string t) { text = std::move(t); });
  EXPECT_TRUE(Has(text, "cq_other 5")) << text;
}

// ---- Long polls ----

TEST_F(QueueServiceTest, ALongPollIsAnsweredWhenAMessageBecomesReady) {
  ASSERT_TRUE(Send("t", "a", 1'000).has_value());
  Got<Result<Messages>> lp;
  LongPollTicket ticket =
      service_->LongPoll(LongPollRequest{{"t", 5, {}}, 10'000}, nullptr, lp.Cb());
  ASSERT_NE(ticket, nullptr);
  EXPECT_FALSE(lp.value.has_value());
  EXPECT_EQ(service_->long_polls().parked(), 1u);
  fake_.MakeReady("t", "a");
  ASSERT_TRUE(lp.value.has_value());
  ASSERT_EQ((*lp.value)->size(), 1u);
  EXPECT_EQ((*lp.value)->at(0).record.msg_id, "a");
  EXPECT_EQ(service_->long_polls().parked(), 0u);
  // The pull made for it had the request's batch and the default ack timeout.
  FakeBackend::Call last = fake_.calls().back();
  EXPECT_EQ(last.op, "pull");
  EXPECT_EQ(last.pull.batch, 5);
  EXPECT_EQ(last.pull.ack_timeout, Millis(22'000));
  EXPECT_TRUE(Has(Scrape(), "cq_queue_trigger_lateness_seconds_count{via=\"long_poll\"} 1"));
}

TEST_F(QueueServiceTest, LongPollTimeoutsAreDefaultedAndClamped) {
  Got<Result<Messages>> by_default, clamped, given;
  service_->LongPoll(LongPollRequest{{"t", {}, {}}, std::nullopt}, nullptr, by_default.Cb());
  service_->LongPoll(LongPollRequest{{"u", {}, {}}, 3'600'000}, nullptr, clamped.Cb());
  service_->LongPoll(LongPollRequest{{"v", {}, {}}, 7'000}, nullptr, given.Cb());
  sched_.Advance(Millis(4'999));
  EXPECT_FALSE(by_default.value.has_value());
  sched_.Advance(Millis(1));
  ASSERT_TRUE(by_default.value.has_value());
  EXPECT_TRUE((*by_default.value)->empty());
  sched_.Advance(Millis(2'000));
  EXPECT_TRUE(given.value.has_value());
  sched_.Advance(Millis(12'999));  // 19,999 ms
  EXPECT_FALSE(clamped.value.has_value());
  sched_.Advance(Millis(1));
  EXPECT_TRUE(clamped.value.has_value());
}

TEST_F(QueueServiceTest, LongPollsBeyondTheCapsAreAnsweredAtOnce) {
  std::vector<Got<Result<Messages>>> got(5);
  for (int i = 0; i < 3; ++i) {  // per-topic cap 2
    service_->LongPoll(LongPollRequest{{"t", {}, {}}, 10'000}, nullptr, got[i].Cb());
  }
  EXPECT_FALSE(got[0].value.has_value());
  EXPECT_FALSE(got[1].value.has_value());
  ASSERT_TRUE(got[2].value.has_value());  // answered with what one pull found: nothing
  EXPECT_TRUE((*got[2].value)->empty());
  service_->LongPoll(LongPollRequest{{"u", {}, {}}, 10'000}, nullptr, got[3].Cb());
  Got<Result<Messages>> fifth;
  service_->LongPoll(LongPollRequest{{"u", {}, {}}, 10'000}, nullptr, got[4].Cb());
  service_->LongPoll(LongPollRequest{{"v", {}, {}}, 10'000}, nullptr, fifth.Cb());  // total 4
  EXPECT_FALSE(got[4].value.has_value());
  EXPECT_TRUE(fifth.value.has_value());
  EXPECT_EQ(service_->long_polls().parked(), 4u);
  service_->Shutdown();  // answers the parked ones while `got` still exists
}

TEST_F(QueueServiceTest, ACancelledOrLeftLongPollTakesNothing) {
  Got<Result<Messages>> cancelled, left, stays;
  bool alive = true;
  LongPollTicket t1 =
      service_->LongPoll(LongPollRequest{{"t", {}, {}}, 10'000}, nullptr, cancelled.Cb());
  service_->CancelLongPoll(t1);
  ASSERT_TRUE(cancelled.value.has_value());
  EXPECT_TRUE((*cancelled.value)->empty());
  service_->LongPoll(
      LongPollRequest{{"t", {}, {}}, 10'000}, [&alive] { return alive; }, left.Cb());
  service_->LongPoll(LongPollRequest{{"t", {}, {}}, 10'000}, nullptr, stays.Cb());
  alive = false;
  ASSERT_TRUE(Send("t", "a").has_value());  // ready at once: wakes the topic
  ASSERT_TRUE(left.value.has_value());
  EXPECT_TRUE((*left.value)->empty());
  ASSERT_TRUE(stays.value.has_value());
  ASSERT_EQ((*stays.value)->size(), 1u);
  service_->CancelLongPoll(t1);  // already answered: nothing happens
}

TEST_F(QueueServiceTest, ShutdownAnswersParkedLongPollsAndLaterOnesAtOnce) {
  Got<Result<Messages>> parked, later;
  service_->LongPoll(LongPollRequest{{"t", {}, {}}, 10'000}, nullptr, parked.Cb());
  service_->Shutdown();
  ASSERT_TRUE(parked.value.has_value());
  EXPECT_TRUE((*parked.value)->empty());
  service_->LongPoll(LongPollRequest{{"t", {}, {}}, 10'000}, nullptr, later.Cb());
  EXPECT_TRUE(later.value.has_value());
}

// ---- Lifecycle and health ----

TEST_F(QueueServiceTest, RegistersWithTheBackendForItsLifetime) {
  EXPECT_TRUE(fake_.has_listener());
  EXPECT_TRUE(fake_.has_sink());
  service_.reset();
  EXPECT_FALSE(fake_.has_listener());
  EXPECT_FALSE(fake_.has_sink());
}

TEST_F(QueueServiceTest, HealthGoesOfflineAndBack) {
  EXPECT_TRUE(service_->online());
  service_->SetOnline(false);
  EXPECT_FALSE(service_->online());
  ASSERT_TRUE(Send("t", "a").has_value());  // an offline node still serves
  service_->SetOnline(true);
  EXPECT_TRUE(service_->online());
}

TEST_F(QueueServiceTest, OnlineWatchersHearEachChangeUntilRemoved) {
  std::vector<bool> heard;
  const uint64_t id =
      service_->AddOnlineWatcher([&heard](bool online) { heard.push_back(online); });
  service_->SetOnline(true);  // no change
  service_->SetOnline(false);
  service_->SetOnline(false);
  service_->SetOnline(true);
  service_->RemoveOnlineWatcher(id);
  service_->SetOnline(false);
  EXPECT_EQ(heard, (std::vector<bool>{false, true}));
}

// ---- API-EXTENSIONS.md sections 2-3 ----

TEST_F(QueueServiceTest, ExtensionSendFieldsAreCheckedAndPassedOn) {
  SendRequest r{"t", "a", "m", std::nullopt, std::nullopt, std::nullopt};
  r.trigger_time = ToEpochMs(kT0) + 5'000;
  r.priority = 9;
  r.count_trigger = 3;
  ASSERT_TRUE(Send(r).has_value());
  struct Row {
    SendRequest req;
    std::string sentence;
  };
  auto with = [](auto set) {
    SendRequest q{"t", "b", "m", 0, std::nullopt, std::nullopt};
    set(q);
    return q;
  };
  const std::vector<Row> rows = {
      {with([](SendRequest& q) { q.priority = 10; }), "priority must be between 0 and 9, got 10"},
      {with([](SendRequest& q) { q.priority = -1; }), "priority must be between 0 and 9, got -1"},
      {with([](SendRequest& q) { q.count_trigger = -2; }), "countTrigger must be 0 (none)"},
      {with([](SendRequest& q) { q.trigger_time = 5; }), "give either delayMillis or triggerTime"},
      {with([](SendRequest& q) {
         q.delay_millis.reset();
         q.trigger_time = -1;
       }),
       "triggerTime must be a time in milliseconds since the epoch (>= 0), got -1"},
      {with([](SendRequest& q) {
         q.delay_millis.reset();
         q.trigger_time = ToEpochMs(kT0) + 1'000'001;
       }),
       "triggerTime 1700001040001 is 1000001 ms from now; the limit is 1000000 ms"},
      {with([](SendRequest& q) { q.delay_millis.reset(); }), "delayMillis is missing"},
  };
  for (const Row& row : rows) {
    Result<backend::Sent> res = Send(row.req);
    ASSERT_FALSE(res.has_value()) << row.sentence;
    EXPECT_EQ(res.error().code(), Errc::kInvalidArgument);
    EXPECT_NE(res.error().message().find(row.sentence), std::string::npos) << res.error().message();
  }
  std::vector<FakeBackend::Call> calls = fake_.calls();
  ASSERT_EQ(calls.size(), 1u);
  EXPECT_EQ(calls[0].send.trigger_time, kT0 + Millis(5'000));
  EXPECT_EQ(calls[0].send.priority, 9);
  EXPECT_EQ(calls[0].send.count_trigger, 3);
}

TEST_F(QueueServiceTest, SendBatchAnswersEachItemInOrderAndStoresTheGoodOnesTogether) {
  SendBatchRequest b{"t", {}};
  b.msgs.push_back(SendRequest{"", "a", "m", 0, std::nullopt, std::nullopt});
  b.msgs.push_back(SendRequest{"", "b", "", 0, std::nullopt, std::nullopt});  // msg empty
  b.msgs.push_back(SendRequest{"", "c", "m", 60'000, 5'000, 2});
  Got<Result<std::vector<Result<backend::Sent>>>> g;
  service_->SendBatch(std::move(b), g.Cb());
  ASSERT_TRUE(g.value.has_value() && g.value->has_value());
  const auto& results = **g.value;
  ASSERT_EQ(results.size(), 3u);
  EXPECT_EQ(results[0]->message.record.msg_id, "a");
  EXPECT_EQ(results[1].error().message(), "msg is empty");
  EXPECT_EQ(results[2]->message.record.msg_id, "c");
  std::vector<FakeBackend::Call> calls = fake_.calls();
  ASSERT_EQ(calls.size(), 1u);  // one backend call for both good items
  EXPECT_EQ(calls[0].op, "send_batch");
  ASSERT_EQ(calls[0].batch.size(), 2u);
  EXPECT_EQ(calls[0].batch[0].topic, "t");
  EXPECT_EQ(calls[0].batch[1].ttl, Millis(5'000));
  EXPECT_EQ(calls[0].batch[0].ttl, Millis(111'000));  // the server default
  EXPECT_EQ(Counted("t").get(MonitorCounter::kSendMsg), 2);
}

TEST_F(QueueServiceTest, SendBatchRefusesTheWholeBatchForBatchLevelMistakes) {
  auto batch = [](size_t n, bool repeat) {
    SendBatchRequest b{"t", {}};
    for (size_t i = 0; i < n; ++i) {
      b.msgs.push_back(SendRequest{"", repeat ? "same" : "m" + std::to_string(i), "m", 0,
                                   std::nullopt, std::nullopt});
    }
    return b;
  };
  ServiceOptions o = Options();
  o.limits.max_send_batch = 3;
  Make(o);
  const std::vector<std::pair<SendBatchRequest, std::string>> rows = {
      {batch(0, false), "msgs is empty"},
      {batch(4, false), "msgs has 4 messages; the limit is 3 (max-send-batch)"},
      {batch(2, true), "msgId 'same' is given more than once in this batch"},
      {SendBatchRequest{"", {}}, "topic is empty"},
  };
  for (const auto& [req, sentence] : rows) {
    Got<Result<std::vector<Result<backend::Sent>>>> g;
    service_->SendBatch(req, g.Cb());
    ASSERT_TRUE(g.value.has_value());
    ASSERT_FALSE(g.value->has_value()) << sentence;
    EXPECT_EQ(g.value->error().code(), Errc::kInvalidArgument);
    EXPECT_NE(g.value->error().message().find(sentence), std::string::npos)
        << g.value->error().message();
  }
  EXPECT_TRUE(fake_.calls().empty());
}

TEST_F(QueueServiceTest, AckBatchChecksIdsAndAnswersAcksThenNacks) {
  ASSERT_TRUE(Send("t", "a").has_value());
  ASSERT_TRUE(Send("t", "b").has_value());
  ASSERT_EQ(Pull(PullRequest{"t", 2, std::nullopt})->size(), 2u);
  Got<Result<std::vector<AckResult>>> g;
  service_->AckBatch(AckBatchRequest{"t", {"a", "zz"}, {"b"}, "downstream timeout"}, g.Cb());
  ASSERT_TRUE(g.value.has_value() && g.value->has_value());
  const std::vector<AckResult>& r = **g.value;
  ASSERT_EQ(r.size(), 3u);
  EXPECT_EQ(r[0].msg_id, "a");
  EXPECT_TRUE(r[0].ack);
  EXPECT_TRUE(r[0].status.ok());
  EXPECT_EQ(r[1].status.code(), Errc::kNotFound);
  EXPECT_EQ(r[2].msg_id, "b");
  EXPECT_FALSE(r[2].ack);
  EXPECT_TRUE(r[2].status.ok());
  const FakeBackend::Call last = fake_.calls().back();
  ASSERT_EQ(last.op, "ack_batch");
  ASSERT_EQ(last.acks.size(), 3u);
  EXPECT_EQ(last.acks[2].reason, "downstream timeout");
  EXPECT_EQ(last.acks[0].reason, "");  // reasons are for nacks

  const size_t before = fake_.calls().size();
  const std::vector<std::pair<AckBatchRequest, std::string>> rows = {
      {AckBatchRequest{"t", {}, {}, ""}, "ack and nack are both empty"},
      {AckBatchRequest{"t", {"a"}, {"a"}, ""}, "msgId 'a' is given more than once"},
      {AckBatchRequest{"t", {"x", "x"}, {}, ""}, "msgId 'x' is given more than once"},
      {AckBatchRequest{"t", {""}, {}, ""}, "msgId is empty"},
      {AckBatchRequest{"t", {"a"}, {}, std::string(1025, 'r')}, "reason is 1025 bytes long"},
      {AckBatchRequest{"t", std::vector<std::string>(51, "i"), {}, ""},
       "ack and nack hold 51 msgIds; the limit is 50 in all (max-pull-batch)"},
  };
  for (const auto& [req, sentence] : rows) {
    Got<Result<std::vector<AckResult>>> bad;
    service_->AckBatch(req, bad.Cb());
    ASSERT_FALSE(bad.value->has_value()) << sentence;
    EXPECT_NE(bad.value->error().message().find(sentence), std::string::npos)
        << bad.value->error().message();
  }
  EXPECT_EQ(fake_.calls().size(), before);
}

TEST_F(QueueServiceTest, ANackWithAReasonGoesThroughAckBatch) {
  ASSERT_TRUE(Send("t", "a").has_value());
  ASSERT_EQ(Pull(PullRequest{"t", 1, std::nullopt})->size(), 1u);
  Got<Status> g;
  service_->Ack(AckRequest{{"t", "a"}, false, "bad payload"}, g.Cb());
  ASSERT_TRUE(g.value.has_value());
  EXPECT_TRUE(g.value->ok()) << g.value->ToString();
  const FakeBackend::Call last = fake_.calls().back();
  EXPECT_EQ(last.op, "ack_batch");
  ASSERT_EQ(last.acks.size(), 1u);
  EXPECT_FALSE(last.acks[0].ack);
  EXPECT_EQ(last.acks[0].reason, "bad payload");
  EXPECT_EQ(Counted("t").get(MonitorCounter::kAckMsg), 1);
}

TEST_F(QueueServiceTest, UpdateTouchCountAndListCheckTheirValues) {
  auto update = [this](UpdateRequest u) {
    Got<Result<core::Message>> g;
    service_->Update(std::move(u), g.Cb());
    return std::move(*g.value);
  };
  UpdateRequest nothing{{"t", "a"}};
  EXPECT_NE(update(nothing).error().message().find("nothing to update"), std::string::npos);
  UpdateRequest both{{"t", "a"}};
  both.delay_millis = 5;
  both.trigger_time = 5;
  EXPECT_EQ(update(both).error().message(), "give either delayMillis or triggerTime, not both");
  UpdateRequest bad_ttl{{"t", "a"}};
  bad_ttl.ttl_millis = 0;
  EXPECT_EQ(update(bad_ttl).error().message(), "ttlMillis must be at least 1, got 0");
  UpdateRequest bad_retry{{"t", "a"}};
  bad_retry.max_retry = -1;
  EXPECT_EQ(update(bad_retry).error().message(), "maxRetry must be at least 0, got -1");
  UpdateRequest bad_priority{{"t", "a"}};
  bad_priority.priority = 12;
  EXPECT_EQ(update(bad_priority).error().message(), "priority must be between 0 and 9, got 12");

  Got<Result<core::Message>> count;
  service_->Count(CountRequest{{"t", "a"}, 0}, count.Cb());
  EXPECT_EQ(count.value->error().message(), "count must be at least 1, got 0");
  Got<Result<backend::ListPage>> list;
  service_->List(ListRequest{"t", 8, std::nullopt, ""}, list.Cb());
  EXPECT_NE(list.value->error().message().find("status must be between 1 and 7"),
            std::string::npos);
  Got<Result<backend::ListPage>> list0;
  service_->List(ListRequest{"t", std::nullopt, 0, ""}, list0.Cb());
  EXPECT_EQ(list0.value->error().message(), "limit must be at least 1, got 0");
  EXPECT_TRUE(fake_.calls().empty());

  // Accepted: the delay becomes a trigger time on the service's clock; defaults and clamps.
  UpdateRequest later{{"t", "a"}};
  later.delay_millis = 2'000;
  later.priority = 4;
  EXPECT_EQ(update(later).error().code(), Errc::kNotFound);  // the fake knows no "a"
  Got<Result<core::Message>> touch;
  service_->Touch(TouchRequest{{"t", "a"}, std::nullopt}, touch.Cb());
  Got<Result<core::Message>> count1;
  service_->Count(CountRequest{{"t", "a"}, std::nullopt}, count1.Cb());
  Got<Result<backend::ListPage>> list_big;
  service_->List(ListRequest{"t", 2, 5'000, "7"}, list_big.Cb());
  std::vector<FakeBackend::Call> calls = fake_.calls();
  ASSERT_EQ(calls.size(), 4u);
  EXPECT_EQ(calls[0].update.trigger_time, kT0 + Millis(2'000));
  EXPECT_EQ(calls[0].update.priority, 4);
  EXPECT_FALSE(calls[0].update.payload.has_value());
  EXPECT_EQ(calls[1].ack_timeout, Millis(22'000));
  EXPECT_EQ(calls[2].count, 1);
  EXPECT_EQ(calls[3].list.limit, 1'000);
  EXPECT_EQ(calls[3].list.status, MsgStatus::kReady);
  EXPECT_EQ(calls[3].list.cursor, "7");
}

}  // namespace
}  // namespace chronoq::service
