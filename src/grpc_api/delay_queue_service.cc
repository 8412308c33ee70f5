// chronoq.v1.DelayQueue on gRPC's callback API (no thread waits on a call): each unary method is
// unary_methods.h's (decode, one QueueService call, encode; an error is the service's Status as a
// gRPC status, its sentence as the message), finished through the call's reactor. Pull with
// wait_millis parks like longPollingMsg and takes nothing once the client is gone (its deadline
// passed or it cancelled). Consume is consume.cc's.
#include <grpcpp/grpcpp.h>
#include <grpcpp/support/server_callback.h>

#include <atomic>
#include <chrono>
#include <memory>

#include "base/mutex.h"
#include "chronoq/v1/delay_queue.grpc.pb.h"
#include "grpc_api/api_context.h"
#include "grpc_api/unary_methods.h"

namespace chronoq::grpc_api {
namespace {

using grpc::CallbackServerContext;
using grpc::ServerUnaryReactor;

// A waiting Pull takes no message this close to its deadline.
constexpr std::chrono::milliseconds kDeadlineMargin{20};

// The engine-neutral call (unary_methods.h) of a gRPC callback call, finished through `reactor`.
UnaryCall MakeCall(const ApiContext* api, CallbackServerContext* ctx, ServerUnaryReactor* reactor,
                   Method m) {
  UnaryCall c;
  c.api = api;
  c.method = m;
  if (auto header = AuthorizationOf(api, ctx)) c.authorization = std::string(*header);
  c.finish = [reactor](int code, std::string message) {
    reactor->Finish(code == 0 ? grpc::Status::OK
                              : grpc::Status(static_cast<grpc::StatusCode>(code), message));
  };
  return c;
}

// A Pull that waits (wait_millis set): its parked long poll is cancelled when the client goes.
class LongPollReactor final : public ServerUnaryReactor {
 public:
  LongPollReactor(const ApiContext* api, CallbackServerContext* ctx, const v1::PullRequest* req,
                  v1::PullResponse* resp)
      : api_(api), state_(std::make_shared<State>()) {
    std::shared_ptr<State> state = state_;
    // From here on only `state` is touched: the answer may come inline, and then gRPC may
    // delete this reactor at any time.
    // Messages taken for a client whose deadline is (about to be) past would reach nobody and
    // wait for their ack deadline: a client gone or nearly out of time takes nothing. (gRPC
    // cancels the call at the deadline, but asynchronously.)
    const auto deadline = ctx->deadline() - kDeadlineMargin;
    service::LongPollTicket ticket = unary::LongPull(
        MakeCall(api, ctx, this, Method::kPull), *req, resp,
        [weak = std::weak_ptr<State>(state), deadline] {  // weak: the state holds the ticket
          std::shared_ptr<State> s = weak.lock();
          return s != nullptr && !s->gone.load() && std::chrono::system_clock::now() < deadline;
        });
    base::MutexLock lock(state->mu);
    state->ticket = std::move(ticket);
  }

  void OnCancel() override {
    state_->gone.store(true);
    service::LongPollTicket ticket;
    {
      base::MutexLock lock(state_->mu);
      ticket = state_->ticket;
    }
    api_->service->CancelLongPoll(ticket);
  }
  void OnDone() override { delete this; }

 private:
  struct State {
    std::atomic<bool> gone{false};
    base::Mutex mu;
    service::LongPollTicket ticket CQ_GUARDED_BY(mu);
  };
  const ApiContext* api_;
  std::shared_ptr<State> state_;
};

// Every method is unary_methods.h's over the callback API's reactor, but Consume's and Pull's
// with wait_millis.
class DelayQueueService final : public v1::DelayQueue::CallbackService {
 public:
  explicit DelayQueueService(ApiContext* api) : api_(api) {}

#define CQ_UNARY(Name, Req, Resp)                                                             \
  ServerUnaryReactor* Name(CallbackServerContext* ctx, const Req* req, Resp* resp) override { \
    ServerUnaryReactor* reactor = ctx->DefaultReactor();                                      \
    unary::Name(MakeCall(api_, ctx, reactor, Method::k##Name), *req, resp);                   \
    return reactor;                                                                           \
  }
  CQ_UNARY(Send, v1::SendRequest, v1::SendResponse)
  CQ_UNARY(SendBatch, v1::SendBatchRequest, v1::SendBatchResponse)
  CQ_UNARY(Get, v1::MessageRef, v1::Message)
  CQ_UNARY(GetMsgHistory, v1::MessageRef, v1::MsgHistory)
  CQ_UNARY(Delete, v1::DeleteRequest, v1::DeleteResponse)
  CQ_UNARY(Update, v1::UpdateRequest, v1::Message)
  CQ_UNARY(Touch, v1::TouchRequest, v1::Message)
  CQ_UNARY(Count, v1::CountRequest, v1::Message)
  CQ_UNARY(List, v1::ListRequest, v1::ListResponse)
  CQ_UNARY(Ack, v1::AckRequest, v1::AckResponse)
  CQ_UNARY(TopicInfo, v1::TopicRef, v1::TopicInfoResponse)
  CQ_UNARY(ListTopics, v1::ListTopicsRequest, v1::ListTopicsResponse)
  CQ_UNARY(GetTopicConfig, v1::TopicRef, v1::TopicConfig)
  CQ_UNARY(SetTopicConfig, v1::TopicConfig, v1::TopicConfig)
  CQ_UNARY(DeleteTopicConfig, v1::TopicRef, v1::DeleteResponse)
  CQ_UNARY(Purge, v1::PurgeRequest, v1::CountResponse)
  CQ_UNARY(Redrive, v1::RedriveRequest, v1::CountResponse)
  CQ_UNARY(GetMonitorData, v1::GetMonitorDataRequest, v1::MonitorData)
#undef CQ_UNARY

  ServerUnaryReactor* Pull(CallbackServerContext* ctx, const v1::PullRequest* req,
                           v1::PullResponse* resp) override {
    if (req->has_wait_millis()) return new LongPollReactor(api_, ctx, req, resp);
    ServerUnaryReactor* reactor = ctx->DefaultReactor();
    unary::Pull(MakeCall(api_, ctx, reactor, Method::kPull), *req, resp);
    return reactor;
  }

  grpc::ServerBidiReactor<v1::ConsumeRequest, v1::ConsumeResponse>* Consume(
      CallbackServerContext* ctx) override {
    return NewConsumeReactor(api_, ctx);
  }

 private:
  ApiContext* const api_;
};

}  // namespace

std::unique_ptr<grpc::Service> NewDelayQueueService(ApiContext* ctx) {
  return std::make_unique<DelayQueueService>(ctx);
}

}  // namespace chronoq::grpc_api
