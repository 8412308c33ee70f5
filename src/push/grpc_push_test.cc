// The gRPC transport against a real gRPC server of the same library, serving any method through
// a generic callback service (no generated code on either side).

#include <gtest/gtest.h>

#include "push/pusher.h"
#include "push/testing/grpc_receiver.h"
#include "push/testing/push_and_wait.h"

namespace chronoq::push {
namespace {

using namespace std::chrono_literals;
using testing::GrpcReceiver;
using testing::PushAndWait;

PushCall GrpcCall(std::string target, std::string body) {
  PushCall c;
  c.kind = Kind::kGrpc;
  c.grpc_target = std::move(target);
  c.grpc_method = "/shop.Orders/Deliver";
  c.msg_id = "msg-7";
  c.topic = "orders";
  c.attempt = 2;
  c.body = std::move(body);
  return c;
}

TEST(GrpcPushTest, CallsAnyMethodWithRawBytesAndMetadata) {
  GrpcReceiver target;
  Pusher pusher;
  const std::string bytes("\x08\x96\x01\x00payload", 11);
  PushOutcome out = PushAndWait(pusher, GrpcCall(target.Target(), bytes));
  EXPECT_TRUE(out.ok) << out.error;
  EXPECT_EQ(out.code, 0);
  auto got = target.Requests();
  ASSERT_EQ(got.size(), 1u);
  EXPECT_EQ(got[0].method, "/shop.Orders/Deliver");
  EXPECT_EQ(got[0].bytes, bytes);
  EXPECT_EQ(got[0].Metadata("x-chronoq-msg-id"), "msg-7");
  EXPECT_EQ(got[0].Metadata("x-chronoq-topic"), "orders");
  EXPECT_EQ(got[0].Metadata("x-chronoq-attempt"), "2");

  // The channel is kept: more calls to the same target succeed.
  for (int i = 0; i < 5; ++i) {
    EXPECT_TRUE(PushAndWait(pusher, GrpcCall(target.Target(), "x")).ok);
  }
  EXPECT_EQ(target.Requests().size(), 6u);
}

TEST(GrpcPushTest, ErrorStatusGivesCodeNameAndMessage) {
  GrpcReceiver target({.mode = GrpcReceiver::Mode::kFail});
  Pusher pusher;
  PushOutcome out = PushAndWait(pusher, GrpcCall(target.Target(), "b"));
  EXPECT_FALSE(out.ok);
  EXPECT_FALSE(out.busy);
  EXPECT_EQ(out.code, 14);
  EXPECT_EQ(out.error, "gRPC UNAVAILABLE: down for maintenance");
}

TEST(GrpcPushTest, HangingMethodEndsAtTheDeadline) {
  GrpcReceiver target({.mode = GrpcReceiver::Mode::kHang});
  Pusher pusher;
  PushCall call = GrpcCall(target.Target(), "b");
  call.timeout = 200ms;
  PushOutcome out = PushAndWait(pusher, call);
  EXPECT_FALSE(out.ok);
  EXPECT_EQ(out.error, "gRPC DEADLINE_EXCEEDED: Deadline Exceeded (timeout 200 ms)");
  EXPECT_GE(out.latency, 190ms);  // gRPC's deadline is on the system clock
  EXPECT_LT(out.latency, 3s);
}

TEST(GrpcPushTest, TargetDownIsUnavailable) {
  std::string target;
  {
    GrpcReceiver gone;
    target = gone.Target();
  }
  Pusher pusher;
  PushCall call = GrpcCall(target, "b");
  call.timeout = 2s;
  PushOutcome out = PushAndWait(pusher, call);
  EXPECT_FALSE(out.ok);
  EXPECT_EQ(out.error.rfind("gRPC UNAVAILABLE: ", 0), 0u) << out.error;
}

// A Pusher shut down as soon as its outcome is in, again and again: its channel must go with it
// cleanly, whichever thread ends the call last. No gRPC server runs in the process meanwhile, so
// the channel is the last user of gRPC's callback threads: destroyed on one of them, that thread
// joins itself and polls a deleted completion queue (a double free the sanitizer builds catch).
TEST(GrpcPushTest, ShutsDownCleanlyRightAfterAnOutcome) {
  std::string target;
  {
    GrpcReceiver gone;
    target = gone.Target();
  }
  for (int i = 0; i < 200; ++i) {
    Pusher pusher;
    PushCall call = GrpcCall(target, "b");
    call.timeout = 2s;
    PushOutcome out = PushAndWait(pusher, call);
    EXPECT_EQ(out.error.rfind("gRPC UNAVAILABLE: ", 0), 0u) << out.error;
  }
}

TEST(GrpcPushTest, BadMethodIsRefusedBeforeAnyCall) {
  Pusher pusher;
  PushCall call = GrpcCall("127.0.0.1:1", "b");
  call.grpc_method = "Deliver";
  PushOutcome out = PushAndWait(pusher, call);
  EXPECT_FALSE(out.ok);
  EXPECT_FALSE(out.busy);
  EXPECT_EQ(out.error, "callback method 'Deliver' must be /package.Service/Method");
}

}  // namespace
}  // namespace chronoq::push
