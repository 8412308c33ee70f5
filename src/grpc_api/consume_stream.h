// Consume, whatever serves the protocol: the stream's rules (subscription, credit, acks and nacks
// on the stream, delivery over the service's long polls, its end) in one engine-neutral object,
// ConsumeStream (consume_stream.cc), driving the engine's side of the call through
// ConsumeTransport: gRPC's bidi reactor (consume.cc, the grpc++ engine) or an HTTP/2 stream of
// our own server (h2_consume.cc, the h2 and nghttp2 engines). One code path for every engine, as
// unary_methods.h for the unary methods.
//
// The proto classes are only declared here.
#pragma once

#include <chrono>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "grpc_api/api_context.h"

namespace chronoq::v1 {
class ConsumeRequest;
class ConsumeResponse;
}  // namespace chronoq::v1

namespace chronoq::grpc_api {

// The engine's side of one Consume call. The stream calls it one call at a time, from any
// thread, never under its lock; ReadRequest and WriteResponse are answered once each by
// ConsumeStream::OnReadDone / OnWriteDone (inline or later, from any thread). At most one read
// and one write are in flight.
class ConsumeTransport {
 public:
  // Sends the response headers (gRPC's initial metadata).
  virtual void SendMetadata() = 0;
  // Reads the client's next request into `*req`; OnReadDone(false) when the client has closed
  // its side (or the call broke).
  virtual void ReadRequest(v1::ConsumeRequest* req) = 0;
  // Writes `*resp` (valid until OnWriteDone); OnWriteDone(false) when the call broke.
  virtual void WriteResponse(const v1::ConsumeResponse* resp) = 0;
  // The last call: ends the call with a gRPC status (0: OK) and its sentence, after the write in
  // flight. The engine calls ConsumeStream::OnDone once it is done with the call.
  virtual void FinishCall(int code, std::string message) = 0;

 protected:
  ~ConsumeTransport() = default;
};

// One Consume stream (thread-safe): the engine reports its call's events here.
class ConsumeStream {
 public:
  virtual ~ConsumeStream() = default;
  // Registers the stream (ApiContext::streams) and reads the subscription.
  virtual void Start() = 0;
  virtual void OnReadDone(bool ok) = 0;
  virtual void OnWriteDone(bool ok) = 0;
  // The client went away (reset, connection closed): CANCELLED.
  virtual void OnCancel() = 0;
  // The engine is done with the call (after FinishCall): the stream is unregistered.
  virtual void OnDone() = 0;
  // Ends the stream with a gRPC status (the first end wins): its poll is cancelled, nothing more
  // is written (the messages it was sent and did not ack wait for their ack deadline), and
  // FinishCall follows the write in flight.
  virtual void End(int code, std::string message) = 0;
};

// A Consume call of the caller whose `authorization` header is given (nullopt: none), whose
// client gives up at `deadline` (no message is taken for it shortly before). Refused by
// authentication: nullptr, after transport->FinishCall(refusal) (no OnDone follows). Else the
// engine calls Start() on it.
std::shared_ptr<ConsumeStream> NewConsumeStream(const ApiContext* ctx,
                                                std::optional<std::string_view> authorization,
                                                std::chrono::system_clock::time_point deadline,
                                                ConsumeTransport* transport);

}  // namespace chronoq::grpc_api
