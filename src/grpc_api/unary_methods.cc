// The unary methods (unary_methods.h): decode, admit, one service call, encode, finish.
#include "grpc_api/unary_methods.h"

#include <fmt/format.h>

#include <chrono>
#include <utility>

#include "chronoq/v1/delay_queue.pb.h"
#include "grpc_api/convert.h"
#include "service/session.h"

namespace chronoq::grpc_api::unary {
namespace {

// One unary call: finishes it and records its figures. Moved into the service's callback.
class Call {
 public:
  explicit Call(UnaryCall c) : c_(std::move(c)), start_(std::chrono::steady_clock::now()) {}
  Call(Call&&) = default;

  void Ok() { Finish(0, {}); }
  void Fail(const Status& s) { Finish(GrpcCode(s.code()), s.message()); }
  void Finish(int code, std::string message) {
    c_.api->stats->Record(c_.method, code,
                          std::chrono::duration_cast<std::chrono::nanoseconds>(
                              std::chrono::steady_clock::now() - start_)
                              .count());
    c_.finish(code, std::move(message));
  }

  // The service as the call's caller sees it (service/session.h), or nullopt when the call is
  // refused (401/403's gRPC twins: the call is finished).
  std::optional<service::Session> Admit(auth::Operation op) {
    std::optional<std::string_view> header;
    if (c_.authorization) header = *c_.authorization;
    auth::Decision d = AuthenticateHeader(c_.api, header, op);
    if (d.verdict != auth::Verdict::kAllowed) {
      Finish(RefusalCode(d.verdict), d.message);
      return std::nullopt;
    }
    return service::Session(c_.api->service, d.caller);
  }
  service::QueueService* service() const { return c_.api->service; }

  // The answer of a service call that yields `T`: `encode(value)`, then OK; or the error.
  template <typename T, typename Encode>
  backend::Callback<Result<T>> Answer(Encode encode) && {
    return [call = std::move(*this), encode = std::move(encode)](Result<T> r) mutable {
      if (!r.has_value()) return call.Fail(r.error());
      encode(*r);
      call.Ok();
    };
  }
  backend::Callback<Status> StatusAnswer() && {
    return [call = std::move(*this)](Status s) mutable { s.ok() ? call.Ok() : call.Fail(s); };
  }

