// The HTTP transport against real receivers on loopback (push/testing/http_receiver.h): what a
// target receives, the outcome sentences, timeouts, keep-alive, and isolation between targets.

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <future>
#include <iostream>

#include "base/clock.h"
#include "push/pusher.h"
#include "push/testing/http_receiver.h"
#include "push/testing/push_and_wait.h"
#include "push/testing/tls_cert.h"

namespace chronoq::push {
namespace {

using namespace std::chrono_literals;
using testing::HttpReceiver;

// Pushes one call and waits for its outcome (the bound only keeps a broken test from hanging).
using testing::PushAndWait;

PushCall HttpCall(std::string url, std::string msg_id = "m1") {
  PushCall c;
  c.kind = Kind::kHttp;
  c.url = std::move(url);
  c.msg_id = std::move(msg_id);
  c.topic = "orders";
  c.attempt = 1;
  c.body = "{\"x\":1}";
  c.content_type = "application/json";
  return c;
}

// A loopback port nothing listens on: bound, then closed.
uint16_t FreePort() {
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  a.sin_port = 0;
  EXPECT_EQ(bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a), 0);
  socklen_t len = sizeof a;
  getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len);
  close(fd);
  return ntohs(a.sin_port);
}

// Counts outcomes of many pushes; Wait returns when `n` have arrived.
class Tally {
 public:
  UniqueFunction<void(PushOutcome)> Done() {
    return [this](PushOutcome o) {
      std::lock_guard<std::mutex> lock(mu_);
      outcomes_.push_back(std::move(o));
      cv_.notify_all();
    };
  }
  bool Wait(size_t n, std::chrono::milliseconds bound) {
    std::unique_lock<std::mutex> lock(mu_);
    return cv_.wait_for(lock, bound, [&] { return outcomes_.size() >= n; });
  }
  std::vector<PushOutcome> outcomes() {
    std::lock_guard<std::mutex> lock(mu_);
    return outcomes_;
  }
  size_t size() {
    std::lock_guard<std::mutex> lock(mu_);
    return outcomes_.size();
  }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  std::vector<PushOutcome> outcomes_;
};

TEST(HttpPushTest, TargetReceivesMethodPathHeadersAndBody) {
  HttpReceiver target({});
  Pusher pusher;
  PushCall call = HttpCall(target.Url("/hooks/order?src=cq"), "msg-42");
  call.method = "PUT";
  call.attempt = 3;
  call.headers = {{"Authorization", "Bearer s3cret"},
                  {"X-Custom", "a b"},
                  {"x-chronoq-msg-id", "forged"},
                  {"Content-Length", "999"},
                  {"User-Agent", "shop/1.0"}};
  PushOutcome out = PushAndWait(pusher, call);
  EXPECT_TRUE(out.ok) << out.error;
  EXPECT_FALSE(out.busy);
  EXPECT_EQ(out.code, 200);
  EXPECT_EQ(out.error, "");
  EXPECT_GT(out.latency.count(), 0);

  auto reqs = target.Requests();
  ASSERT_EQ(reqs.size(), 1u);
  EXPECT_EQ(reqs[0].method, "PUT");
  EXPECT_EQ(reqs[0].target, "/hooks/order?src=cq");
  EXPECT_EQ(reqs[0].body, "{\"x\":1}");
  EXPECT_EQ(reqs[0].Header("X-Chronoq-Msg-Id"), "msg-42");
  EXPECT_EQ(reqs[0].Header("X-Chronoq-Topic"), "orders");
  EXPECT_EQ(reqs[0].Header("X-Chronoq-Attempt"), "3");
  EXPECT_EQ(reqs[0].Header("Content-Type"), "application/json");
  EXPECT_EQ(reqs[0].Header("Content-Length"), "7");
  EXPECT_EQ(reqs[0].Header("Authorization"), "Bearer s3cret");
  EXPECT_EQ(reqs[0].Header("X-Custom"), "a b");
  EXPECT_EQ(reqs[0].Header("User-Agent"), "shop/1.0");
  size_t msg_ids = 0;
  for (const auto& [name, value] : reqs[0].headers) {
    if (name == "X-Chronoq-Msg-Id" || name == "x-chronoq-msg-id") ++msg_ids;
  }
  EXPECT_EQ(msg_ids, 1u);
  EXPECT_EQ(reqs[0].Header("Host"), target.HostPort());
}

