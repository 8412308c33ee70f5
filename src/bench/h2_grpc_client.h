// GrpcH2Loop: the bench's own gRPC client, HTTP/2 (RFC 9113) framed here, h2c or over TLS with
// ALPN h2 when the endpoint is https, driven from one thread with epoll like LoadLoop:
// many connections, many calls in flight on each (HTTP/2 streams). A call is HEADERS (POST, the
// method's path, content-type application/grpc, te: trailers, authorization when given), then
// length-prefixed messages; answers arrive as DATA frames of length-prefixed messages, then
// grpc-status in the trailers. Messages are bytes here (the caller serializes them). Cheap per
// call, so that on a small machine the server, not the client, is measured: one read and one
// write per readable connection; the request's header fields indexed in HPACK's dynamic table
// after the first call, as gRPC's own clients do (a call's HEADERS is then 6 bytes; nghttp2's
// encoder never indexes :path); the answers' header blocks decoded by nghttp2's HPACK decoder
// (in the .cc file only).
//
// Thread-safety: a GrpcH2Loop and its calls belong to the thread that calls Run().
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "bench/load_loop.h"
#include "client/http_client.h"

namespace chronoq::bench {

// What happens to one call; called on the loop's thread.
class GrpcCall {
 public:
  virtual ~GrpcCall() = default;
  // One message of the answer (its protobuf bytes, without the 5-byte prefix).
  virtual void OnMessage(std::string_view /*bytes*/) {}
  // After the messages of one DATA frame (e.g. to answer them together).
  virtual void OnReadBatch() {}
  // The call is over: grpc-status and grpc-message of its trailers (or of a trailers-only
  // answer); status -1 when the stream or its connection ended without one (`message` says why).
  virtual void OnClose(int status, std::string_view message) = 0;
};

class GrpcH2Loop {
 public:
  // `authorization`: the value of every call's authorization header (empty: none). `ep.tls`:
  // TLS with `ep.tls_options`, offering ALPN h2 only (Connect fails unless the server selects it).
  GrpcH2Loop(client::Endpoint ep, std::string authorization);
  ~GrpcH2Loop();
  GrpcH2Loop(const GrpcH2Loop&) = delete;
  GrpcH2Loop& operator=(const GrpcH2Loop&) = delete;

  // Opens `n` connections (connection ids 0..n-1). kUnavailable when the server cannot be
  // reached.
  Status Connect(int n);

  // Starts a call on connection `conn` with one request message (already serialized); `last`:
  // the request ends there (unary). Returns the stream id (> 0), or -1 when the connection is
  // gone or refused the stream. `call` must outlive the call (its OnClose).
  int32_t Start(int conn, std::string_view path, std::string_view message, bool last,
                GrpcCall* call);
  // Another request message on an open call's stream (streaming calls).
  void Write(int conn, int32_t stream, std::string_view message);
  // Ends the call from this side (RST_STREAM CANCEL); its OnClose follows.
  void Cancel(int conn, int32_t stream);

  // Runs until `stop()` returns true, `deadline` passes, or every connection has failed. `tick`
  // is called about every `tick_every`.
  void Run(SteadyClock::time_point deadline, const std::function<bool()>& stop,
           const std::function<void()>& tick,
           std::chrono::milliseconds tick_every = std::chrono::milliseconds(250));

  int64_t connection_errors() const { return connection_errors_; }
  // Calls started and not closed, over all connections.
  int64_t open_calls() const { return open_calls_; }

  struct Conn;  // one connection: its frames, HPACK tables and open calls (in the .cc file)

 private:
  void Flush(Conn& c);
  void OnReadable(Conn& c);
  void Fail(Conn& c, std::string_view what);

  client::Endpoint ep_;
  std::string authority_;  // host:port
  std::string authorization_;
  int epfd_ = -1;
  std::vector<std::unique_ptr<Conn>> conns_;
  int64_t connection_errors_ = 0;
  int64_t open_calls_ = 0;
};

}  // namespace chronoq::bench