 private:
  UnaryCall c_;
  std::chrono::steady_clock::time_point start_;
};

backend::Callback<Result<core::Message>> MessageAnswer(Call call, v1::Message* resp) {
  return std::move(call).Answer<core::Message>([resp](core::Message& m) { ToProto(m, resp); });
}
backend::Callback<Result<service::TopicConfigView>> ConfigAnswer(Call call, v1::TopicConfig* resp) {
  return std::move(call).Answer<service::TopicConfigView>(
      [resp](service::TopicConfigView& v) { ToProto(v, resp); });
}
backend::Callback<Result<int64_t>> CountAnswer(Call call, v1::CountResponse* resp) {
  return std::move(call).Answer<int64_t>([resp](int64_t& n) { resp->set_count(n); });
}

}  // namespace

void Send(UnaryCall c, const v1::SendRequest& req, v1::SendResponse* resp) {
  Call call(std::move(c));
  auto svc = call.Admit(auth::Operation::kSend);
  if (!svc) return;
  Status unreadable;
  service::SendRequest s = FromProto(req, &unreadable);
  if (!unreadable.ok()) return call.Fail(unreadable);
  svc->Send(std::move(s), std::move(call).Answer<backend::Sent>([resp](backend::Sent& sent) {
    ToProto(sent.message, resp->mutable_message());
    resp->set_existing(sent.existing);
  }));
}

void SendBatch(UnaryCall c, const v1::SendBatchRequest& req, v1::SendBatchResponse* resp) {
  Call call(std::move(c));
  auto svc = call.Admit(auth::Operation::kSendBatch);
  if (!svc) return;
  if (Status size = svc->CheckSendBatchSize(static_cast<size_t>(req.msgs_size())); !size.ok()) {
    return call.Fail(size);
  }
  service::SendBatchRequest batch;
  batch.topic = req.topic();
  batch.unreadable.resize(static_cast<size_t>(req.msgs_size()));
  for (int i = 0; i < req.msgs_size(); ++i) {
    batch.msgs.push_back(FromProtoItem(req.msgs(i), batch.topic, &batch.unreadable[i]));
  }
  using Items = std::vector<Result<backend::Sent>>;
  svc->SendBatch(std::move(batch), std::move(call).Answer<Items>([resp](Items& items) {
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
}

void Get(UnaryCall c, const v1::MessageRef& req, v1::Message* resp) {
  Call call(std::move(c));
  auto svc = call.Admit(auth::Operation::kGet);
  if (!svc) return;
  svc->Get(service::MessageRef{req.topic(), req.msg_id()}, MessageAnswer(std::move(call), resp));
}

void GetMsgHistory(UnaryCall c, const v1::MessageRef& req, v1::MsgHistory* resp) {
  Call call(std::move(c));
  auto svc = call.Admit(auth::Operation::kHistory);
  if (!svc) return;
  using Entries = std::vector<core::HistoryEntry>;
  svc->GetMsgHistory(service::MessageRef{req.topic(), req.msg_id()},
                     std::move(call).Answer<Entries>([resp](Entries& entries) {
                       for (const core::HistoryEntry& e : entries) {
                         v1::HistoryEntry* out = resp->add_entries();
                         out->set_time(ToEpochMs(e.time));
                         out->set_node(e.node);
                         out->set_event(std::string(core::HistoryEventName(e.event)));
                         out->set_attempt(e.attempt);
                         out->set_reason(e.reason);
                       }
                     }));
}

void Delete(UnaryCall c, const v1::DeleteRequest& req, v1::DeleteResponse*) {
  Call call(std::move(c));
  auto svc = call.Admit(auth::Operation::kDelete);
  if (!svc) return;
  svc->Delete(service::DeleteRequest{{req.topic(), req.msg_id()}, req.release()},
              std::move(call).StatusAnswer());
}

void Update(UnaryCall c, const v1::UpdateRequest& req, v1::Message* resp) {
  Call call(std::move(c));
  auto svc = call.Admit(auth::Operation::kUpdate);
  if (!svc) return;
  service::UpdateRequest u;
  u.ref = {req.topic(), req.msg_id()};
  if (req.has_delay_millis()) u.delay_millis = req.delay_millis();
  if (req.has_trigger_time()) u.trigger_time = req.trigger_time();
  if (req.has_msg()) u.msg = req.msg();
  if (req.has_ttl_millis()) u.ttl_millis = req.ttl_millis();
  if (req.has_max_retry()) u.max_retry = req.max_retry();
  if (req.has_priority()) u.priority = req.priority();
  svc->Update(std::move(u), MessageAnswer(std::move(call), resp));
}

void Touch(UnaryCall c, const v1::TouchRequest& req, v1::Message* resp) {
  Call call(std::move(c));
  auto svc = call.Admit(auth::Operation::kTouch);
  if (!svc) return;
  service::TouchRequest t{{req.topic(), req.msg_id()}};
  if (req.has_ack_timeout_millis()) t.ack_timeout_millis = req.ack_timeout_millis();
  svc->Touch(std::move(t), MessageAnswer(std::move(call), resp));
}

void Count(UnaryCall c, const v1::CountRequest& req, v1::Message* resp) {
  Call call(std::move(c));
  auto svc = call.Admit(auth::Operation::kCount);
  if (!svc) return;
  service::CountRequest n{{req.topic(), req.msg_id()}};
  if (req.has_count()) n.count = req.count();
  svc->Count(std::move(n), MessageAnswer(std::move(call), resp));
}

void List(UnaryCall c, const v1::ListRequest& req, v1::ListResponse* resp) {
  Call call(std::move(c));
  auto svc = call.Admit(auth::Operation::kList);
  if (!svc) return;
  service::ListRequest l;
  l.topic = req.topic();
  if (req.has_status()) l.status = req.status();
  if (req.has_limit()) l.limit = req.limit();
  l.cursor = req.cursor();
  svc->List(std::move(l),
            std::move(call).Answer<backend::ListPage>([resp](backend::ListPage& page) {
              for (const core::Message& m : page.messages) ToProto(m, resp->add_messages());
              resp->set_next_cursor(page.next_cursor);
            }));
}

void Pull(UnaryCall c, const v1::PullRequest& req, v1::PullResponse* resp) {
  Call call(std::move(c));
  auto svc = call.Admit(auth::Operation::kPull);
  if (!svc) return;
  service::PullRequest p;
  p.topic = req.topic();
  if (req.has_batch()) p.batch = req.batch();
  if (req.has_ack_timeout_millis()) p.ack_timeout_millis = req.ack_timeout_millis();
  svc->Pull(std::move(p),
            std::move(call).Answer<service::Messages>([resp](service::Messages& list) {
              for (const core::Message& m : list) ToProto(m, resp->add_messages());
            }));
}

service::LongPollTicket LongPull(UnaryCall c, const v1::PullRequest& req, v1::PullResponse* resp,
                                 std::function<bool()> alive) {
  Call call(std::move(c));
  auto svc = call.Admit(auth::Operation::kLongPoll);
  if (!svc) return {};
  service::LongPollRequest lp;
  lp.pull.topic = req.topic();
  if (req.has_batch()) lp.pull.batch = req.batch();
  if (req.has_ack_timeout_millis()) lp.pull.ack_timeout_millis = req.ack_timeout_millis();
  lp.timeout_millis = req.wait_millis();
  return svc->LongPoll(std::move(lp), std::move(alive),
                       std::move(call).Answer<service::Messages>([resp](service::Messages& list) {
                         for (const core::Message& m : list) ToProto(m, resp->add_messages());
                       }));
}

void Ack(UnaryCall c, const v1::AckRequest& req, v1::AckResponse* resp) {
  Call call(std::move(c));
  auto svc = call.Admit(auth::Operation::kAckBatch);
  if (!svc) return;
  using Results = std::vector<service::AckResult>;
  svc->AckBatch(FromProto(req), std::move(call).Answer<Results>(
                                    [resp](Results& results) { ToProto(results, resp); }));
}

void TopicInfo(UnaryCall c, const v1::TopicRef& req, v1::TopicInfoResponse* resp) {
  Call call(std::move(c));
  auto svc = call.Admit(auth::Operation::kTopicInfo);
  if (!svc) return;
  svc->GetTopicInfo(req.topic(), std::move(call).Answer<core::TopicInfo>(
                                     [resp](core::TopicInfo& t) { ToProto(t, resp); }));
}

void ListTopics(UnaryCall c, const v1::ListTopicsRequest&, v1::ListTopicsResponse* resp) {
  Call call(std::move(c));
  auto svc = call.Admit(auth::Operation::kTopicInfo);
  if (!svc) return;
  using Infos = std::vector<core::TopicInfo>;
  svc->ListTopics(std::move(call).Answer<Infos>([resp](Infos& all) {
    for (const core::TopicInfo& t : all) ToProto(t, resp->add_topics());
  }));
}

void GetTopicConfig(UnaryCall c, const v1::TopicRef& req, v1::TopicConfig* resp) {
  Call call(std::move(c));
  auto svc = call.Admit(auth::Operation::kReadTopicConfig);
  if (!svc) return;
  svc->GetTopicConfig(req.topic(), ConfigAnswer(std::move(call), resp));
}

void SetTopicConfig(UnaryCall c, const v1::TopicConfig& req, v1::TopicConfig* resp) {
  Call call(std::move(c));
  auto svc = call.Admit(auth::Operation::kWriteTopicConfig);
  if (!svc) return;
  Result<service::TopicConfigRequest> config = FromProto(req);
  if (!config.has_value()) return call.Fail(config.error());
  svc->SetTopicConfig(std::move(*config), ConfigAnswer(std::move(call), resp));
}

void DeleteTopicConfig(UnaryCall c, const v1::TopicRef& req, v1::DeleteResponse*) {
  Call call(std::move(c));
  auto svc = call.Admit(auth::Operation::kWriteTopicConfig);
  if (!svc) return;
  svc->DeleteTopicConfig(req.topic(), std::move(call).StatusAnswer());
}

void Purge(UnaryCall c, const v1::PurgeRequest& req, v1::CountResponse* resp) {
  Call call(std::move(c));
  auto svc = call.Admit(auth::Operation::kPurge);
  if (!svc) return;
  service::PurgeRequest p{req.topic()};
  if (req.has_status()) p.status = req.status();
  svc->Purge(std::move(p), CountAnswer(std::move(call), resp));
}

void Redrive(UnaryCall c, const v1::RedriveRequest& req, v1::CountResponse* resp) {
  Call call(std::move(c));
  auto svc = call.Admit(auth::Operation::kRedrive);
  if (!svc) return;
  service::RedriveRequest d{req.topic()};
  if (req.has_msg_id()) d.msg_id = req.msg_id();
  if (req.has_limit()) d.limit = req.limit();
  if (req.has_delay_millis()) d.delay_millis = req.delay_millis();
  svc->Redrive(std::move(d), CountAnswer(std::move(call), resp));
}

void GetMonitorData(UnaryCall c, const v1::GetMonitorDataRequest&, v1::MonitorData* resp) {
  Call call(std::move(c));
  if (!call.Admit(auth::Operation::kMonitorData)) return;
  ToProto(call.service()->MonitorData(), resp);
  call.Ok();
}

}  // namespace chronoq::grpc_api::unary
