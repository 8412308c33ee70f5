// HttpServer: HTTP/1.1 over TCP (Boost.Beast on Asio with C++20 coroutines; those types stay in
// server.cc). Keep-alive, pipelining, HTTP/1.0, `Expect: 100-continue`, header and body size
// limits (431 / 413), idle timeouts, and graceful shutdown. Each connection is a coroutine on one
// of `threads` single-threaded io_contexts; requests go to a Router.
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

namespace chronoq::http {

struct ServerOptions {
  std::string host = "0.0.0.0";
  uint16_t port = 8080;  // 0: pick a free port
  int threads = 2;
  size_t max_header_bytes = 16 * 1024;                // larger request headers: HTTP 431
  size_t max_body_bytes = 8 << 20;                    // larger bodies: HTTP 413
  std::chrono::milliseconds idle_timeout{120'000};    // keep-alive connection with no request
  std::chrono::milliseconds request_timeout{60'000};  // to receive a request once it started
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

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace chronoq::http
