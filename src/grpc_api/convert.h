// Proto <-> service conversions of the gRPC API, and the one table from Errc to a gRPC status
// code. The proto classes are only declared here (their generated header stays in the .cc files).
// Decoding never judges a value: a field is copied into the service request as given (unset
// optional fields stay absent), and the service checks it with HTTP's sentences.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "base/status.h"
#include "core/message.h"
#include "core/topic_info.h"
#include "metrics/monitor.h"
#include "service/queue_service.h"
#include "service/requests.h"

namespace chronoq::v1 {
class AckRequest;
class AckResponse;
class Message;
class MonitorData;
class SendRequest;
class TopicConfig;
class TopicInfoResponse;
}  // namespace chronoq::v1

namespace chronoq::grpc_api {

// kInvalidArgument -> INVALID_ARGUMENT (3), kNotFound -> NOT_FOUND (5), kInvalidState ->
// FAILED_PRECONDITION (9), kResourceExhausted -> RESOURCE_EXHAUSTED (8), kUnavailable and
// kTimeout -> UNAVAILABLE (14), kAlreadyExists -> ALREADY_EXISTS (6), kConflict -> ABORTED (10),
// anything else -> INTERNAL (13); kOk -> OK (0).
int GrpcCode(Errc code);

// `error` (when OK) gets why the callback cannot be read.
service::SendRequest FromProto(const v1::SendRequest& p, Status* error);
// A SendBatch item: its topic must be empty or the batch's (`unreadable` gets HTTP's sentence).
service::SendRequest FromProtoItem(const v1::SendRequest& p, const std::string& batch_topic,
                                   Status* unreadable);
service::AckBatchRequest FromProto(const v1::AckRequest& p);
// setTopicConfig's fields (an empty callback message removes the topic's callback);
// kInvalidArgument for a callback whose shape is wrong.
Result<service::TopicConfigRequest> FromProto(const v1::TopicConfig& p);

void ToProto(const core::Message& m, v1::Message* out);
void ToProto(const core::TopicInfo& t, v1::TopicInfoResponse* out);
void ToProto(const service::TopicConfigView& v, v1::TopicConfig* out);
void ToProto(const std::vector<service::AckResult>& results, v1::AckResponse* out);
void ToProto(const metrics::MonitorSnapshot& s, v1::MonitorData* out);

}  // namespace chronoq::grpc_api