TEST(HttpPushTest, AnyTwoHundredIsSuccess) {
  HttpReceiver target({.status = 204, .body = ""});
  Pusher pusher;
  PushOutcome out = PushAndWait(pusher, HttpCall(target.Url("/")));
  EXPECT_TRUE(out.ok) << out.error;
  EXPECT_EQ(out.code, 204);
}

TEST(HttpPushTest, KeepAliveReusesOneConnection) {
  HttpReceiver target({});
  Pusher pusher;
  for (int i = 0; i < 20; ++i) {
    PushOutcome out = PushAndWait(pusher, HttpCall(target.Url("/k"), "m" + std::to_string(i)));
    ASSERT_TRUE(out.ok) << out.error;
  }
  EXPECT_EQ(target.RequestCount(), 20u);
  EXPECT_EQ(target.Connections(), 1u);
}

TEST(HttpPushTest, PooledConnectionClosedByTheServerIsRetriedOnAFreshOne) {
  HttpReceiver target({.close_after_answer = true});
  Pusher pusher;
  for (int i = 0; i < 3; ++i) {
    PushOutcome out = PushAndWait(pusher, HttpCall(target.Url("/k")));
    ASSERT_TRUE(out.ok) << out.error;
  }
  EXPECT_EQ(target.RequestCount(), 3u);
  EXPECT_EQ(target.Connections(), 3u);
}

TEST(HttpPushTest, ErrorStatusGivesStatusReasonAndAnswerSnippet) {
  HttpReceiver target({.status = 500, .body = "database down\r\nretry later\x01\n"});
  Pusher pusher;
  PushOutcome out = PushAndWait(pusher, HttpCall(target.Url("/")));
  EXPECT_FALSE(out.ok);
  EXPECT_FALSE(out.busy);
  EXPECT_EQ(out.code, 500);
  EXPECT_EQ(out.error, "HTTP 500 Internal Server Error: database down  retry later.");
  EXPECT_EQ(target.RequestCount(), 1u);
}

TEST(HttpPushTest, LongAnswerIsCutToTwoHundredBytes) {
  HttpReceiver target({.status = 404, .body = std::string(300, 'x')});
  Pusher pusher;
  PushOutcome out = PushAndWait(pusher, HttpCall(target.Url("/")));
  EXPECT_EQ(out.error, "HTTP 404 Not Found: " + std::string(200, 'x'));
}

TEST(HttpPushTest, HangingTargetTimesOutAtTheCallTimeout) {
  HttpReceiver target({.mode = HttpReceiver::Mode::kHang});
  Pusher pusher;
  PushCall call = HttpCall(target.Url("/"));
  call.timeout = 200ms;
  PushOutcome out = PushAndWait(pusher, call);
  EXPECT_FALSE(out.ok);
  EXPECT_EQ(out.error, "timed out after 200 ms");
  EXPECT_GE(out.latency, 200ms);
  EXPECT_LT(out.latency, 3s);
  EXPECT_EQ(target.RequestCount(), 1u);  // the request did arrive
}

TEST(HttpPushTest, ClosingTargetFailsBeforeTheAnswer) {
  HttpReceiver target({.mode = HttpReceiver::Mode::kClose});
  Pusher pusher;
  PushOutcome out = PushAndWait(pusher, HttpCall(target.Url("/")));
  EXPECT_FALSE(out.ok);
  // The close may land before our write (reset) or after it (end of stream): both are a closed
  // connection for the user.
  EXPECT_EQ(out.error, "connection closed before the answer");
}

TEST(HttpPushTest, RefusedPortIsNamed) {
  const uint16_t port = FreePort();
  Pusher pusher;
  PushOutcome out = PushAndWait(pusher, HttpCall("http://127.0.0.1:" + std::to_string(port) + "/"));
  EXPECT_FALSE(out.ok);
  EXPECT_FALSE(out.busy);
  EXPECT_EQ(out.error, "connection refused to 127.0.0.1:" + std::to_string(port));
}

