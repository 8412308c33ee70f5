// The call sequence a gRPC layer (API-EXTENSIONS.md section 6) will make, written against the
// service over the embedded engine, to show that such a layer needs no rule of its own: it
// decodes proto fields into service requests, maps Errc to a gRPC status code in one table, and
// passes the service's sentences through. Consume (a stream with credit) is a loop of service long
// polls sized by the credit left, with acks on the same stream; a stream that breaks leaves its
// unacked messages to their ack deadline like any delivery.
#include <gtest/gtest.h>

#include <deque>
#include <optional>
#include <string>
#include <vector>

#include "base/clock.h"
#include "base/scheduler.h"
#include "engine/engine.h"
#include "service/queue_service.h"
#include "storage/memory/mem_kv.h"
#include "storage/message_store.h"

namespace chronoq::service {
namespace {

// The gRPC status codes the contract names (grpc/status.h values).
enum class GrpcCode {
  kOk = 0,
  kInvalidArgument = 3,
  kNotFound = 5,
  kFailedPrecondition = 9,
  kInternal = 13,
  kUnavailable = 14,
};

// The one table a gRPC layer owns: Errc -> status code (HTTP has its own, http/error_map.h).
GrpcCode ToGrpc(Errc e) {
  switch (e) {
    case Errc::kOk:
      return GrpcCode::kOk;
    case Errc::kInvalidArgument:
      return GrpcCode::kInvalidArgument;
    case Errc::kNotFound:
      return GrpcCode::kNotFound;
    case Errc::kInvalidState:
      return GrpcCode::kFailedPrecondition;
    case Errc::kUnavailable:
      return GrpcCode::kUnavailable;
    default:
      return GrpcCode::kInternal;
  }
}

struct GrpcStatus {
  GrpcCode code = GrpcCode::kOk;
  std::string message;
};
GrpcStatus FromStatus(const Status& s) { return {ToGrpc(s.code()), s.message()}; }

// Proto-shaped messages: plain fields, presence where proto3 `optional` gives it.
struct SendProto {
  std::string topic, msg_id, msg;
  int64_t delay_millis = 0;
  std::optional<int64_t> ttl_millis;
  std::optional<int32_t> max_retry;
};

// A synchronous stand-in for the async gRPC handlers: every method is decode, one service
// call, encode. (The engine over the in-memory store answers inline.)
class DelayQueueHandlers {
 public:
  explicit DelayQueueHandlers(QueueService* s) : s_(s) {}

  GrpcStatus Send(const SendProto& p, core::Message* out, bool* existing) {
    GrpcStatus st;
    s_->Send(SendRequest{p.topic, p.msg_id, p.msg, p.delay_millis, p.ttl_millis, p.max_retry},
             [&](Result<backend::Sent> r) {
               if (!r.has_value()) return void(st = FromStatus(r.error()));
               *out = r->message;
               *existing = r->existing;
             });
    return st;
  }
  GrpcStatus Get(const std::string& topic, const std::string& id, core::Message* out) {
    GrpcStatus st;
    s_->Get(MessageRef{topic, id}, [&](Result<core::Message> r) {
      if (!r.has_value()) return void(st = FromStatus(r.error()));
      *out = *r;
    });
    return st;
  }
  GrpcStatus Ack(const std::string& topic, const std::string& id, bool ack) {
    GrpcStatus st;
    s_->Ack(AckRequest{{topic, id}, ack}, [&](Status s) { st = FromStatus(s); });
    return st;
  }
  GrpcStatus Delete(const std::string& topic, const std::string& id) {
    GrpcStatus st;
    s_->Delete(DeleteRequest{{topic, id}, false}, [&](Status s) { st = FromStatus(s); });
    return st;
  }

  // One Consume stream: subscription (topic, ack timeout, credit), then messages as they become
  // consumable, never more than the credit left; acks on the stream give credit back.
  class ConsumeStream {
   public:
    ConsumeStream(QueueService* s, std::string topic, int64_t ack_timeout_ms, int credit)
        : s_(s), topic_(std::move(topic)), ack_timeout_ms_(ack_timeout_ms), credit_(credit) {
      Poll();
    }
    ~ConsumeStream() { Break(); }
    // Messages the server has written to the stream and the client has not read yet.
    std::vector<core::Message> Read() { return std::exchange(received_, {}); }
    GrpcStatus AckOnStream(const std::string& id, bool ack) {
      GrpcStatus st;
      s_->Ack(AckRequest{{topic_, id}, ack}, [&](Status s) { st = FromStatus(s); });
      if (st.code == GrpcCode::kOk && --unacked_ >= 0) Poll();
      return st;
    }
    // The client goes away: the parked poll ends, unacked messages wait for their deadline.
    void Break() {
      broken_ = true;
      s_->CancelLongPoll(ticket_);
    }
    int unacked() const { return unacked_; }

   private:
    void Poll() {
      if (broken_ || polling_ || unacked_ >= credit_) return;
      polling_ = true;
      LongPollRequest req{PullRequest{topic_, credit_ - unacked_, ack_timeout_ms_}, 60'000};
      ticket_ = s_->LongPoll(
          std::move(req), [this] { return !broken_; },
          [this](Result<Messages> r) {
            polling_ = false;
            if (!r.has_value() || broken_) return;
            unacked_ += static_cast<int>(r->size());
            for (core::Message& m : *r) received_.push_back(std::move(m));
            Poll();
          });
    }
    QueueService* s_;
    std::string topic_;
    int64_t ack_timeout_ms_;
    int credit_;
    int unacked_ = 0;
    bool polling_ = false;
    bool broken_ = false;
    LongPollTicket ticket_;
    std::vector<core::Message> received_;
  };

