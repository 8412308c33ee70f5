// The gRPC transport against a real gRPC server of the same library, serving any method through
// a generic callback service (no generated code on either side).

#include <grpcpp/generic/async_generic_service.h>
#include <grpcpp/security/server_credentials.h>
#include <grpcpp/server.h>
#include <grpcpp/server_builder.h>
#include <grpcpp/support/byte_buffer.h>
#include <gtest/gtest.h>

#include <future>
#include <mutex>

#include "push/pusher.h"
#include "push/testing/push_and_wait.h"

namespace chronoq::push {
namespace {

using namespace std::chrono_literals;

struct Received {
  std::string method;
  std::string bytes;
  std::multimap<std::string, std::string> metadata;
};

// A generic service: records each call, then answers its own bytes reversed (kEcho), an error
// status (kFail) or nothing until the client gives up (kHang).
class GenericTarget : public grpc::CallbackGenericService {
 public:
  enum class Mode { kEcho, kFail, kHang };
  explicit GenericTarget(Mode mode) : mode_(mode) {
    grpc::ServerBuilder builder;
    builder.AddListeningPort("127.0.0.1:0", grpc::InsecureServerCredentials(), &port_);
    builder.RegisterCallbackGenericService(this);
    server_ = builder.BuildAndStart();
  }
  ~GenericTarget() override { server_->Shutdown(std::chrono::system_clock::now() + 1s); }

  std::string target() const { return "127.0.0.1:" + std::to_string(port_); }
  std::vector<Received> received() {
    std::lock_guard<std::mutex> lock(mu_);
    return received_;
  }

  grpc::ServerGenericBidiReactor* CreateReactor(grpc::GenericCallbackServerContext* ctx) override {
    return new Reactor(this, ctx);
  }

 private:
  class Reactor : public grpc::ServerGenericBidiReactor {
   public:
    Reactor(GenericTarget* owner, grpc::GenericCallbackServerContext* ctx)
        : owner_(owner), ctx_(ctx) {
      StartRead(&request_);
    }
    void OnReadDone(bool ok) override {
      if (!ok) return Finish(grpc::Status(grpc::StatusCode::INVALID_ARGUMENT, "no request"));
      Received r;
      r.method = ctx_->method();
      std::vector<grpc::Slice> slices;
      (void)request_.Dump(&slices);
      for (const auto& s : slices)
        r.bytes.append(reinterpret_cast<const char*>(s.begin()), s.size());
      for (const auto& [k, v] : ctx_->client_metadata()) {
        r.metadata.emplace(std::string(k.data(), k.size()), std::string(v.data(), v.size()));
      }
      std::string reply(r.bytes.rbegin(), r.bytes.rend());
      {
        std::lock_guard<std::mutex> lock(owner_->mu_);
        owner_->received_.push_back(std::move(r));
      }
      switch (owner_->mode_) {
        case Mode::kEcho: {
          grpc::Slice slice(reply);
          response_ = grpc::ByteBuffer(&slice, 1);
          StartWriteAndFinish(&response_, grpc::WriteOptions(), grpc::Status::OK);
          break;
        }
        case Mode::kFail:
          Finish(grpc::Status(grpc::StatusCode::UNAVAILABLE, "down for maintenance"));
          break;
        case Mode::kHang:
          break;  // OnCancel finishes it once the client's deadline passes
      }
    }
    void OnCancel() override {
      if (owner_->mode_ == Mode::kHang) Finish(grpc::Status::CANCELLED);
    }
    void OnDone() override { delete this; }

   private:
    GenericTarget* const owner_;
    grpc::GenericCallbackServerContext* const ctx_;
    grpc::ByteBuffer request_;
    grpc::ByteBuffer response_;
  };

  const Mode mode_;
  int port_ = 0;
  std::unique_ptr<grpc::Server> server_;
  std::mutex mu_;
  std::vector<Received> received_;
};

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
  GenericTarget target(GenericTarget::Mode::kEcho);
  Pusher pusher;
  const std::string bytes("\x08\x96\x01\x00payload", 11);
  PushOutcome out = PushAndWait(pusher, GrpcCall(target.target(), bytes));
  EXPECT_TRUE(out.ok) << out.error;
  EXPECT_EQ(out.code, 0);
  auto got = target.received();
  ASSERT_EQ(got.size(), 1u);
  EXPECT_EQ(got[0].method, "/shop.Orders/Deliver");
  EXPECT_EQ(got[0].bytes, bytes);
  auto meta = [&](const std::string& k) {
    auto it = got[0].metadata.find(k);
    return it == got[0].metadata.end() ? std::string("<absent>") : it->second;
  };
  EXPECT_EQ(meta("x-chronoq-msg-id"), "msg-7");
  EXPECT_EQ(meta("x-chronoq-topic"), "orders");
  EXPECT_EQ(meta("x-chronoq-attempt"), "2");

  // The channel is kept: more calls to the same target succeed.
  for (int i = 0; i < 5; ++i) {
    EXPECT_TRUE(PushAndWait(pusher, GrpcCall(target.target(), "x")).ok);
  }
  EXPECT_EQ(target.received().size(), 6u);
}

TEST(GrpcPushTest, ErrorStatusGivesCodeNameAndMessage) {
  GenericTarget target(GenericTarget::Mode::kFail);
  Pusher pusher;
  PushOutcome out = PushAndWait(pusher, GrpcCall(target.target(), "b"));
  EXPECT_FALSE(out.ok);
  EXPECT_FALSE(out.busy);
  EXPECT_EQ(out.code, 14);
  EXPECT_EQ(out.error, "gRPC UNAVAILABLE: down for maintenance");
}

TEST(GrpcPushTest, HangingMethodEndsAtTheDeadline) {
  GenericTarget target(GenericTarget::Mode::kHang);
  Pusher pusher;
  PushCall call = GrpcCall(target.target(), "b");
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
    GenericTarget gone(GenericTarget::Mode::kEcho);
    target = gone.target();
  }
  Pusher pusher;
  PushCall call = GrpcCall(target, "b");
  call.timeout = 2s;
  PushOutcome out = PushAndWait(pusher, call);
  EXPECT_FALSE(out.ok);
  EXPECT_EQ(out.error.rfind("gRPC UNAVAILABLE: ", 0), 0u) << out.error;
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
