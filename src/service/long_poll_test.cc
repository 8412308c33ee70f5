// LongPollWaiters under real concurrency: requests parked on one thread while messages sent on
// another wake the topic and drain it there. The single-threaded behaviour is covered through
// the service (queue_service_test.cc); this one is about the hand-over between threads, and is
// most useful under ThreadSanitizer (scripts/sanitize.sh tsan runs it).
#include "service/long_poll.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "base/clock.h"
#include "base/scheduler.h"
#include "tests/testutil/fake_backend.h"

namespace chronoq::service {
namespace {

const TimePoint kT0 = FromEpochMs(1'700'000'000'000);

// Waiters on a fake backend, listening to it; what is still parked is answered at the end.
class LongPollWaitersTest : public ::testing::Test {
 protected:
  void SetUp() override { fake.SetReadyListener(&waiters); }
  void TearDown() override {
    waiters.Shutdown();
    fake.SetReadyListener(nullptr);
  }
  base::ManualClock clock{kT0};
  base::ManualScheduler sched{&clock};
  testutil::FakeBackend fake;
  LongPollWaiters waiters{&fake, &clock, &sched};
};

// Regression: Park read the request's state after releasing the lock, to tell "parked" from
// "answered at once". By then a drain on another thread could have claimed the request, so the
// read raced with the drain's writes (ThreadSanitizer reported it); and when it saw the drain's
// "answered", Park answered again, moving the callback out while the drain's answer might still
// be doing the same (a double call or a double free at worst).
TEST_F(LongPollWaitersTest, RequestsParkedWhileAnotherThreadDrainsAreAnsweredOnce) {
  constexpr int kRequests = 2000;
  std::vector<std::atomic<int>> answers(kRequests);
  std::vector<std::atomic<size_t>> received(kRequests);
  std::atomic<bool> parking{true};
  // Sends wake the topic and drain it on the sender's thread; the kicker wakes it all the time
  // (a drain claims the head request even when it then finds nothing).
  std::thread sender([&] {
    for (int i = 0; i < kRequests; ++i) {
      fake.Send(core::NewMessage{"t", "m" + std::to_string(i), "x", Millis(0), Millis(60'000), 0},
                [](Result<backend::Sent>) {});
    }
  });
  std::thread kicker([&] {
    while (parking.load()) waiters.OnReady("t");
  });
  for (int i = 0; i < kRequests; ++i) {
    waiters.Park(PollSpec{"t", 1, Millis(30'000), Millis(10'000)}, nullptr,
                 [&, i](Result<std::vector<core::Message>> r) {
                   answers[i].fetch_add(1);
                   if (r.has_value()) received[i].fetch_add(r->size());
                 });
  }
  parking.store(false);
  sender.join();
  kicker.join();
  waiters.Shutdown();  // answers what is still parked
  fake.SetReadyListener(nullptr);

  size_t delivered = 0;
  for (int i = 0; i < kRequests; ++i) {
    EXPECT_EQ(answers[i].load(), 1) << "request " << i;
    EXPECT_LE(received[i].load(), 1u) << "request " << i;
    delivered += received[i].load();
  }
  EXPECT_LE(delivered, static_cast<size_t>(kRequests));
  EXPECT_EQ(waiters.parked(), 0u);
}

// The requests parked at a topic's head are served by one pull, their batches added up, the
// messages handed out in their order; those a short pull leaves without messages stay at the
// head in their order. A request asking another ack timeout is pulled for on its own.
TEST_F(LongPollWaitersTest, RequestsAtTheHeadAreServedByOnePullInTheirOrder) {
  for (int i = 1; i <= 5; ++i) {
    fake.Send(
        core::NewMessage{"t", "m" + std::to_string(i), "x", Millis(3'600'000), Millis(60'000), 0},
        [](Result<backend::Sent>) {});
  }
  std::vector<std::vector<std::string>> got(4);
  std::vector<int> answers(4, 0);
  auto park = [&](int i, Millis ack_timeout) {
    waiters.Park(PollSpec{"t", 2, ack_timeout, Millis(60'000)}, nullptr,
                 [&, i](Result<std::vector<core::Message>> r) {
                   ++answers[i];
                   ASSERT_TRUE(r.has_value());
                   for (const core::Message& m : *r) got[i].push_back(m.record.msg_id);
                 });
  };
  park(0, Millis(30'000));
  park(1, Millis(30'000));
  park(2, Millis(30'000));
  park(3, Millis(20'000));  // another ack timeout
  auto pulls = [&] {
    std::vector<backend::PullRequest> out;
    for (const auto& c : fake.calls()) {
      if (c.op == "pull") out.push_back(c.pull);
    }
    return out;
  };
  const size_t before = pulls().size();

  // Three messages become consumable at once (one piece of news).
  fake.SetReadyListener(nullptr);
  for (int i = 1; i <= 3; ++i) fake.MakeReady("t", "m" + std::to_string(i));
  fake.SetReadyListener(&waiters);
  waiters.OnReady("t");
  std::vector<backend::PullRequest> p = pulls();
  ASSERT_EQ(p.size(), before + 1);  // one pull for the first three requests
  EXPECT_EQ(p.back().batch, 6);
  EXPECT_EQ(p.back().ack_timeout, Millis(30'000));
  EXPECT_EQ(got[0], (std::vector<std::string>{"m1", "m2"}));
  EXPECT_EQ(got[1], std::vector<std::string>{"m3"});
  EXPECT_EQ(answers[2], 0);  // nothing for it: still parked, at the head
  EXPECT_EQ(answers[3], 0);
  EXPECT_EQ(waiters.parked(), 2u);

  fake.MakeReady("t", "m4");  // the third request is first
  EXPECT_EQ(got[2], std::vector<std::string>{"m4"});
  fake.MakeReady("t", "m5");  // then the fourth, pulled for with its own ack timeout
  EXPECT_EQ(got[3], std::vector<std::string>{"m5"});
  EXPECT_EQ(pulls().back().ack_timeout, Millis(20'000));
  EXPECT_EQ(pulls().back().batch, 2);
  EXPECT_EQ(answers, (std::vector<int>{1, 1, 1, 1}));
  EXPECT_EQ(waiters.parked(), 0u);
}

// The same, the fake backend holding one WAITING message, "m" of topic "t".
class OneWaitingMessageTest : public LongPollWaitersTest {
 protected:
  void SetUp() override {
    LongPollWaitersTest::SetUp();
    fake.Send(core::NewMessage{"t", "m", "x", Millis(3'600'000), Millis(60'000), 0},
              [](Result<backend::Sent>) {});
  }
};

// Regression: news that came while the topic's only parked request was claimed by a pull in
// flight was dropped (Kick looked for parked requests, found none, and did not ask the drain to
// look again). The pull, begun before the message was ready, found nothing; the request went
// back to sleep until its timeout although its message was ready. Seen with two Redis nodes
// under load (a count through one node, the poll parked on the other), and possible on every
// store whose pulls complete on another thread.
TEST_F(OneWaitingMessageTest, NewsDuringTheOnlyRequestsPullIsNotLost) {
  fake.Hold();  // the parked request's first pull finds nothing and stays in flight
  std::vector<std::string> got;
  int answers = 0;
  waiters.Park(PollSpec{"t", 1, Millis(30'000), Millis(10'000)}, nullptr,
               [&](Result<std::vector<core::Message>> r) {
                 ++answers;
                 ASSERT_TRUE(r.has_value());
                 for (const core::Message& m : *r) got.push_back(m.record.msg_id);
               });
  fake.MakeReady("t", "m");  // news while that pull is in flight
  fake.Release();            // the empty answer of the first pull, then the second pull's

  EXPECT_EQ(answers, 1);
  EXPECT_EQ(got, std::vector<std::string>{"m"});
  EXPECT_EQ(waiters.parked(), 0u);
}

// The safety net for backends whose news can be lost (Redis pub/sub): every kRecheckEvery, the
// topics with parked requests are handed to the backend's Recheck; none once nothing is parked.
TEST_F(OneWaitingMessageTest, TopicsWithParkedRequestsAreRecheckedEveryFewSeconds) {
  int answers = 0;
  waiters.Park(PollSpec{"t", 1, Millis(30'000), Millis(60'000)}, nullptr,
               [&](Result<std::vector<core::Message>>) { ++answers; });
  waiters.Park(PollSpec{"u", 1, Millis(30'000), Millis(60'000)}, nullptr,
               [&](Result<std::vector<core::Message>>) { ++answers; });

  sched.Advance(LongPollWaiters::kRecheckEvery - Millis(1));
  EXPECT_TRUE(fake.rechecks().empty());
  sched.Advance(Millis(1));
  std::vector<std::string> first = fake.rechecks();
  std::sort(first.begin(), first.end());  // in no particular order
  EXPECT_EQ(first, (std::vector<std::string>{"t", "u"}));
  sched.Advance(LongPollWaiters::kRecheckEvery);
  EXPECT_EQ(fake.rechecks().size(), 4u);

  fake.MakeReady("t", "m");  // answers t's request; u's stays parked
  EXPECT_EQ(answers, 1);
  sched.Advance(LongPollWaiters::kRecheckEvery);
  EXPECT_EQ(fake.rechecks().back(), "u");
  EXPECT_EQ(fake.rechecks().size(), 5u);

  waiters.Shutdown();  // answers u's: nothing parked, nothing rechecked any more
  EXPECT_EQ(answers, 2);
  sched.Advance(LongPollWaiters::kRecheckEvery * 3);
  EXPECT_EQ(fake.rechecks().size(), 5u);
}

// A topic that had news (the backend's OnReady: a publication, a wake) within the last recheck
// period is not rechecked: the drain that news started read the topic after it. A topic whose
// news stopped is rechecked again once a whole period has passed without any.
TEST_F(OneWaitingMessageTest, ATopicWithRecentNewsIsNotRechecked) {
  auto answers = std::make_shared<int>(0);  // outlives the test body (TearDown answers)
  waiters.Park(PollSpec{"t", 1, Millis(30'000), Millis(60'000)}, nullptr,
               [answers](Result<std::vector<core::Message>>) { ++*answers; });
  waiters.Park(PollSpec{"u", 1, Millis(30'000), Millis(60'000)}, nullptr,
               [answers](Result<std::vector<core::Message>>) { ++*answers; });

  sched.Advance(Millis(4'000));
  waiters.OnReady("t");  // news of t ("m" is not consumable yet: its request stays parked)
  sched.Advance(Millis(1'000));
  EXPECT_EQ(fake.rechecks(), std::vector<std::string>{"u"});  // at 5 s: t had news 1 s ago
  sched.Advance(Millis(4'000));
  waiters.OnReady("t");  // news again at 9 s
  sched.Advance(Millis(1'000));
  EXPECT_EQ(fake.rechecks(), (std::vector<std::string>{"u", "u"}));  // at 10 s
  sched.Advance(LongPollWaiters::kRecheckEvery);                     // at 15 s: t quiet since 9 s
  const std::vector<std::string> all = fake.rechecks();
  ASSERT_EQ(all.size(), 4u);
  std::vector<std::string> third(all.begin() + 2, all.end());
  std::sort(third.begin(), third.end());
  EXPECT_EQ(third, (std::vector<std::string>{"t", "u"}));
  EXPECT_EQ(*answers, 0);
}

}  // namespace
}  // namespace chronoq::service
