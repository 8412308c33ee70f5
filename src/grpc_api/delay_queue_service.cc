// chronoq.v1.DelayQueue's unary methods (the callback API: no thread waits on a call). Each
// decodes its request (convert.h), makes the one QueueService call HTTP makes for the same
// operation and encodes the answer; an error is the service's Status as a gRPC status (its
// sentence as the message). Pull with wait_millis parks like longPollingMsg and takes nothing
// once the client is gone (its deadline passed or it cancelled). Consume is consume.cc's.
#include <fmt/format.h>
#include <grpcpp/grpcpp.h>
#include <grpcpp/support/server_callback.h>

#include <atomic>
#include <chrono>
#include <memory>

#include "base/mutex.h"
#include "chronoq/v1/delay_queue.grpc.pb.h"
#include "grpc_api/api_context.h"
#include "grpc_api/convert.h"

namespace chronoq::grpc_api {
namespace {

using grpc::CallbackServerContext;
using grpc::ServerUnaryReactor;

// A waiting Pull takes no message this close to its deadline.
constexpr std::chrono::milliseconds kDeadlineMargin{20};

// One unary call: finishes its reactor and records the call's figures.
class Call {
 public:
  Call(ServerUnaryReactor* reactor, MethodStats* stats, Method m)
      : reactor_(reactor), stats_(stats), method_(m), start_(std::chrono::steady_clock::now()) {}
  Call(CallbackServerContext* ctx, const ApiContext* api, Method m)
      : Call(ctx->DefaultReactor(), api->stats, m) {}

  void Ok() const { Finish(grpc::Status::OK); }
  void Fail(const Status& s) const {
    Finish(grpc::Status(static_cast<grpc::StatusCode>(GrpcCode(s.code())), s.message()));
  }
  void Finish(grpc::Status s) const {
    stats_->Record(method_, s.error_code(),
                   std::chrono::duration_cast<std::chrono::nanoseconds>(
                       std::chrono::steady_clock::now() - start_)
                       .count());
    reactor_->Finish(std::move(s));
  }
  ServerUnaryReactor* reactor() const { return reactor_; }

  // The answer of a service call that yields `T`: `encode(value)`, then OK; or the error.
  template <typename T, typename Encode>
  backend::Callback<Result<T>> Answer(Encode encode) const {
    return [call = *this, encode = std::move(encode)](Result<T> r) mutable {
      if (!r.has_value()) return call.Fail(r.error());
      encode(*r);
      call.Ok();
    };
  }
  backend::Callback<Status> StatusAnswer() const {
    return [call = *this](Status s) { s.ok() ? call.Ok() : call.Fail(s); };
  }

