// The nghttp2 engine's (h2_server.h) table of methods: a request path to the unary method of
// unary_methods.h that serves it, with the request's decoding and the answer's encoding (gRPC's
// length-prefixed messages). Names no nghttp2 type, and protobuf's MessageLite only as a
// declaration.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "grpc_api/api_context.h"
#include "service/queue_service.h"

namespace google::protobuf {
class MessageLite;
}  // namespace google::protobuf

namespace chronoq::grpc_api {

// Deletes a response message (defined where the message type is complete: h2_routes.cc).
struct MessageDeleter {
  void operator()(google::protobuf::MessageLite* m) const;
};
using ResponsePtr = std::unique_ptr<google::protobuf::MessageLite, MessageDeleter>;

// Consume's path: a stream (h2_consume.h), not a unary method.
inline constexpr std::string_view kConsumePath = "/chronoq.v1.DelayQueue/Consume";

// A call's answer: a gRPC status, and for OK the response message (serialized on the
// connection's thread, straight into its DATA frame: h2_session.cc).
struct H2Answer {
  int code = 0;
  std::string message;
  ResponsePtr response;
};

// A connection's session as its calls' answers reach it (h2_session.h, h2_own_session.h).
class H2Answers {
 public:
  // The answer of stream `id`, from any thread.
  virtual void Complete(int32_t id, H2Answer a) = 0;

 protected:
  ~H2Answers() = default;
};

// Where a call's answer goes: stream `id` of `session`, whose connection `hold` keeps alive (a
// plain value, not a function object: one allocation less per call). Called once, from any
// thread.
struct H2Reply {
  H2Answers* session = nullptr;
  std::shared_ptr<void> hold;
  int32_t id = 0;
  void operator()(H2Answer a) const;
};

struct H2Call {
  const ApiContext* api = nullptr;
  std::optional<std::string> authorization;  // the `authorization` header
  std::string_view request;                  // the request message (without its 5-byte prefix)
  H2Reply reply;
  // Pull with wait_millis: whether the client is still there (its stream open, its deadline
  // not about to pass).
  std::function<bool()> alive;
};

// Runs the method of `path` ("/chronoq.v1.DelayQueue/Send"): UNIMPLEMENTED when no unary method
// has that path. A parked Pull's ticket goes to `*ticket` (to cancel it when the stream closes
// first).
void RunUnary(std::string_view path, H2Call call, service::LongPollTicket* ticket);

// A unary request whose DATA is complete (`body`: one gRPC message with its prefix).
struct H2UnaryRequest {
  std::string_view path;
  std::optional<std::string> authorization;
  std::string_view body;
  std::chrono::steady_clock::time_point deadline;  // max: none
};

// Runs `r` (RunUnary), or answers it at once: DEADLINE_EXCEEDED past its deadline, INTERNAL when
// its body is not one uncompressed message. A Pull gets `*gone` (set when its stream closes
// first: the parked poll takes nothing more) and its parked ticket in `*ticket`.
void DispatchUnary(const ApiContext* api, H2UnaryRequest r, H2Reply reply,
                   std::shared_ptr<std::atomic<bool>>* gone, service::LongPollTicket* ticket);

}  // namespace chronoq::grpc_api
