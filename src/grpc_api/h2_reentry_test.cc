// Calls and streams that end inside the engine's own callbacks (docs/grpc.md "Re-entrancy"), over
// a real socket on both engines: a parked Pull reset by the client (its cancelled poll answers at
// once, inside the reset), a Pull answered inside its own dispatch while the session keeps all the
// closed streams it keeps, a Consume call refused inside its first DATA, answers waiting for a
// window that a WINDOW_UPDATE reopens after one of them was reset, the connection closing with
// every kind of call open, and the server stopping with calls in flight. Each states what the
// client sees; the sanitizer builds (scripts/sanitize.sh) check the memory behind it.
#include <gtest/gtest.h>

#include <chrono>
#include <string>
#include <thread>
#include <vector>

#include "chronoq/v1/delay_queue.grpc.pb.h"
#include "grpc_api/grpc_server.h"
#include "tests/testutil/h2_raw_client.h"
#include "tests/testutil/server_harness.h"

namespace chronoq::grpc_api {
namespace {

using namespace h2test;  // NOLINT(google-build-using-namespace): the raw client's names

constexpr uint8_t kWindowUpdate = 8;
constexpr std::string_view kDq = "/chronoq.v1.DelayQueue/";

class H2ReentryTest : public H2ServerTest {
 protected:
  // `m` as one gRPC message (uncompressed).
  static std::string Message(const google::protobuf::MessageLite& m) {
    const std::string b = m.SerializeAsString();
    return std::string(1, '\0') + U32(static_cast<uint32_t>(b.size())) + b;
  }
  static std::string Request(uint32_t id, std::string_view method, const std::string& message) {
    return Frame(kHeaders, kEndHeaders, id,
                 RequestHeaders(std::string(kDq) + std::string(method))) +
           Frame(kData, kEndStream, id, message);
  }
  static std::string Opened(uint32_t id, std::string_view method) {
    return Frame(kHeaders, kEndHeaders, id, RequestHeaders(std::string(kDq) + std::string(method)));
  }
  static std::string Pull(std::string_view topic, int64_t wait_millis) {
    v1::PullRequest r;
    r.set_topic(std::string(topic));
    r.set_wait_millis(wait_millis);
    return Message(r);
  }
  // Sends `n` messages of `bytes` bytes each to `topic` (ids m0, m1, ...) with gRPC's client.
  void SendMessages(const std::string& topic, int n, size_t bytes) {
    auto stub = v1::DelayQueue::NewStub(grpc::CreateChannel(
        "127.0.0.1:" + std::to_string(server_->port()), grpc::InsecureChannelCredentials()));
    for (int i = 0; i < n; ++i) {
      grpc::ClientContext ctx;
      v1::SendRequest req;
      req.set_topic(topic);
      req.set_msg_id("m" + std::to_string(i));
      req.set_msg(std::string(bytes, 'x'));
      req.set_delay_millis(0);
      v1::SendResponse resp;
      ASSERT_TRUE(stub->Send(&ctx, req, &resp).ok());
    }
  }
  static std::string Settings(uint16_t id, uint32_t value) {
    return Frame(kSettings, 0, 0,
                 std::string{static_cast<char>(id >> 8), static_cast<char>(id)} + U32(value));
  }
};

INSTANTIATE_TEST_SUITE_P(Engines, H2ReentryTest, ::testing::Values("h2", "nghttp2"),
                         [](const ::testing::TestParamInfo<const char*>& info) {
                           return std::string(info.param);
                         });

// The reset cancels the parked poll, whose empty answer comes at once, inside the reset: the
// stream is closed by then, and nothing is written on it (the h2 engine once wrote the answer
// after the reset, and with its kept streams full freed the stream under its close).
TEST_P(H2ReentryTest, AParkedPullResetByTheClientGetsNothingMoreAndTheConnectionServesOn) {
  Start(GrpcOptions{});
  testutil::RawConnection c;
  Open(&c);
  std::string open = Request(1, "Pull", Pull("idle", 5000));
  for (uint32_t id = 3; id <= 17; id += 2) open += Opened(id, "Send");  // 8 streams to close first
  ASSERT_TRUE(c.Send(open).ok());
  c.ReadFor(milliseconds(200));  // parked
  std::string resets;
  for (uint32_t id = 3; id <= 17; id += 2) resets += Frame(kRstStream, 0, id, U32(kCancel));
  resets += Frame(kRstStream, 0, 1, U32(kCancel));
  resets += Request(19, "ListTopics", Message(v1::ListTopicsRequest()));
  ASSERT_TRUE(c.Send(resets).ok());
  std::map<uint32_t, StreamEnd> got = AwaitEnds(&c, {19});
  EXPECT_EQ(got[19].fields["grpc-status"], "0");
  EXPECT_TRUE(got[1].fields.empty()) << "an answer after the client's reset";
  EXPECT_FALSE(got[1].ended);
  EXPECT_EQ(got[1].reset, UINT32_MAX);
  EXPECT_TRUE(Call().ok());
}

// A Pull whose message is there is answered inside its dispatch, and its stream closes there;
// the session keeps 8 closed streams for the next calls, and has 8 already: this one is freed.
TEST_P(H2ReentryTest, APullAnsweredInsideItsDispatchWhileClosedStreamsAreKeptGetsItsMessage) {
  Start(GrpcOptions{});
  SendMessages("ready", 1, 10);
  testutil::RawConnection c;
  Open(&c);
  std::string bytes;
  for (uint32_t id = 1; id <= 15; id += 2) bytes += Opened(id, "Send");
  bytes += Opened(17, "Pull");
  for (uint32_t id = 1; id <= 15; id += 2) bytes += Frame(kRstStream, 0, id, U32(kCancel));
  bytes += Frame(kData, kEndStream, 17, Pull("ready", 1000));
  ASSERT_TRUE(c.Send(bytes).ok());
  std::map<uint32_t, StreamEnd> got = AwaitEnds(&c, {17});
  EXPECT_TRUE(got[17].ended);
  EXPECT_EQ(got[17].fields["grpc-status"], "0");
  EXPECT_TRUE(Call().ok());
}

// The subscription is refused while its DATA is being delivered (credit 0): the call ends inside,
// Trailers-Only; the client's further DATA on it is dropped, the connection serves on.
TEST_P(H2ReentryTest, AConsumeCallRefusedInsideItsFirstDataEndsAlone) {
  Start(GrpcOptions{});
  testutil::RawConnection c;
  Open(&c);
  v1::ConsumeRequest sub;
  sub.mutable_subscribe()->set_topic("t");
  sub.mutable_subscribe()->set_credit(0);
  const std::string more = Message(sub);
  std::string bytes = Opened(1, "Consume") + Frame(kData, 0, 1, more + more);
  bytes += Frame(kData, kEndStream, 1, more);
  bytes += Request(3, "ListTopics", Message(v1::ListTopicsRequest()));
  ASSERT_TRUE(c.Send(bytes).ok());
  std::map<uint32_t, StreamEnd> got = AwaitEnds(&c, {1, 3});
  EXPECT_EQ(got[1].fields["grpc-status"], "3");  // INVALID_ARGUMENT
  EXPECT_EQ(got[3].fields["grpc-status"], "0");
  EXPECT_FALSE(c.WaitClosed(milliseconds(100)));
}

// Two answers wait for the client's window (initial window 10 bytes); the first stream is reset,
// then the window reopens: the second answer is written whole, nothing on the reset one.
TEST_P(H2ReentryTest, AWindowReopenedAfterOneWaitingAnswerWasResetWritesTheOthers) {
  Start(GrpcOptions{});
  SendMessages("big", 2, 20'000);
  testutil::RawConnection c;
  Open(&c);
  v1::MessageRef ref;
  ref.set_topic("big");
  ref.set_msg_id("m0");
  std::string bytes = Settings(4, 10) + Request(1, "Get", Message(ref));
  ref.set_msg_id("m1");
  bytes += Request(3, "Get", Message(ref));
  ASSERT_TRUE(c.Send(bytes).ok());
  c.ReadFor(milliseconds(200));
  EXPECT_FALSE(Streams(c.received())[3].ended);  // waits for its window
  c.Clear();
  ASSERT_TRUE(
      c.Send(Frame(kRstStream, 0, 1, U32(kCancel)) + Frame(kWindowUpdate, 0, 0, U32(1 << 20)) +
             Frame(kWindowUpdate, 0, 3, U32(1 << 20)) + Frame(kWindowUpdate, 0, 1, U32(1 << 20)))
          .ok());
  std::map<uint32_t, StreamEnd> got = AwaitEnds(&c, {3});
  EXPECT_TRUE(got[3].ended);
  EXPECT_EQ(got[3].fields["grpc-status"], "0");
  EXPECT_FALSE(got[1].ended);
  EXPECT_TRUE(Call().ok());
}

// The connection goes away (the client closes its socket, the server's next write fails) with a
// Consume call delivering, a parked Pull, a health Watch and an answer waiting for its window:
// every call ends (no Consume stream left registered) and the server serves others.
TEST_P(H2ReentryTest, TheConnectionClosingWithEveryKindOfCallOpenEndsThemAll) {
  Start(GrpcOptions{});
  SendMessages("c", 20, 2'000);
  {
    testutil::RawConnection c;
    Open(&c);
    v1::ConsumeRequest sub;
    sub.mutable_subscribe()->set_topic("c");
    sub.mutable_subscribe()->set_credit(20);
    v1::MessageRef ref;
    ref.set_topic("c");
    ref.set_msg_id("m0");
    std::string bytes = Settings(4, 100);  // small windows: answers wait for WINDOW_UPDATE
    bytes += Opened(1, "Consume") + Frame(kData, 0, 1, Message(sub));
    bytes += Request(3, "Pull", Pull("idle", 10'000));
    bytes += Frame(kHeaders, kEndHeaders, 5, RequestHeaders("/grpc.health.v1.Health/Watch")) +
             Frame(kData, kEndStream, 5, std::string("\0\0\0\0\0", 5));
    bytes += Request(7, "Get", Message(ref));
    ASSERT_TRUE(c.Send(bytes).ok());
    for (auto end = std::chrono::steady_clock::now() + seconds(5);
         server_->streams() == 0 && std::chrono::steady_clock::now() < end;) {
      c.ReadFor(milliseconds(20));
    }
    EXPECT_EQ(server_->streams(), 1U);  // the Consume call is subscribed
    c.Close();
  }
  for (auto end = std::chrono::steady_clock::now() + seconds(5);
       server_->streams() > 0 && std::chrono::steady_clock::now() < end;) {
    std::this_thread::sleep_for(milliseconds(10));
  }
  EXPECT_EQ(server_->streams(), 0U);
  EXPECT_TRUE(Call().ok());
}

// Stop (SIGTERM's path) with a Consume call and a parked Pull in flight: the Consume call ends
// with OK, GOAWAY tells the client, and the connection closes within the shutdown's deadline.
TEST_P(H2ReentryTest, StoppingWithCallsInFlightEndsThemAndGoesAway) {
  Start(GrpcOptions{});
  testutil::RawConnection c;
  Open(&c);
  v1::ConsumeRequest sub;
  sub.mutable_subscribe()->set_topic("s");
  sub.mutable_subscribe()->set_credit(5);
  ASSERT_TRUE(c.Send(Opened(1, "Consume") + Frame(kData, 0, 1, Message(sub)) +
                     Request(3, "Pull", Pull("idle", 10'000)))
                  .ok());
  c.ReadFor(milliseconds(200));
  std::thread stop([this] { server_->Shutdown(milliseconds(1'000)); });
  EXPECT_TRUE(c.WaitClosed(seconds(5)));
  stop.join();
  std::map<uint32_t, StreamEnd> got = Streams(c.received());
  EXPECT_TRUE(Has(Parse(c.received()), kGoaway));
  EXPECT_TRUE(got[1].ended);
  EXPECT_EQ(got[1].fields["grpc-status"], "0");
  EXPECT_EQ(server_->streams(), 0U);
}

}  // namespace
}  // namespace chronoq::grpc_api
