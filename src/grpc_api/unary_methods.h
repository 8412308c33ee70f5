// chronoq.v1.DelayQueue's unary methods, whatever serves the protocol (the grpc++ engine's
// callback service, delay_queue_service.cc, and the nghttp2 engine, h2_server.cc): each decodes
// its request (convert.h), admits the caller, makes the one QueueService call HTTP makes for the
// same operation, encodes the answer into `resp` and finishes the call. One code path for both
// engines. Pull with wait_millis is LongPull: the engine cancels its long poll when the client
// goes.
//
// The proto classes are only declared here.
#pragma once

#include <functional>
#include <optional>
#include <string>

#include "base/unique_function.h"
#include "grpc_api/api_context.h"
#include "grpc_api/method_stats.h"
#include "service/queue_service.h"

namespace chronoq::v1 {
class AckRequest;
class AckResponse;
class CountRequest;
class CountResponse;
class DeleteRequest;
class DeleteResponse;
class GetMonitorDataRequest;
class ListRequest;
class ListResponse;
class ListTopicsRequest;
class ListTopicsResponse;
class Message;
class MessageRef;
class MonitorData;
class MsgHistory;
class PullRequest;
class PullResponse;
class PurgeRequest;
class RedriveRequest;
class SendBatchRequest;
class SendBatchResponse;
class SendRequest;
class SendResponse;
class TopicConfig;
class TopicInfoResponse;
class TopicRef;
class TouchRequest;
class UpdateRequest;
}  // namespace chronoq::v1

namespace chronoq::grpc_api {

// What a unary call brings besides its request, and how it ends.
struct UnaryCall {
  const ApiContext* api = nullptr;
  Method method = Method::kSend;
  // The `authorization` metadata; nullopt: none.
  std::optional<std::string> authorization;
  // Finishes the call once, from any thread: OK (0) with the response filled, or a gRPC status
  // code and its sentence. The method's figures are recorded first.
  UniqueFunction<void(int code, std::string message)> finish;
};

namespace unary {

// The request is read before the handler returns; `resp` is written until `finish` is called.
void Send(UnaryCall call, const v1::SendRequest& req, v1::SendResponse* resp);
void SendBatch(UnaryCall call, const v1::SendBatchRequest& req, v1::SendBatchResponse* resp);
void Get(UnaryCall call, const v1::MessageRef& req, v1::Message* resp);
void GetMsgHistory(UnaryCall call, const v1::MessageRef& req, v1::MsgHistory* resp);
void Delete(UnaryCall call, const v1::DeleteRequest& req, v1::DeleteResponse* resp);
void Update(UnaryCall call, const v1::UpdateRequest& req, v1::Message* resp);
void Touch(UnaryCall call, const v1::TouchRequest& req, v1::Message* resp);
void Count(UnaryCall call, const v1::CountRequest& req, v1::Message* resp);
void List(UnaryCall call, const v1::ListRequest& req, v1::ListResponse* resp);
void Pull(UnaryCall call, const v1::PullRequest& req, v1::PullResponse* resp);
// Pull with wait_millis: parks a service long poll that takes messages only while `alive()` (the
// client is there and not about to pass its deadline); the engine cancels the returned ticket
// when the client goes. An empty ticket when the call was refused (then finished).
service::LongPollTicket LongPull(UnaryCall call, const v1::PullRequest& req, v1::PullResponse* resp,
                                 std::function<bool()> alive);
void Ack(UnaryCall call, const v1::AckRequest& req, v1::AckResponse* resp);
void TopicInfo(UnaryCall call, const v1::TopicRef& req, v1::TopicInfoResponse* resp);
void ListTopics(UnaryCall call, const v1::ListTopicsRequest& req, v1::ListTopicsResponse* resp);
void GetTopicConfig(UnaryCall call, const v1::TopicRef& req, v1::TopicConfig* resp);
void SetTopicConfig(UnaryCall call, const v1::TopicConfig& req, v1::TopicConfig* resp);
void DeleteTopicConfig(UnaryCall call, const v1::TopicRef& req, v1::DeleteResponse* resp);
void Purge(UnaryCall call, const v1::PurgeRequest& req, v1::CountResponse* resp);
void Redrive(UnaryCall call, const v1::RedriveRequest& req, v1::CountResponse* resp);
void GetMonitorData(UnaryCall call, const v1::GetMonitorDataRequest& req, v1::MonitorData* resp);

}  // namespace unary
}  // namespace chronoq::grpc_api
