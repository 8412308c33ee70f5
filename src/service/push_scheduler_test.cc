// PushScheduler over a fake lane and a fake transport whose calls the test ends by hand: which
// verdict each outcome gets, the in-flight limit over topics, takes that repeat while work is
// left, one outcome write per topic at a time, and shutdown.
#include "service/push_scheduler.h"

#include <gtest/gtest.h>

#include <deque>
#include <map>
#include <thread>
#include <utility>

#include "base/clock.h"
#include "service/push_metrics.h"

namespace chronoq::service {
namespace {

PushJob Job(std::string id, bool with_callback = true) {
  PushJob j;
  j.message.record.msg_id = std::move(id);
  j.message.record.retry = 1;
  if (with_callback) j.callback = core::Callback{};
  return j;
}

class FakeLane final : public PushLane {
 public:
  void TakeDue(std::string topic, int32_t max, Millis margin,
               backend::Callback<Result<std::vector<PushJob>>> done) override {
    asks.push_back({topic, max});
    margins.push_back(margin);
    if (hold_takes) {
      held_takes.push_back(
          [this, topic, max, done = std::move(done)]() mutable { done(Pop(topic, max)); });
      return;
    }
    if (fail_next_take) {
      fail_next_take = false;
      return done(Unavailable("store down"));
    }
    done(Pop(topic, max));
  }
  void Finish(std::string topic, std::vector<PushResult> results,
              backend::Callback<Status> done) override {
    finishes.push_back({topic, std::move(results)});
    if (hold_finishes) {
      held_finishes.push_back(std::move(done));
      return;
    }
    done(Status::Ok());
  }

  std::vector<PushJob> Pop(const std::string& topic, int32_t max) {
    std::vector<PushJob> out;
    auto& q = due[topic];
    while (!q.empty() && static_cast<int32_t>(out.size()) < max) {
      out.push_back(std::move(q.front()));
      q.pop_front();
    }
    return out;
  }
  // Every result written so far, by msgId.
  std::map<std::string, PushResult> Written() const {
    std::map<std::string, PushResult> out;
    for (const auto& [topic, results] : finishes) {
      for (const PushResult& r : results) out[r.msg_id] = r;
    }
    return out;
  }

