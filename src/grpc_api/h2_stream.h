// Internal to src/grpc_api: streaming calls on the nghttp2 engine (h2_server.h) for the standard
// services it serves beside chronoq.v1.DelayQueue: grpc.health.v1.Health (h2_health.cc) and
// grpc.reflection.v1alpha.ServerReflection (h2_reflection.cc). A call whose path one of them
// serves gets an H2StreamState when its headers arrive: the connection feeds it the request's
// DATA (deframed here into messages, each handed to the call's handler as it completes, so a
// client that keeps its side open, as grpcurl does with reflection, gets each answer at once)
// and the handler writes messages and a status from any thread; the connection writes them as
// the client's window allows (a data provider that waits while nothing is queued).
//
// Thread-safety: H2StreamWriter is thread-safe; everything else of H2StreamState runs on the
// connection's thread.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "base/mutex.h"
#include "grpc_api/api_context.h"
#include "grpc_api/h2_wire.h"

namespace chronoq::grpc_api {

// What a call's handler writes to. Thread-safe; writes after Finish (or once the stream is
// closed) are dropped.
class H2StreamWriter {
 public:
  virtual ~H2StreamWriter() = default;
  // One response message (serialized; the writer adds the 5-byte prefix).
  virtual void Write(std::string message) = 0;
  // Ends the call with a gRPC status (0: OK).
  virtual void Finish(int code, std::string message) = 0;
};

// A call's server side. Its methods run on the connection's thread.
class H2StreamHandler {
 public:
  virtual ~H2StreamHandler() = default;
  // Each request message, in order.
  virtual void OnMessage(std::string_view message) = 0;
  // The client has sent its last message.
  virtual void OnHalfClose() = 0;
  // The stream closed (finished, reset by the client, or its connection gone): release the
  // writer. Called once.
  virtual void OnClose() = 0;
};

class H2StreamState;

// The standard services of the nghttp2 engine. Owned by the server; outlives its connections.
class H2Services {
 public:
  explicit H2Services(const ApiContext* api);
  ~H2Services();
  H2Services(const H2Services&) = delete;
  H2Services& operator=(const H2Services&) = delete;

  // The state of a new call of `path` when one of these services serves it, else null (the
  // call is one of chronoq.v1.DelayQueue's). A request message over `max_message_bytes`
  // finishes the call with RESOURCE_EXHAUSTED. `wake` is called (from any thread) when the call
  // has something to write: the connection then runs H2StreamState::Pump on its thread.
  std::shared_ptr<H2StreamState> Open(std::string_view path, int64_t max_message_bytes,
                                      std::function<void()> wake);
  // Whether `path` is one of these services' methods (cheap: the unary calls ask it).
  static bool Serves(std::string_view path);
  // From now on the health service answers NOT_SERVING (as grpc++'s from Shutdown()).
  void Shutdown();

  class Health;  // h2_health.cc

  // The names of the services served (for reflection's list_services).
  static const std::vector<std::string>& Names();

 private:
  std::unique_ptr<Health> health_;
};

// grpc.reflection.v1alpha.ServerReflection/ServerReflectionInfo (h2_reflection.cc).
std::unique_ptr<H2StreamHandler> NewReflectionHandler(std::shared_ptr<H2StreamWriter> w);

// One streaming call (held by the connection's stream and by the handler's writer).
class H2StreamState final : public H2Producer, public std::enable_shared_from_this<H2StreamState> {
 public:
  H2StreamState(std::function<void()> wake, int64_t max_message_bytes)
      : wake_(std::move(wake)), max_message_bytes_(max_message_bytes), in_(max_message_bytes) {}
  void SetHandler(std::unique_ptr<H2StreamHandler> handler) { handler_ = std::move(handler); }
  std::shared_ptr<H2StreamWriter> NewWriter();

  // Connection side (its thread).
  // Request bytes of a DATA frame; a compressed or oversized message finishes the call.
  void OnData(const uint8_t* data, size_t len);
  void OnHalfClose();
  // The stream closed: the handler is told, nothing more is written.
  void OnClose();
  // Submits to `out` what the writer queued (response headers, messages, trailers).
  void Pump(H2Out* out, int32_t id);
  // The response's DATA: what the writer queued, then the trailers; kDeferred while the queue is
  // empty and the status unknown.
  ssize_t Produce(uint8_t* buf, size_t length, uint32_t* flags) override;

  // Writer side (any thread).
  void Queue(std::string frame, bool finish, int code, std::string message);

  // What Produce writes.
  struct Out {
    std::string data;  // framed messages taken from the queue, not yet given to nghttp2
    size_t pos = 0;
    bool finished = false;  // the status is known: trailers after `data`
    int code = 0;
    std::string message;
  };

 private:
  H2Out* session_ = nullptr;  // Pump's
  int32_t id_ = 0;
  std::function<void()> wake_;
  const int64_t max_message_bytes_;
  std::unique_ptr<H2StreamHandler> handler_;
  GrpcDeframer in_;  // request bytes not yet a whole message
  bool closed_ = false;
  bool headers_sent_ = false;
  bool done_ = false;  // trailers submitted
  Out out_;
  base::Mutex mu_;
  std::string queued_ CQ_GUARDED_BY(mu_);
  bool finish_queued_ CQ_GUARDED_BY(mu_) = false;
  int code_ CQ_GUARDED_BY(mu_) = 0;
  std::string message_ CQ_GUARDED_BY(mu_);
};

}  // namespace chronoq::grpc_api
