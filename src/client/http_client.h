// A small blocking HTTP/1.1 client over POSIX sockets, for the public API: the CLI, the benchmark
// tool and the integration tests use it. No server module is linked. Keep-alive, pipelining
// (send several requests, then read their responses in order), raw bytes for protocol tests,
// Content-Length and chunked responses, timeouts; HTTPS (tls/client_session.h) for https://
// servers.
//
// Thread-safety: an HttpConnection is used by one thread at a time.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "base/result.h"
#include "tls/client_session.h"

namespace chronoq::client {

struct Response {
  int status = 0;
  std::string version;  // "HTTP/1.1"
  std::vector<std::pair<std::string, std::string>> headers;
  std::string body;

  // The first header with this name (case-insensitive), or "" when absent.
  std::string Header(std::string_view name) const;
};

struct Endpoint {
  std::string host = "127.0.0.1";
  uint16_t port = 8080;
  bool tls = false;                // https://
  tls::ClientOptions tls_options;  // https: CA file, client certificate
};

// "http://host:port[/...]", "https://host[:port][/...]" (tls set; port 443 by default) or
// "host:port" -> Endpoint.
Result<Endpoint> ParseServerUrl(std::string_view url);

// The server every client command talks to: `flag` (the --server value) when given, else
// $CHRONOQ_SERVER when set and not empty, else kDefaultServerUrl. Not checked (ParseServerUrl).
inline constexpr std::string_view kDefaultServerUrl = "http://127.0.0.1:8080";
std::string ChooseServerUrl(std::string_view flag);

class HttpConnection {
 public:
  HttpConnection() = default;
  ~HttpConnection();
  HttpConnection(HttpConnection&& o) noexcept;
  HttpConnection& operator=(HttpConnection&& o) noexcept;

  // kUnavailable when the server cannot be reached or (https) the TLS handshake fails, with the
  // reason; kInvalidArgument naming the option when a TLS file cannot be used.
  static Result<HttpConnection> Connect(
      const Endpoint& ep, std::chrono::milliseconds timeout = std::chrono::seconds(5));

  // Sends one request and reads its response. `body` is sent with `content_type` when non-empty
  // or when the method is POST.
  Result<Response> Request(std::string_view method, std::string_view target,
                           std::string_view body = {},
                           std::string_view content_type = "application/x-www-form-urlencoded",
                           std::chrono::milliseconds timeout = std::chrono::seconds(30));

  // The request bytes Request() would send (for pipelining several at once with SendRaw).
  std::string Format(std::string_view method, std::string_view target, std::string_view body = {},
                     std::string_view content_type = "application/x-www-form-urlencoded") const;
  Status SendRaw(std::string_view bytes);
  // Every request from now on carries `Authorization: Bearer <token>` (docs/security.md); empty:
  // none.
  void set_token(std::string token) { token_ = std::move(token); }
  // Reads the next response. kTimeout when none arrives in time; kUnavailable when the server
  // closed the connection first.
  Result<Response> ReadResponse(std::chrono::milliseconds timeout = std::chrono::seconds(30));
  // True when the server has closed the connection (waits up to `timeout` to find out).
  bool WaitClosed(std::chrono::milliseconds timeout);

  void Close();
  // Gives up the socket (for an event loop to drive) and, https, its TLS session (take it with
  // ReleaseTls() first); the connection is then closed here.
  int ReleaseFd() {
    int fd = fd_;
    fd_ = -1;
    buf_.clear();
    tls_.reset();
    return fd;
  }
  std::unique_ptr<tls::ClientSession> ReleaseTls() { return std::move(tls_); }
  bool connected() const { return fd_ >= 0; }
  const Endpoint& endpoint() const { return ep_; }
  // https: the TLS session (the server certificate's fingerprint); nullptr for http.
  const tls::ClientSession* tls_session() const { return tls_.get(); }

 private:
  // Fills buf_ with more bytes; kTimeout / kUnavailable.
  Status Fill(std::chrono::steady_clock::time_point deadline);
  int fd_ = -1;
  Endpoint ep_;
  std::string buf_;                          // received, not yet consumed
  std::unique_ptr<tls::ClientSession> tls_;  // https only
  std::string token_;
};

// application/x-www-form-urlencoded encoding of one value (space as %20, UTF-8 bytes as %XX).
std::string UrlEncode(std::string_view s);
// "a=1&b=2" from name/value pairs, each encoded.
std::string FormEncode(const std::vector<std::pair<std::string, std::string>>& params);

}  // namespace chronoq::client