TEST(HttpPushTest, TargetThatNeverAcceptsTimesOut) {
  HttpReceiver target({.mode = HttpReceiver::Mode::kNoAccept});
  Tally tally;  // outlives the Pusher, whose shutdown may still report to it
  Pusher pusher;
  // The first connections complete into the listen backlog and get no answer; the next ones
  // get no handshake at all. Every one ends at its timeout.
  for (int i = 0; i < 4; ++i) {
    PushCall call = HttpCall(target.Url("/"));
    call.timeout = 200ms;
    pusher.Push(call, tally.Done());
  }
  ASSERT_TRUE(tally.Wait(4, 30s));
  for (const PushOutcome& o : tally.outcomes()) {
    EXPECT_FALSE(o.ok);
    EXPECT_EQ(o.error, "timed out after 200 ms");
    EXPECT_GE(o.latency, 200ms);
  }
}

TEST(HttpPushTest, ConnectTimeoutBoundsTheHandshake) {
  HttpReceiver target({.mode = HttpReceiver::Mode::kNoAccept});
  Tally tally;
  Pusher pusher({.http_connect_timeout = 100ms});
  for (int i = 0; i < 6; ++i) {
    PushCall call = HttpCall(target.Url("/"));
    call.timeout = 700ms;
    pusher.Push(call, tally.Done());
  }
  ASSERT_TRUE(tally.Wait(6, 30s));
  int connect_timeouts = 0;
  for (const PushOutcome& o : tally.outcomes()) {
    EXPECT_FALSE(o.ok);
    if (o.error == "connect to " + target.HostPort() + " timed out after 100 ms") {
      ++connect_timeouts;
      EXPECT_LT(o.latency, 600ms);
    } else {
      EXPECT_EQ(o.error, "timed out after 700 ms");  // handshake done by the backlog
    }
  }
  EXPECT_GE(connect_timeouts, 1);
}

TEST(HttpPushTest, HttpsTargetWithATrustedCertificate) {
  const testing::TlsCert cert = testing::MakeSelfSignedCert("IP:127.0.0.1");
  HttpReceiver target({.tls_cert_pem = cert.cert_pem, .tls_key_pem = cert.key_pem});
  Pusher pusher({.tls_ca_pem = cert.cert_pem});
  for (int i = 0; i < 3; ++i) {
    PushOutcome out = PushAndWait(pusher, HttpCall(target.Url("/secure"), "tls-1"));
    ASSERT_TRUE(out.ok) << out.error;
    EXPECT_EQ(out.code, 200);
  }
  auto reqs = target.Requests();
  ASSERT_EQ(reqs.size(), 3u);
  EXPECT_EQ(reqs[0].target, "/secure");
  EXPECT_EQ(reqs[0].body, "{\"x\":1}");
  EXPECT_EQ(reqs[0].Header("X-Chronoq-Msg-Id"), "tls-1");
  EXPECT_EQ(target.Connections(), 1u);  // kept alive under TLS too
}

TEST(HttpPushTest, HttpsTargetWithAnUntrustedCertificateFails) {
  const testing::TlsCert cert = testing::MakeSelfSignedCert("IP:127.0.0.1");
  HttpReceiver target({.tls_cert_pem = cert.cert_pem, .tls_key_pem = cert.key_pem});
  Pusher pusher;  // trusts the system's authorities only
  PushOutcome out = PushAndWait(pusher, HttpCall(target.Url("/secure")));
  EXPECT_FALSE(out.ok);
  EXPECT_EQ(out.error, "TLS handshake with " + target.HostPort() +
                           " failed: certificate verify failed (SSL routines)");
  EXPECT_EQ(target.RequestCount(), 0u);
}