  std::map<std::string, std::deque<PushJob>> due;
  std::vector<std::pair<std::string, int32_t>> asks;
  std::vector<Millis> margins;
  std::vector<std::pair<std::string, std::vector<PushResult>>> finishes;
  bool hold_takes = false;
  bool hold_finishes = false;
  bool fail_next_take = false;
  std::vector<UniqueFunction<void()>> held_takes;
  std::vector<backend::Callback<Status>> held_finishes;
};

class FakeTransport final : public PushTransport {
 public:
  void Push(const PushJob& job, UniqueFunction<void(PushOutcome)> done) override {
    calls.emplace_back(job.message.record.msg_id, std::move(done));
    max_at_once = std::max(max_at_once, calls.size());
  }
  // Ends the oldest call with `out`.
  void End(PushOutcome out) {
    auto call = std::move(calls.front());
    calls.pop_front();
    call.second(std::move(out));
  }
  std::deque<std::pair<std::string, UniqueFunction<void(PushOutcome)>>> calls;
  size_t max_at_once = 0;
};

PushOutcome Ok() { return PushOutcome{true, false, {}}; }
PushOutcome Failed(std::string e) { return PushOutcome{false, false, std::move(e)}; }
PushOutcome Busy() { return PushOutcome{false, true, "target busy"}; }

TEST(PushSchedulerTest, EachOutcomeEndsItsAttemptAsAckNackOrRelease) {
  FakeLane lane;
  FakeTransport transport;
  PushScheduler s(&lane, &transport, PushOptions{});
  lane.due["t"] = {Job("a"), Job("b"), Job("c"), Job("d", /*with_callback=*/false)};
  s.Wake("t");
  ASSERT_EQ(transport.calls.size(), 3u);  // "d" has no callback: never sent anywhere
  EXPECT_EQ(lane.margins.front(), Millis(2'000));
  transport.End(Ok());
  transport.End(Failed("HTTP 500 Internal Server Error: boom"));
  transport.End(Busy());
  auto written = lane.Written();
  ASSERT_EQ(written.size(), 4u);
  EXPECT_EQ(written["a"].verdict, PushVerdict::kAck);
  EXPECT_EQ(written["b"].verdict, PushVerdict::kNack);
  EXPECT_EQ(written["b"].reason, "HTTP 500 Internal Server Error: boom");
  EXPECT_EQ(written["c"].verdict, PushVerdict::kRelease);
  EXPECT_EQ(written["d"].verdict, PushVerdict::kNack);
  EXPECT_EQ(written["d"].reason, "topic 't' has no callback");
  PushScheduler::Stats st = s.stats();
  EXPECT_EQ(st.in_flight, 0);
  EXPECT_EQ(st.acked, 1);
  EXPECT_EQ(st.nacked, 2);
  EXPECT_EQ(st.released, 1);
}

// The transport did not start an attempt whose lease would have ended before its timeout (a
// starved node): the message goes back (release, not an attempt), and it is counted.
TEST(PushSchedulerTest, AnAttemptNotStartedForItsShortLeaseIsReleasedAndCounted) {
  FakeLane lane;
  FakeTransport transport;
  base::ManualClock clock(FromEpochMs(1'700'000'000'000));
  PushMetrics metrics(&clock);
  PushScheduler s(&lane, &transport, PushOptions{}, &metrics);
  lane.due["t"] = {Job("a"), Job("b")};
  s.Wake("t");
  transport.End(PushOutcome{false, true, "push not attempted: its lease ended 5 ms ago", true});
  transport.End(Busy());
  auto written = lane.Written();
  EXPECT_EQ(written["a"].verdict, PushVerdict::kRelease);
  EXPECT_EQ(written["b"].verdict, PushVerdict::kRelease);
  EXPECT_EQ(s.stats().released, 2);
  EXPECT_EQ(s.stats().lease_short, 1);
  EXPECT_EQ(metrics.attempts(core::CallbackType::kHttp, "lease_short"), 1u);
  EXPECT_EQ(metrics.attempts(core::CallbackType::kHttp, "busy"), 1u);
}

// Per-order topics: each pushed to once. The scheduler keeps no state for a topic once its
// take, pushes and outcome writes are over, and a later wake of such a topic still pushes.
TEST(PushSchedulerTest, ATopicWithNothingUnderWayIsForgottenAndAWakeBringsItBack) {
  FakeLane lane;
  FakeTransport transport;
  PushScheduler s(&lane, &transport, PushOptions{});
  for (int i = 0; i < 1000; ++i) {
    const std::string topic = "order-" + std::to_string(i);
    lane.due[topic].push_back(Job("m" + std::to_string(i)));
    s.Wake(topic);
  }
  EXPECT_EQ(s.topics(), 1000u);  // each with a push in flight
  while (!transport.calls.empty()) transport.End(Ok());
  EXPECT_EQ(lane.Written().size(), 1000u);
  EXPECT_EQ(s.topics(), 0u);
  s.Wake("order-7");  // nothing due: the take finds nothing, nothing is kept
  EXPECT_EQ(s.topics(), 0u);

  lane.due["order-7"].push_back(Job("again"));
  s.Wake("order-7");
  ASSERT_EQ(transport.calls.size(), 1u);
  EXPECT_EQ(s.topics(), 1u);
  transport.End(Ok());
  EXPECT_EQ(lane.Written()["again"].verdict, PushVerdict::kAck);
  EXPECT_EQ(s.topics(), 0u);
}

// What keeps a topic's state besides a take (AWakeDuringATakeTakesAgainAfterIt): pushes in
// flight, an outcome write under way (outcomes arriving meanwhile still go into the next write).
TEST(PushSchedulerTest, ATopicIsKeptWhilePushesOrAWriteAreUnderWay) {
  FakeLane lane;
  FakeTransport transport;
  PushScheduler s(&lane, &transport, PushOptions{});
  lane.due["t"] = {Job("b"), Job("c")};
  lane.hold_finishes = true;
  s.Wake("t");
  ASSERT_EQ(transport.calls.size(), 2u);
  transport.End(Ok());                               // written at once (held); "c" still in flight
  transport.End(Failed("timed out after 5000 ms"));  // waits for the next write
  EXPECT_EQ(s.topics(), 1u);
  auto first = std::move(lane.held_finishes.front());
  lane.held_finishes.clear();
  first(Status::Ok());
  EXPECT_EQ(s.topics(), 1u);  // the second write is under way
  ASSERT_EQ(lane.held_finishes.size(), 1u);
  auto second = std::move(lane.held_finishes.front());
  lane.held_finishes.clear();
  second(Status::Ok());
  EXPECT_EQ(s.topics(), 0u);
  EXPECT_EQ(lane.Written()["c"].verdict, PushVerdict::kNack);
  EXPECT_EQ(s.stats().in_flight, 0);
}

TEST(PushSchedulerTest, NeverMoreInFlightThanTheLimitAndStarvedTopicsResumeAsRoomFrees) {
  FakeLane lane;
  FakeTransport transport;
  PushOptions o;
  o.max_in_flight = 3;
  o.take_batch = 2;
  PushScheduler s(&lane, &transport, o);
  for (int i = 0; i < 5; ++i) lane.due["x"].push_back(Job("x" + std::to_string(i)));
  for (int i = 0; i < 4; ++i) lane.due["y"].push_back(Job("y" + std::to_string(i)));
  s.Wake("x");
  s.Wake("y");
  EXPECT_EQ(transport.calls.size(), 3u);
  while (!transport.calls.empty()) transport.End(Ok());
  EXPECT_EQ(transport.max_at_once, 3u);
  EXPECT_EQ(lane.Written().size(), 9u);  // every message of both topics, none twice
  for (const auto& [topic, n] : lane.asks) EXPECT_LE(n, 2) << topic;
  EXPECT_TRUE(lane.due["x"].empty());
  EXPECT_TRUE(lane.due["y"].empty());
}

TEST(PushSchedulerTest, AFullTakeIsFollowedByAnotherAndAShortOneStops) {
  FakeLane lane;
  FakeTransport transport;
  PushOptions o;
  o.take_batch = 2;
  PushScheduler s(&lane, &transport, o);
  for (int i = 0; i < 5; ++i) lane.due["t"].push_back(Job(std::to_string(i)));
  s.Wake("t");
  EXPECT_EQ(transport.calls.size(), 5u);
  // 2 + 2 + 1: the short third take ends the loop until the next wake.
  ASSERT_EQ(lane.asks.size(), 3u);
}

TEST(PushSchedulerTest, AWakeDuringATakeTakesAgainAfterIt) {
  FakeLane lane;
  FakeTransport transport;
  PushScheduler s(&lane, &transport, PushOptions{});
  lane.hold_takes = true;
  s.Wake("t");
  lane.due["t"].push_back(Job("late"));  // sent while the take runs (after its read)
  s.Wake("t");                           // no second take at once
  ASSERT_EQ(lane.asks.size(), 1u);
  auto take = std::move(lane.held_takes.front());
  lane.held_takes.clear();
  lane.due["t"].clear();
  take();  // found nothing; the wake that came meanwhile asks again
  ASSERT_EQ(lane.asks.size(), 2u);
  EXPECT_EQ(s.topics(), 1u);  // kept while a take is under way
  lane.due["t"].push_back(Job("late"));
  lane.hold_takes = false;
  std::move(lane.held_takes.front())();
  EXPECT_EQ(transport.calls.size(), 1u);
  transport.End(Ok());
  EXPECT_EQ(s.topics(), 0u);
}

TEST(PushSchedulerTest, OutcomesArrivingDuringAWriteGoIntoTheNextOne) {
  FakeLane lane;
  FakeTransport transport;
  PushScheduler s(&lane, &transport, PushOptions{});
  lane.hold_finishes = true;
  for (int i = 0; i < 3; ++i) lane.due["t"].push_back(Job(std::to_string(i)));
  s.Wake("t");
  transport.End(Ok());
  transport.End(Ok());
  transport.End(Failed("timed out after 5000 ms"));
  ASSERT_EQ(lane.finishes.size(), 1u);  // one write at a time per topic
  EXPECT_EQ(lane.finishes[0].second.size(), 1u);
  auto first = std::move(lane.held_finishes.front());
  lane.held_finishes.clear();
  first(Status::Ok());
  ASSERT_EQ(lane.finishes.size(), 2u);
  EXPECT_EQ(lane.finishes[1].second.size(), 2u);  // both outcomes that waited
  auto second = std::move(lane.held_finishes.front());
  lane.held_finishes.clear();
  second(IOError("disk full"));  // the leases run out instead; counted
  EXPECT_EQ(s.stats().finish_errors, 1);
}

TEST(PushSchedulerTest, AFailedTakePushesNothingAndTheNextWakeTakesAgain) {
  FakeLane lane;
  FakeTransport transport;
  PushScheduler s(&lane, &transport, PushOptions{});
  lane.due["t"].push_back(Job("a"));
  lane.fail_next_take = true;
  s.Wake("t");
  EXPECT_TRUE(transport.calls.empty());
  EXPECT_EQ(s.stats().in_flight, 0);
  s.Wake("t");
  EXPECT_EQ(transport.calls.size(), 1u);
}

TEST(PushSchedulerTest, AfterShutdownNothingIsTakenAndWhatATakeBringsIsReleased) {
  FakeLane lane;
  FakeTransport transport;
  PushScheduler s(&lane, &transport, PushOptions{});
  lane.hold_takes = true;
  lane.due["t"].push_back(Job("a"));
  s.Wake("t");
  auto take = std::move(lane.held_takes.front());
  lane.held_takes.clear();
  // The take answers once Shutdown has begun; Shutdown waits for it (the lane must never call
  // into a destroyed scheduler), and what it brings is handed back, not pushed.
  std::thread answer([&] {
    while (!s.stopping()) std::this_thread::yield();
    take();
  });
  s.Shutdown(Millis(0));
  answer.join();
  EXPECT_TRUE(transport.calls.empty());
  EXPECT_EQ(s.stats().in_flight, 0);
  EXPECT_EQ(lane.Written()["a"].verdict, PushVerdict::kRelease);
  lane.due["t"].push_back(Job("b"));
  s.Wake("t");
  EXPECT_EQ(lane.asks.size(), 1u);
}

}  // namespace
}  // namespace chronoq::service
