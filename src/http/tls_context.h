// TlsContext: the HTTP server's TLS settings (certificate, key, client CAs) built from a checked
// tls::TlsIdentity, swapped whole on reload. Each connection takes the context current when it is
// accepted and keeps it for its life: after Reload() new connections get the new certificate,
// open ones keep working with the old one (docs/security.md, TLS).
//
// Boost.Asio's ssl::context (OpenSSL) stays inside src/http: this header names neither; Native is
// defined in tls_context_internal.h, which only tls_context.cc and server.cc include.
//
// Thread-safety: Current() and Reload() may run on any threads at once (the workers take the
// context on each accept; SIGHUP reloads from the main thread).
#pragma once

#include <memory>

#include "base/mutex.h"
#include "base/result.h"
#include "tls/identity.h"

namespace chronoq::http {

class TlsContext {
 public:
  // kInvalidArgument with OpenSSL's reason when the identity is refused (which the checks of
  // tls::LoadIdentity make rare: an unsupported key type, say).
  static Result<std::unique_ptr<TlsContext>> Create(const tls::TlsIdentity& identity);
  ~TlsContext();

  // Builds a context from `identity` for the connections accepted from now on. On an error the
  // current context stays (and the error says why).
  Status Reload(const tls::TlsIdentity& identity);

  struct Native;  // tls_context_internal.h
  std::shared_ptr<Native> Current() const;

 private:
  TlsContext() = default;
  mutable base::Mutex mu_;
  std::shared_ptr<Native> current_ CQ_GUARDED_BY(mu_);
};

}  // namespace chronoq::http