TEST(HttpPushTest, HttpsTargetWhoseCertificateNamesAnotherHostFails) {
  const testing::TlsCert cert = testing::MakeSelfSignedCert("DNS:elsewhere.example");
  HttpReceiver target({.tls_cert_pem = cert.cert_pem, .tls_key_pem = cert.key_pem});
  Pusher pusher({.tls_ca_pem = cert.cert_pem});
  PushOutcome out = PushAndWait(pusher, HttpCall(target.Url("/secure")));
  EXPECT_FALSE(out.ok);
  EXPECT_EQ(out.error.rfind("TLS handshake with " + target.HostPort() + " failed: ", 0), 0u)
      << out.error;
  EXPECT_EQ(target.RequestCount(), 0u);
}

TEST(HttpPushTest, InvalidCallIsAnsweredWithoutAnAttempt) {
  Pusher pusher;
  PushOutcome out = PushAndWait(pusher, HttpCall("ftp://example.com/hook"));
  EXPECT_FALSE(out.ok);
  EXPECT_FALSE(out.busy);
  EXPECT_EQ(out.error,
            "callback.url must start with http:// or https://, got 'ftp://example.com/hook'");
}

TEST(HttpPushTest, FullTargetAnswersBusyAtOnce) {
  HttpReceiver target({.mode = HttpReceiver::Mode::kHang});
  Tally hung;  // outlives the Pusher: its shutdown ends the hung calls
  Pusher pusher(
      {.max_in_flight_per_target = 2, .max_queued_per_target = 3, .shutdown_grace = 10ms});
  for (int i = 0; i < 5; ++i) {
    PushCall call = HttpCall(target.Url("/"));
    call.timeout = 5s;
    pusher.Push(call, hung.Done());
  }
  ASSERT_TRUE(target.WaitForRequests(2, 10s));
  EXPECT_EQ(pusher.InFlight(target.HostPort()), 2);
  EXPECT_EQ(pusher.Queued(target.HostPort()), 3);
  ASSERT_EQ(pusher.Targets().size(), 1u);
  EXPECT_EQ(pusher.Targets()[0].key, target.HostPort());

  PushOutcome out = PushAndWait(pusher, HttpCall(target.Url("/")));
  EXPECT_FALSE(out.ok);
  EXPECT_TRUE(out.busy);
  EXPECT_EQ(out.error, "target " + target.HostPort() + " busy: 2 pushes in flight, 3 queued");
  EXPECT_LT(out.latency, 1s);
  EXPECT_EQ(hung.size(), 0u);
}

// The store holds a taken message for its lease; an attempt that could outlive it may overlap
// the next attempt (this node's or another's, after the lease's end), a double push without any
// crash. So a call whose lease ends before its timeout would is handed back untried, however
// long ago it was taken (a starved node), on the Pusher's clock (a manual one here).
TEST(HttpPushTest, ACallWhoseLeaseEndsBeforeItsTimeoutIsNotAttempted) {
  HttpReceiver target(HttpReceiver::Options{});
  base::ManualClock clock(FromEpochMs(1'700'000'000'000));
  Pusher pusher({.clock = &clock});
  PushCall call = HttpCall(target.Url("/"));
  call.timeout = 1000ms;
  call.outcome_reserve = 0ms;  // the timeout alone (the reserve: the next test)
  call.lease_end = clock.Now() + 999ms;
  PushOutcome out = PushAndWait(pusher, call);
  EXPECT_FALSE(out.ok);
  EXPECT_TRUE(out.busy);
  EXPECT_TRUE(out.lease_short);
  EXPECT_EQ(out.error,
            "push not attempted: its lease ends in 999 ms, too soon for the call's timeout of "
            "1000 ms and 0 ms to write its outcome");
  call.lease_end = clock.Now() - 5ms;
  out = PushAndWait(pusher, call);
  EXPECT_TRUE(out.lease_short);
  EXPECT_EQ(out.error, "push not attempted: its lease ended 5 ms ago");
  EXPECT_EQ(target.RequestCount(), 0u);

  call.lease_end = clock.Now() + 1000ms;  // exactly covers the call
  out = PushAndWait(pusher, call);
  EXPECT_TRUE(out.ok) << out.error;
  EXPECT_FALSE(out.lease_short);
  EXPECT_EQ(target.RequestCount(), 1u);
}

