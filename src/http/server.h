// HttpServer: HTTP/1.1 over TCP, or over TLS (HTTPS) with a TlsContext (Asio with C++20
// coroutines and Asio's ssl::stream; those types stay in server.cc).
// Keep-alive, pipelining, HTTP/1.0, `Expect: 100-continue`, header and body size limits
// (431 / 413), a connection cap (503), idle and request timeouts, back-off on accept errors (out
// of file descriptors), and graceful shutdown. Each connection is a coroutine on one of `threads`
// single-threaded io_contexts; it reads requests with RequestParser (request_parser.h, shared
// with ServeInProcess), sends them to a Router, and writes the answers with response_writer.h.
//
// Lifecycle: Start() once, Stop() once; Stop() returns when every worker thread has ended. Replies
// must not arrive after Stop() (answer parked long polls first).
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>

#include "base/status.h"
#include "http/router.h"
#include "http/tls_context.h"

namespace chronoq::http {

struct ServerOptions {
  std::string host = "0.0.0.0";
  uint16_t port = 8080;  // 0: pick a free port
  int threads = 2;
  size_t max_header_bytes = 16 * 1024;  // larger request headers: HTTP 431
  size_t max_body_bytes = 8 << 20;      // larger bodies: HTTP 413
  // Open connections at most; a connection beyond is answered 503 (Retry-After: 1) and closed at
  // once, without reading its request.
  int64_t max_connections = 10'000;
  // A connection with no request in progress (before the first byte of the next one) is closed.
  std::chrono::milliseconds idle_timeout{120'000};
  // From a request's first byte until the request (header and body) is received: a client that
  // trickles bytes (slow-loris) is closed without an answer. Also bounds writing an answer.
  std::chrono::milliseconds request_timeout{60'000};
  // HTTPS: every connection is TLS, with the context current when it is accepted (reloads reach
  // new connections only). Not owned; must outlive the server. nullptr: plain HTTP.
  const TlsContext* tls = nullptr;
  // TLS: a client that has not completed its handshake this long after the accept is closed. A
  // failed handshake (plain HTTP sent to the port, an unknown CA, no client certificate) closes
  // the connection and is counted (tls_handshake_failures) and logged at debug level.
  std::chrono::milliseconds handshake_timeout{10'000};
};

class HttpServer {
 public:
  HttpServer(ServerOptions options, const Router* router);  // router must outlive the server
  ~HttpServer();

  // Binds, listens and starts the worker threads. kInvalidArgument for a bad host,
  // kUnavailable when the address cannot be bound.
  Status Start();
  // The bound port (the real one when 0 was asked for).
  uint16_t port() const;

  // Stops accepting, closes idle connections, lets requests in progress finish and be answered
  // (each then closes its connection) for up to `grace`, then stops the workers.
  void Stop(std::chrono::milliseconds grace);

  // Open connections (for tests and metrics).
  int connections() const;
  // Connections refused since the start because max_connections were open.
  uint64_t refused_connections() const;
  // Failed accepts since the start (out of file descriptors, usually); each one backs off.
  uint64_t accept_errors() const;
  // TLS handshakes failed or timed out since the start.
  uint64_t tls_handshake_failures() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace chronoq::http