 private:
  QueueService* s_;
};

class GrpcShapeTest : public ::testing::Test {
 protected:
  GrpcShapeTest() : clock_(FromEpochMs(1'700'000'040'000)), sched_(&clock_) {
    engine_ = std::make_unique<engine::Engine>(engine::EngineOptions{}, &store_, &clock_, &sched_);
    EXPECT_TRUE(engine_->Recover().ok());
    ServiceOptions o;
    o.limits.max_topic_bytes = 16;
    service_ = std::make_unique<QueueService>(engine_.get(), &clock_, &sched_, o);
  }
  ~GrpcShapeTest() override {
    service_.reset();
    engine_.reset();
  }
  void SendNow(const std::string& id) {
    core::Message m;
    bool existing = false;
    GrpcStatus st = api_().Send(SendProto{"t", id, "payload-" + id, 0, {}, {}}, &m, &existing);
    ASSERT_EQ(st.code, GrpcCode::kOk) << st.message;
  }
  DelayQueueHandlers api_() { return DelayQueueHandlers(service_.get()); }
  static std::vector<std::string> Ids(const std::vector<core::Message>& list) {
    std::vector<std::string> ids;
    for (const core::Message& m : list) ids.push_back(m.record.msg_id);
    return ids;
  }

  base::ManualClock clock_;
  base::ManualScheduler sched_;
  storage::MemKv kv_;
  storage::MessageStore store_{&kv_, "grpc"};
  std::unique_ptr<engine::Engine> engine_;
  std::unique_ptr<QueueService> service_;
};

TEST_F(GrpcShapeTest, UnaryCallsGetTheServiceRulesAndSentences) {
  DelayQueueHandlers api = api_();
  core::Message m;
  bool existing = false;
  GrpcStatus st = api.Send(SendProto{"", "a", "x", 0, {}, {}}, &m, &existing);
  EXPECT_EQ(st.code, GrpcCode::kInvalidArgument);
  EXPECT_EQ(st.message, "topic is empty");  // the sentence HTTP answers in its code-400 body
  st = api.Send(SendProto{"t", "a", "x", 5'000, std::nullopt, std::nullopt}, &m, &existing);
  ASSERT_EQ(st.code, GrpcCode::kOk);
  EXPECT_FALSE(existing);
  EXPECT_EQ(m.status, core::MsgStatus::kWaiting);
  EXPECT_EQ(m.record.max_retry, core::Defaults{}.max_retry);  // the server default, applied below
  st = api.Send(SendProto{"t", "a", "y", 0, {}, {}}, &m, &existing);
  EXPECT_TRUE(existing);  // a task created twice is one task
  core::Message got;
  ASSERT_EQ(api.Get("t", "a", &got).code, GrpcCode::kOk);
  EXPECT_EQ(got.record.payload, "x");
  EXPECT_EQ(api.Ack("t", "a", true).code, GrpcCode::kFailedPrecondition);  // still waiting
  EXPECT_EQ(api.Delete("t", "a").code, GrpcCode::kOk);                     // cancel the task
  EXPECT_EQ(api.Get("t", "nope", &got).code, GrpcCode::kNotFound);
}

TEST_F(GrpcShapeTest, ConsumeNeverHoldsMoreThanTheCredit) {
  DelayQueueHandlers::ConsumeStream stream(service_.get(), "t", 30'000, 2);
  for (const char* id : {"a", "b", "c"}) SendNow(id);
  EXPECT_EQ(Ids(stream.Read()), (std::vector<std::string>{"a", "b"}));
  EXPECT_EQ(stream.unacked(), 2);
  EXPECT_TRUE(stream.Read().empty());  // "c" waits for credit
  ASSERT_EQ(stream.AckOnStream("a", true).code, GrpcCode::kOk);
  EXPECT_EQ(Ids(stream.Read()), std::vector<std::string>{"c"});
  EXPECT_EQ(stream.AckOnStream("zz", true).code, GrpcCode::kNotFound);
}

TEST_F(GrpcShapeTest, MessagesAreStreamedAsTheyBecomeConsumable) {
  DelayQueueHandlers::ConsumeStream stream(service_.get(), "t", 30'000, 10);
  core::Message m;
  bool existing = false;
  ASSERT_EQ(api_().Send(SendProto{"t", "later", "x", 1'000, {}, {}}, &m, &existing).code,
            GrpcCode::kOk);
  sched_.Advance(Millis(999));
  EXPECT_TRUE(stream.Read().empty());
  sched_.Advance(Millis(1));  // its trigger time: on the stream at once, not at the next scan
  EXPECT_EQ(Ids(stream.Read()), std::vector<std::string>{"later"});
}

TEST_F(GrpcShapeTest, ABrokenStreamReturnsItsUnackedMessagesAtTheirAckDeadline) {
  auto stream = std::make_unique<DelayQueueHandlers::ConsumeStream>(service_.get(), "t", 5'000, 10);
  SendNow("a");
  EXPECT_EQ(Ids(stream->Read()), std::vector<std::string>{"a"});
  stream.reset();  // the client's connection breaks
  DelayQueueHandlers::ConsumeStream next(service_.get(), "t", 5'000, 10);
  sched_.Advance(Millis(4'999));
  EXPECT_TRUE(next.Read().empty());
  sched_.Advance(Millis(1));
  std::vector<core::Message> again = next.Read();
  ASSERT_EQ(Ids(again), std::vector<std::string>{"a"});
  EXPECT_EQ(again[0].record.retry, 2);  // its second delivery
}

}  // namespace
}  // namespace chronoq::service
