// A client's TLS session over a connected TCP socket (HTTPS to chronoq): the CLI, the bench tool
// and the integration tests reach an https:// server through it (client/http_client.h).
//
// Verification: the server's certificate must chain to `ca_file` (or, when empty, the system's
// CAs) and name the host (DNS name or IP address in its subjectAltName). Client certificates
// (mutual TLS, `tls-client-ca-file` on the server): `cert_file` and `key_file`.
//
// Lifecycle: Handshake() on a connected non-blocking socket, then Read/Write until the owner
// closes the socket (the session does not own it). Thread-safety: one thread at a time.
#pragma once

#include <chrono>
#include <cstddef>
#include <memory>
#include <string>
#include <string_view>

#include "base/result.h"

namespace chronoq::tls {

struct ClientOptions {
  std::string ca_file;    // PEM CAs the server's certificate must chain to; empty: the system's
  std::string cert_file;  // PEM client certificate (mutual TLS); empty: none
  std::string key_file;   // its key (unencrypted PEM)
  // ALPN: the one application protocol offered ("h2"); the handshake fails unless the server
  // selects it. Empty: no ALPN.
  std::string alpn;
  bool operator==(const ClientOptions&) const = default;
};

class ClientSession {
 public:
  ~ClientSession();
  ClientSession(const ClientSession&) = delete;
  ClientSession& operator=(const ClientSession&) = delete;

  // Handshakes over `fd` (connected, O_NONBLOCK) until `deadline`. kInvalidArgument naming the
  // option when a file cannot be used; kUnavailable with OpenSSL's reason when the handshake or
  // the verification fails ("certificate verify failed", a client certificate the server
  // refuses); kTimeout when the deadline passes.
  static Result<std::unique_ptr<ClientSession>> Handshake(
      int fd, std::string_view host, const ClientOptions& options,
      std::chrono::steady_clock::time_point deadline);

  // Non-blocking reads and writes: the bytes moved (> 0), 0 once the server has closed, or one
  // of these (then error() says why for kFailed).
  static constexpr long kWantRead = -1;   // wait until the socket is readable, then retry
  static constexpr long kWantWrite = -2;  // wait until it is writable, then retry
  static constexpr long kFailed = -3;
  // REQUIRES: a retried Write passes the same bytes as the one that returned kWant*.
  long Read(char* buf, size_t n);
  long Write(const char* buf, size_t n);
  // Decrypted bytes already buffered (readable without waiting for the socket).
  bool pending() const;
  const std::string& error() const { return error_; }

  // The server certificate's SHA-256 fingerprint ("AB:CD:...") and serial (hex).
  std::string PeerFingerprint() const;
  std::string PeerSerial() const;

 private:
  struct Impl;
  explicit ClientSession(std::unique_ptr<Impl> impl);
  long Fail(int ret);
  std::unique_ptr<Impl> impl_;
  std::string error_;
};

}  // namespace chronoq::tls