// A call that succeeds at the last moment of its timeout is acked after it: the lease must still
// hold the message then, or another node may take it meanwhile and push it again. So a call
// starts only while its lease also covers kOutcomeReserve (1 s) after its timeout, the default
// of every call.
TEST(HttpPushTest, ACallStartsOnlyWhenItsLeaseAlsoCoversTheWriteOfItsOutcome) {
  HttpReceiver target(HttpReceiver::Options{});
  base::ManualClock clock(FromEpochMs(1'700'000'000'000));
  Pusher pusher({.clock = &clock});
  PushCall call = HttpCall(target.Url("/"));
  EXPECT_EQ(call.outcome_reserve, kOutcomeReserve);
  EXPECT_EQ(kOutcomeReserve, 1000ms);
  call.timeout = 3000ms;
  call.lease_end = clock.Now() + 3999ms;  // covers the call, but not its outcome's write
  PushOutcome out = PushAndWait(pusher, call);
  EXPECT_FALSE(out.ok);
  EXPECT_TRUE(out.busy);
  EXPECT_TRUE(out.lease_short);
  EXPECT_EQ(out.error,
            "push not attempted: its lease ends in 3999 ms, too soon for the call's timeout of "
            "3000 ms and 1000 ms to write its outcome");
  EXPECT_EQ(target.RequestCount(), 0u);

  call.lease_end = clock.Now() + 4000ms;  // exactly the call and the reserve
  out = PushAndWait(pusher, call);
  EXPECT_TRUE(out.ok) << out.error;
  EXPECT_FALSE(out.lease_short);
  EXPECT_EQ(target.RequestCount(), 1u);
}

// A call that waited behind its target's in-flight limit is checked again when its turn comes:
// time passed while it was queued counts, not only the wait since it was queued.
TEST(HttpPushTest, AQueuedCallWhoseLeaseRanShortWhileItWaitedIsHandedBack) {
  HttpReceiver target({.answer_delay = 300ms});
  base::ManualClock clock(FromEpochMs(1'700'000'000'000));
  Tally tally;
  Pusher pusher({.max_in_flight_per_target = 1, .clock = &clock});
  PushCall first = HttpCall(target.Url("/"), "first");
  pusher.Push(first, tally.Done());  // no lease: holds the only slot for 300 ms
  PushCall short_lease = HttpCall(target.Url("/"), "short");
  short_lease.timeout = 1000ms;
  short_lease.lease_end = clock.Now() + 4000ms;  // the call and its reserve, and 2 s to spare
  pusher.Push(short_lease, tally.Done());
  PushCall long_lease = HttpCall(target.Url("/"), "long");
  long_lease.timeout = 1000ms;
  long_lease.lease_end = clock.Now() + 10'000ms;
  pusher.Push(long_lease, tally.Done());
  ASSERT_EQ(pusher.Queued(target.HostPort()), 2);
  clock.Advance(2500ms);  // "short" now has 1,500 ms of lease left, "long" 7,500

  ASSERT_TRUE(tally.Wait(3, 30s));
  std::vector<PushOutcome> outcomes = tally.outcomes();
  int ok = 0, handed_back = 0;
  for (const PushOutcome& o : outcomes) {
    if (o.ok) ++ok;
    if (o.lease_short) {
      ++handed_back;
      EXPECT_TRUE(o.busy);
      EXPECT_EQ(o.error.rfind("push not attempted: its lease ends in 1500 ms, too soon for the "
                              "call's timeout of 1000 ms and 1000 ms to write its outcome "
                              "(waited ",
                              0),
                0u)
          << o.error;
    }
  }
  EXPECT_EQ(ok, 2);
  EXPECT_EQ(handed_back, 1);
  std::vector<std::string> ids;
  for (const auto& r : target.Requests()) ids.push_back(r.Header("X-Chronoq-Msg-Id"));
  EXPECT_EQ(ids, (std::vector<std::string>{"first", "long"}));
}

