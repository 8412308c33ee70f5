// HttpReceiver: a real HTTP/1.1 server on 127.0.0.1 (an ephemeral port) that plays a push target
// in tests and benchmarks (HTTPS too, with a certificate given as PEM text): it answers every
// request with a fixed status and body, or hangs, or closes each connection at once, or never
// accepts (a black hole once its backlog is full). Started by its constructor on its own threads,
// stopped by its destructor.
//
// Thread-safety: every method may be called from any thread.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace chronoq::push::testing {

struct ReceivedRequest {
  std::string method;
  std::string target;
  std::vector<std::pair<std::string, std::string>> headers;  // as received
  std::string body;
  std::chrono::steady_clock::time_point at;  // when it was read
  // The value of the first header named `name` (case-insensitive); empty when absent.
  std::string Header(std::string_view name) const;
};

class HttpReceiver {
 public:
  enum class Mode {
    kAnswer,    // answers `status` with `body` (keep-alive)
    kHang,      // reads the request, never answers, keeps the connection open
    kClose,     // closes every connection as soon as it is accepted
    kNoAccept,  // listens (backlog 1) and never accepts
  };
  struct Options {
    Mode mode = Mode::kAnswer;
    int status = 200;
    std::string body = "ok";
    bool record = true;  // keep every request (off for benchmarks: count only)
    // kAnswer: close each connection right after the answer although it says keep-alive (a
    // server that dropped an idle connection the client still holds in its pool).
    bool close_after_answer = false;
    // kAnswer: waits this long (real time) after reading a request before answering it (a slow
    // target; the connection's next request waits too).
    std::chrono::milliseconds answer_delay{0};
    int threads = 1;
    // HTTPS when both are set (PEM text; testing/tls_cert.h makes them).
    std::string tls_cert_pem = "";
    std::string tls_key_pem = "";
  };

  explicit HttpReceiver(Options options);
  ~HttpReceiver();
  HttpReceiver(const HttpReceiver&) = delete;
  HttpReceiver& operator=(const HttpReceiver&) = delete;

  uint16_t port() const;
  // "http://127.0.0.1:<port><path>" (https:// for a TLS receiver).
  std::string Url(std::string_view path) const;
  // "127.0.0.1:<port>", the Pusher's target key.
  std::string HostPort() const;

  std::vector<ReceivedRequest> Requests() const;
  size_t RequestCount() const;
  size_t Connections() const;  // accepted so far
  // Waits until RequestCount() >= n or `bound` has passed; returns whether it got there.
  // REQUIRES: options.record (an unrecorded request wakes no waiter).
  bool WaitForRequests(size_t n, std::chrono::milliseconds bound) const;

  struct Impl;

 private:
  std::unique_ptr<Impl> impl_;
};

}  // namespace chronoq::push::testing