 private:
  ServerUnaryReactor* reactor_;
  MethodStats* stats_;
  Method method_;
  std::chrono::steady_clock::time_point start_;
};

// A Pull that waits (wait_millis set): its parked long poll is cancelled when the client goes.
class LongPollReactor final : public ServerUnaryReactor {
 public:
  LongPollReactor(const ApiContext* api, CallbackServerContext* ctx, const v1::PullRequest* req,
                  v1::PullResponse* resp)
      : api_(api), state_(std::make_shared<State>()) {
    Call call(this, api->stats, Method::kPull);
    auth::Decision admitted = Authenticate(api, ctx, auth::Operation::kLongPoll);
    if (admitted.verdict != auth::Verdict::kAllowed) {
      call.Finish(grpc::Status(static_cast<grpc::StatusCode>(RefusalCode(admitted.verdict)),
                               admitted.message));
      return;
    }
    service::LongPollRequest lp;
    lp.pull.topic = req->topic();
    if (req->has_batch()) lp.pull.batch = req->batch();
    if (req->has_ack_timeout_millis()) lp.pull.ack_timeout_millis = req->ack_timeout_millis();
    lp.timeout_millis = req->wait_millis();
    std::shared_ptr<State> state = state_;
    // From here on only `state` is touched: the answer may come inline, and then gRPC may
    // delete this reactor at any time.
    // Messages taken for a client whose deadline is (about to be) past would reach nobody and
    // wait for their ack deadline: a client gone or nearly out of time takes nothing. (gRPC
    // cancels the call at the deadline, but asynchronously.)
    const auto deadline = ctx->deadline() - kDeadlineMargin;
    service::LongPollTicket ticket =
        service::Session(api->service, admitted.caller)
            .LongPoll(
                std::move(lp),
                [weak = std::weak_ptr<State>(state),
                 deadline] {  // weak: the state holds the ticket
                  std::shared_ptr<State> s = weak.lock();
                  return s != nullptr && !s->gone.load() &&
                         std::chrono::system_clock::now() < deadline;
                },
                call.Answer<service::Messages>([resp](service::Messages& list) {
                  for (const core::Message& m : list) ToProto(m, resp->add_messages());
                }));
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

class DelayQueueService final : public v1::DelayQueue::CallbackService {
 public:
  explicit DelayQueueService(ApiContext* api) : api_(api), svc_(api->service) {}

  // The service as the call's caller sees it (service/session.h), or nullopt when the call is
  // refused (401/403's gRPC twins, finished here).
  std::optional<service::Session> Admit(CallbackServerContext* ctx, const Call& call,
                                        auth::Operation op) const {
    auth::Decision d = Authenticate(api_, ctx, op);
    if (d.verdict != auth::Verdict::kAllowed) {
      call.Finish(grpc::Status(static_cast<grpc::StatusCode>(RefusalCode(d.verdict)), d.message));
      return std::nullopt;
    }
    return service::Session(svc_, d.caller);
  }

  ServerUnaryReactor* Send(CallbackServerContext* ctx, const v1::SendRequest* req,
                           v1::SendResponse* resp) override {
    Call call(ctx, api_, Method::kSend);
    auto svc = Admit(ctx, call, auth::Operation::kSend);
    if (!svc) return call.reactor();
    Status unreadable;
    service::SendRequest s = FromProto(*req, &unreadable);
    if (!unreadable.ok()) {
      call.Fail(unreadable);
      return call.reactor();
    }
    svc->Send(std::move(s), call.Answer<backend::Sent>([resp](backend::Sent& sent) {
      ToProto(sent.message, resp->mutable_message());
      resp->set_existing(sent.existing);
    }));
    return call.reactor();
  }

  ServerUnaryReactor* SendBatch(CallbackServerContext* ctx, const v1::SendBatchRequest* req,
                                v1::SendBatchResponse* resp) override {
    Call call(ctx, api_, Method::kSendBatch);
    auto svc = Admit(ctx, call, auth::Operation::kSendBatch);
    if (!svc) return call.reactor();
    if (Status size = svc->CheckSendBatchSize(static_cast<size_t>(req->msgs_size())); !size.ok()) {
      call.Fail(size);
      return call.reactor();
    }
    service::SendBatchRequest batch;
    batch.topic = req->topic();
    batch.unreadable.resize(static_cast<size_t>(req->msgs_size()));
    for (int i = 0; i < req->msgs_size(); ++i) {
      batch.msgs.push_back(FromProtoItem(req->msgs(i), batch.topic, &batch.unreadable[i]));
    }
    using Items = std::vector<Result<backend::Sent>>;
    svc->SendBatch(std::move(batch), call.Answer<Items>([resp](Items& items) {
      for (size_t i = 0; i < items.size(); ++i) {
        v1::ItemResult* out = resp->add_results();
        if (items[i].has_value()) {
          ToProto(items[i]->message, out->mutable_message());
          out->set_existing(items[i]->existing);
        } else {
          // HTTP's sentence for the item (handlers_manage.cc).
          out->set_code(GrpcCode(items[i].error().code()));
          out->set_msg(fmt::format("msgs[{}]: {}", i, items[i].error().message()));
        }
      }
    }));
    return call.reactor();
  }

  ServerUnaryReactor* Get(CallbackServerContext* ctx, const v1::MessageRef* req,
                          v1::Message* resp) override {
    Call call(ctx, api_, Method::kGet);
    auto svc = Admit(ctx, call, auth::Operation::kGet);
    if (!svc) return call.reactor();
    svc->Get(service::MessageRef{req->topic(), req->msg_id()}, MessageAnswer(call, resp));
    return call.reactor();
  }

  ServerUnaryReactor* GetMsgHistory(CallbackServerContext* ctx, const v1::MessageRef* req,
                                    v1::MsgHistory* resp) override {
    Call call(ctx, api_, Method::kGetMsgHistory);
    auto svc = Admit(ctx, call, auth::Operation::kHistory);
    if (!svc) return call.reactor();
    using Entries = std::vector<core::HistoryEntry>;
    svc->GetMsgHistory(service::MessageRef{req->topic(), req->msg_id()},
                       call.Answer<Entries>([resp](Entries& entries) {
                         for (const core::HistoryEntry& e : entries) {
                           v1::HistoryEntry* out = resp->add_entries();
                           out->set_time(ToEpochMs(e.time));
                           out->set_node(e.node);
                           out->set_event(std::string(core::HistoryEventName(e.event)));
                           out->set_attempt(e.attempt);
                           out->set_reason(e.reason);
                         }
                       }));
    return call.reactor();
  }

  ServerUnaryReactor* Delete(CallbackServerContext* ctx, const v1::DeleteRequest* req,
                             v1::DeleteResponse*) override {
    Call call(ctx, api_, Method::kDelete);
    auto svc = Admit(ctx, call, auth::Operation::kDelete);
    if (!svc) return call.reactor();
    svc->Delete(service::DeleteRequest{{req->topic(), req->msg_id()}, req->release()},
                call.StatusAnswer());
    return call.reactor();
  }

  ServerUnaryReactor* Update(CallbackServerContext* ctx, const v1::UpdateRequest* req,
                             v1::Message* resp) override {
    Call call(ctx, api_, Method::kUpdate);
    auto svc = Admit(ctx, call, auth::Operation::kUpdate);
    if (!svc) return call.reactor();
    service::UpdateRequest u;
    u.ref = {req->topic(), req->msg_id()};
    if (req->has_delay_millis()) u.delay_millis = req->delay_millis();
    if (req->has_trigger_time()) u.trigger_time = req->trigger_time();
    if (req->has_msg()) u.msg = req->msg();
    if (req->has_ttl_millis()) u.ttl_millis = req->ttl_millis();
    if (req->has_max_retry()) u.max_retry = req->max_retry();
    if (req->has_priority()) u.priority = req->priority();
    svc->Update(std::move(u), MessageAnswer(call, resp));
    return call.reactor();
  }

  ServerUnaryReactor* Touch(CallbackServerContext* ctx, const v1::TouchRequest* req,
                            v1::Message* resp) override {
    Call call(ctx, api_, Method::kTouch);
    auto svc = Admit(ctx, call, auth::Operation::kTouch);
    if (!svc) return call.reactor();
    service::TouchRequest t{{req->topic(), req->msg_id()}};
    if (req->has_ack_timeout_millis()) t.ack_timeout_millis = req->ack_timeout_millis();
    svc->Touch(std::move(t), MessageAnswer(call, resp));
    return call.reactor();
  }

  ServerUnaryReactor* Count(CallbackServerContext* ctx, const v1::CountRequest* req,
                            v1::Message* resp) override {
    Call call(ctx, api_, Method::kCount);
    auto svc = Admit(ctx, call, auth::Operation::kCount);
    if (!svc) return call.reactor();
    service::CountRequest c{{req->topic(), req->msg_id()}};
    if (req->has_count()) c.count = req->count();
    svc->Count(std::move(c), MessageAnswer(call, resp));
    return call.reactor();
  }

  ServerUnaryReactor* List(CallbackServerContext* ctx, const v1::ListRequest* req,
                           v1::ListResponse* resp) override {
    Call call(ctx, api_, Method::kList);
    auto svc = Admit(ctx, call, auth::Operation::kList);
    if (!svc) return call.reactor();
    service::ListRequest l;
    l.topic = req->topic();
    if (req->has_status()) l.status = req->status();
    if (req->has_limit()) l.limit = req->limit();
    l.cursor = req->cursor();
    svc->List(std::move(l), call.Answer<backend::ListPage>([resp](backend::ListPage& page) {
      for (const core::Message& m : page.messages) ToProto(m, resp->add_messages());
      resp->set_next_cursor(page.next_cursor);
    }));
    return call.reactor();
  }

  ServerUnaryReactor* Pull(CallbackServerContext* ctx, const v1::PullRequest* req,
                           v1::PullResponse* resp) override {
    if (req->has_wait_millis()) return new LongPollReactor(api_, ctx, req, resp);
    Call call(ctx, api_, Method::kPull);
    auto svc = Admit(ctx, call, auth::Operation::kPull);
    if (!svc) return call.reactor();
    service::PullRequest p;
    p.topic = req->topic();
    if (req->has_batch()) p.batch = req->batch();
    if (req->has_ack_timeout_millis()) p.ack_timeout_millis = req->ack_timeout_millis();
    svc->Pull(std::move(p), call.Answer<service::Messages>([resp](service::Messages& list) {
      for (const core::Message& m : list) ToProto(m, resp->add_messages());
    }));
    return call.reactor();
  }

  ServerUnaryReactor* Ack(CallbackServerContext* ctx, const v1::AckRequest* req,
                          v1::AckResponse* resp) override {
    Call call(ctx, api_, Method::kAck);
    auto svc = Admit(ctx, call, auth::Operation::kAckBatch);
    if (!svc) return call.reactor();
    using Results = std::vector<service::AckResult>;
    svc->AckBatch(FromProto(*req),
                  call.Answer<Results>([resp](Results& results) { ToProto(results, resp); }));
    return call.reactor();
  }

  ServerUnaryReactor* TopicInfo(CallbackServerContext* ctx, const v1::TopicRef* req,
                                v1::TopicInfoResponse* resp) override {
    Call call(ctx, api_, Method::kTopicInfo);
    auto svc = Admit(ctx, call, auth::Operation::kTopicInfo);
    if (!svc) return call.reactor();
    svc->GetTopicInfo(req->topic(), call.Answer<core::TopicInfo>(
                                        [resp](core::TopicInfo& t) { ToProto(t, resp); }));
    return call.reactor();
  }

  ServerUnaryReactor* ListTopics(CallbackServerContext* ctx, const v1::ListTopicsRequest*,
                                 v1::ListTopicsResponse* resp) override {
    Call call(ctx, api_, Method::kListTopics);
    auto svc = Admit(ctx, call, auth::Operation::kTopicInfo);
    if (!svc) return call.reactor();
    using Infos = std::vector<core::TopicInfo>;
    svc->ListTopics(call.Answer<Infos>([resp](Infos& all) {
      for (const core::TopicInfo& t : all) ToProto(t, resp->add_topics());
    }));
    return call.reactor();
  }

  ServerUnaryReactor* GetTopicConfig(CallbackServerContext* ctx, const v1::TopicRef* req,
                                     v1::TopicConfig* resp) override {
    Call call(ctx, api_, Method::kGetTopicConfig);
    auto svc = Admit(ctx, call, auth::Operation::kReadTopicConfig);
    if (!svc) return call.reactor();
    svc->GetTopicConfig(req->topic(), ConfigAnswer(call, resp));
    return call.reactor();
  }

  ServerUnaryReactor* SetTopicConfig(CallbackServerContext* ctx, const v1::TopicConfig* req,
                                     v1::TopicConfig* resp) override {
    Call call(ctx, api_, Method::kSetTopicConfig);
    auto svc = Admit(ctx, call, auth::Operation::kWriteTopicConfig);
    if (!svc) return call.reactor();
    Result<service::TopicConfigRequest> c = FromProto(*req);
    if (!c.has_value()) {
      call.Fail(c.error());
      return call.reactor();
    }
    svc->SetTopicConfig(std::move(*c), ConfigAnswer(call, resp));
    return call.reactor();
  }

  ServerUnaryReactor* DeleteTopicConfig(CallbackServerContext* ctx, const v1::TopicRef* req,
                                        v1::DeleteResponse*) override {
    Call call(ctx, api_, Method::kDeleteTopicConfig);
    auto svc = Admit(ctx, call, auth::Operation::kWriteTopicConfig);
    if (!svc) return call.reactor();
    svc->DeleteTopicConfig(req->topic(), call.StatusAnswer());
    return call.reactor();
  }

  ServerUnaryReactor* Purge(CallbackServerContext* ctx, const v1::PurgeRequest* req,
                            v1::CountResponse* resp) override {
    Call call(ctx, api_, Method::kPurge);
    auto svc = Admit(ctx, call, auth::Operation::kPurge);
    if (!svc) return call.reactor();
    service::PurgeRequest p{req->topic()};
    if (req->has_status()) p.status = req->status();
    svc->Purge(std::move(p), CountAnswer(call, resp));
    return call.reactor();
  }

  ServerUnaryReactor* Redrive(CallbackServerContext* ctx, const v1::RedriveRequest* req,
                              v1::CountResponse* resp) override {
    Call call(ctx, api_, Method::kRedrive);
    auto svc = Admit(ctx, call, auth::Operation::kRedrive);
    if (!svc) return call.reactor();
    service::RedriveRequest d{req->topic()};
    if (req->has_msg_id()) d.msg_id = req->msg_id();
    if (req->has_limit()) d.limit = req->limit();
    if (req->has_delay_millis()) d.delay_millis = req->delay_millis();
    svc->Redrive(std::move(d), CountAnswer(call, resp));
    return call.reactor();
  }

  ServerUnaryReactor* GetMonitorData(CallbackServerContext* ctx, const v1::GetMonitorDataRequest*,
                                     v1::MonitorData* resp) override {
    Call call(ctx, api_, Method::kGetMonitorData);
    if (!Admit(ctx, call, auth::Operation::kMonitorData)) return call.reactor();
    ToProto(svc_->MonitorData(), resp);
    call.Ok();
    return call.reactor();
  }

  grpc::ServerBidiReactor<v1::ConsumeRequest, v1::ConsumeResponse>* Consume(
      CallbackServerContext* ctx) override {
    return NewConsumeReactor(api_, ctx);
  }

 private:
  static backend::Callback<Result<core::Message>> MessageAnswer(const Call& call,
                                                                v1::Message* resp) {
    return call.Answer<core::Message>([resp](core::Message& m) { ToProto(m, resp); });
  }
  static backend::Callback<Result<service::TopicConfigView>> ConfigAnswer(const Call& call,
                                                                          v1::TopicConfig* resp) {
    return call.Answer<service::TopicConfigView>(
        [resp](service::TopicConfigView& v) { ToProto(v, resp); });
  }
  static backend::Callback<Result<int64_t>> CountAnswer(const Call& call, v1::CountResponse* resp) {
    return call.Answer<int64_t>([resp](int64_t& n) { resp->set_count(n); });
  }

  ApiContext* const api_;
  service::QueueService* const svc_;
};

}  // namespace

std::unique_ptr<grpc::Service> NewDelayQueueService(ApiContext* ctx) {
  return std::make_unique<DelayQueueService>(ctx);
}

}  // namespace chronoq::grpc_api
