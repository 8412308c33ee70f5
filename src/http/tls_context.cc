#include "http/tls_context.h"

#include <fmt/format.h>
#include <openssl/ssl.h>

#include <boost/asio/buffer.hpp>
#include <boost/system/system_error.hpp>

#include "http/tls_context_internal.h"

namespace chronoq::http {
namespace {

namespace ssl = boost::asio::ssl;

// Sessions resumed with a ticket or an id must come from this server's own contexts.
constexpr unsigned char kSessionIdContext[] = "chronoq";

Result<std::shared_ptr<TlsContext::Native>> Build(const tls::TlsIdentity& id) {
  auto native = std::make_shared<TlsContext::Native>();
  ssl::context& ctx = native->ctx;
  boost::system::error_code ec;
  // TLS 1.2 and 1.3 only; no compression, no renegotiation by the client.
  ctx.set_options(ssl::context::default_workarounds | ssl::context::no_sslv2 |
                      ssl::context::no_sslv3 | ssl::context::no_tlsv1 | ssl::context::no_tlsv1_1 |
                      ssl::context::no_compression | SSL_OP_NO_RENEGOTIATION |
                      SSL_OP_CIPHER_SERVER_PREFERENCE,
                  ec);
  SSL_CTX* raw = ctx.native_handle();
  SSL_CTX_set_min_proto_version(raw, TLS1_2_VERSION);
  SSL_CTX_set_session_id_context(raw, kSessionIdContext, sizeof(kSessionIdContext) - 1);
  // An idle keep-alive connection gives back its 2 x 16 KiB record buffers (many may be open).
  SSL_CTX_set_mode(raw, SSL_MODE_RELEASE_BUFFERS);
  if (!ec) ctx.use_certificate_chain(boost::asio::buffer(id.cert_pem), ec);
  if (ec) return InvalidArgument(fmt::format("tls-cert-file: {}", ec.message()));
  ctx.use_private_key(boost::asio::buffer(id.key_pem), ssl::context::pem, ec);
  if (ec || SSL_CTX_check_private_key(raw) != 1) {
    return InvalidArgument(
        fmt::format("tls-key-file: {}", ec ? ec.message() : "does not match the certificate"));
  }
  if (!id.client_ca_pem.empty()) {
    ctx.add_certificate_authority(boost::asio::buffer(id.client_ca_pem), ec);
    if (ec) return InvalidArgument(fmt::format("tls-client-ca-file: {}", ec.message()));
    ctx.set_verify_mode(ssl::verify_peer | ssl::verify_fail_if_no_peer_cert, ec);
    if (ec) return InvalidArgument(fmt::format("tls-client-ca-file: {}", ec.message()));
  }
  return native;
}

}  // namespace

Result<std::unique_ptr<TlsContext>> TlsContext::Create(const tls::TlsIdentity& identity) {
  std::unique_ptr<TlsContext> out(new TlsContext());
  CQ_RETURN_IF_ERROR(out->Reload(identity));
  return out;
}

TlsContext::~TlsContext() = default;

Status TlsContext::Reload(const tls::TlsIdentity& identity) {
  CQ_ASSIGN_OR_RETURN(std::shared_ptr<Native> next, Build(identity));
  base::MutexLock lock(mu_);
  current_ = std::move(next);
  return Status::Ok();
}

std::shared_ptr<TlsContext::Native> TlsContext::Current() const {
  base::MutexLock lock(mu_);
  return current_;
}

}  // namespace chronoq::http
