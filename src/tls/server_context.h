// The OpenSSL server context of chronoq's TLS servers, built from a checked tls::TlsIdentity:
// the one place of the server side's settings (TLS 1.2 and 1.3, no compression, no client
// renegotiation, the certificate chain, the key, and with a client CA file client certificates
// required and verified). The HTTP server wraps it in Asio's ssl::context (http/tls_context.h);
// the gRPC API's nghttp2 engine takes it through ServerContext, with ALPN "h2".
//
// OpenSSL's SSL_CTX is only declared here (struct ssl_ctx_st); the users that need its definition
// are .cc files of src/http and src/grpc_api, through Boost.Asio's ssl::context.
//
// Thread-safety: NewServerContext is a pure function; ServerContext is thread-safe.
#pragma once

#include <memory>

#include "base/mutex.h"
#include "base/result.h"
#include "tls/identity.h"

struct ssl_ctx_st;  // OpenSSL's SSL_CTX

namespace chronoq::tls {

struct ServerContextOptions {
  // ALPN: the server picks "h2"; a client that offers protocols but not "h2" is refused in the
  // handshake (no_application_protocol alert). For HTTP/2 servers (gRPC).
  bool alpn_h2 = false;
};

// A new context (one reference, owned by the caller: Asio's ssl::context(native_handle) takes
// it). kInvalidArgument naming the setting (tls-cert-file, tls-key-file, tls-client-ca-file) with
// OpenSSL's reason, which the checks of LoadIdentity make rare (an unsupported key type, say).
Result<ssl_ctx_st*> NewServerContext(const TlsIdentity& identity,
                                     const ServerContextOptions& options);

// The current context of a server, swapped whole on Reload: each connection takes the one current
// when it is accepted and keeps it (new connections get a reloaded certificate, open ones keep
// theirs).
class ServerContext {
 public:
  static Result<std::unique_ptr<ServerContext>> Create(const TlsIdentity& identity,
                                                       const ServerContextOptions& options);
  ~ServerContext();
  ServerContext(const ServerContext&) = delete;
  ServerContext& operator=(const ServerContext&) = delete;

  // From now on Acquire() gives a context of `identity` (same options). On an error the current
  // one stays.
  Status Reload(const TlsIdentity& identity);
  // A new reference to the current context, owned by the caller.
  ssl_ctx_st* Acquire() const;

 private:
  explicit ServerContext(const ServerContextOptions& options) : options_(options) {}
  const ServerContextOptions options_;
  mutable base::Mutex mu_;
  ssl_ctx_st* current_ CQ_GUARDED_BY(mu_) = nullptr;
};

}  // namespace chronoq::tls