TEST(HttpPushTest, ShutdownFailsQueuedCallsAndEndsHungOnesAfterTheGrace) {
  HttpReceiver target({.mode = HttpReceiver::Mode::kHang});
  Tally tally;
  Pusher pusher({.max_in_flight_per_target = 1, .shutdown_grace = 100ms});
  for (int i = 0; i < 3; ++i) {
    PushCall call = HttpCall(target.Url("/"));
    call.timeout = 60s;
    pusher.Push(call, tally.Done());
  }
  ASSERT_TRUE(target.WaitForRequests(1, 10s));
  pusher.Shutdown();
  ASSERT_EQ(tally.size(), 3u);  // every done has run when Shutdown returns
  int queued = 0, in_flight = 0;
  for (const PushOutcome& o : tally.outcomes()) {
    EXPECT_FALSE(o.ok);
    if (o.busy) {
      ++queued;
      EXPECT_EQ(o.error, "push not attempted: the pusher is shutting down");
    } else {
      ++in_flight;
      EXPECT_EQ(o.error, "push in flight when the pusher shut down: outcome unknown");
    }
  }
  EXPECT_EQ(queued, 2);
  EXPECT_EQ(in_flight, 1);
  EXPECT_EQ(pusher.InFlight(target.HostPort()), 0);

  PushOutcome late = PushAndWait(pusher, HttpCall(target.Url("/")));
  EXPECT_TRUE(late.busy);
  EXPECT_EQ(late.error, "push not attempted: the pusher is shutting down");
}

// A hanging target holds its own slots only: a healthy target's pushes, started while every
// in-flight slot of the hanging one is taken, all complete while the hanging calls are still
// waiting, and the hanging calls end at their own timeout.
TEST(HttpPushTest, HangingTargetDoesNotSlowAHealthyOne) {
  HttpReceiver hanging({.mode = HttpReceiver::Mode::kHang});
  HttpReceiver healthy({.record = false});
  constexpr auto kHangTimeout = 2000ms;
  constexpr int kHealthy = 2000;
  Tally hung;
  Tally ok;
  std::atomic<int> next{0};
  std::function<void()> push_one;
  Pusher pusher({.max_in_flight_per_target = 16, .max_queued_per_target = 16});

  for (int i = 0; i < 16; ++i) {
    PushCall call = HttpCall(hanging.Url("/slow"));
    call.timeout = kHangTimeout;
    pusher.Push(call, hung.Done());
  }
  ASSERT_TRUE(hanging.WaitForRequests(16, 10s));
  const auto start = std::chrono::steady_clock::now();

  // 32 at a time (16 running, 16 queued), as a scheduler would keep them going.
  push_one = [&] {
    const int i = next.fetch_add(1);
    if (i >= kHealthy) return;
    pusher.Push(HttpCall(healthy.Url("/fast"), "h" + std::to_string(i)),
                [&, done = ok.Done()](PushOutcome o) mutable {
                  const bool good = o.ok;
                  if (good) push_one();
                  done(std::move(o));
                });
  };
  for (int i = 0; i < 32; ++i) push_one();
  ASSERT_TRUE(ok.Wait(kHealthy, 30s));
  const auto healthy_took = std::chrono::steady_clock::now() - start;
  for (const PushOutcome& o : ok.outcomes()) ASSERT_TRUE(o.ok) << o.error;
  std::cout << kHealthy << " healthy pushes took "
            << std::chrono::duration_cast<std::chrono::milliseconds>(healthy_took).count()
            << " ms beside the hanging target\n";
  EXPECT_EQ(hung.size(), 0u)
      << "healthy pushes took "
      << std::chrono::duration_cast<std::chrono::milliseconds>(healthy_took).count() << " ms";
  EXPECT_EQ(pusher.InFlight(hanging.HostPort()), 16);
  EXPECT_LT(healthy_took, kHangTimeout);

  ASSERT_TRUE(hung.Wait(16, 30s));
  for (const PushOutcome& o : hung.outcomes()) {
    EXPECT_FALSE(o.ok);
    EXPECT_EQ(o.error, "timed out after 2000 ms");
    EXPECT_GE(o.latency, kHangTimeout);
    EXPECT_LT(o.latency, kHangTimeout + 2s);
  }
}

}  // namespace
}  // namespace chronoq::push
