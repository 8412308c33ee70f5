#include "tls/server_context.h"

#include <fmt/format.h>
#include <openssl/err.h>
#include <openssl/pem.h>
#include <openssl/ssl.h>

#include "tls/openssl_util.h"

namespace chronoq::tls {
namespace {

// Sessions resumed with a ticket or an id must come from this server's own contexts.
constexpr unsigned char kSessionIdContext[] = "chronoq";
constexpr unsigned char kH2[] = {2, 'h', '2'};

int SelectH2(SSL*, const unsigned char** out, unsigned char* outlen, const unsigned char* in,
             unsigned int inlen, void*) {
  unsigned char* chosen = nullptr;
  if (SSL_select_next_proto(&chosen, outlen, kH2, sizeof(kH2), in, inlen) !=
      OPENSSL_NPN_NEGOTIATED) {
    return SSL_TLSEXT_ERR_ALERT_FATAL;
  }
  *out = chosen;
  return SSL_TLSEXT_ERR_OK;
}

BioPtr MemBio(const std::string& text) {
  return BioPtr(BIO_new_mem_buf(text.data(), static_cast<int>(text.size())));
}

// The leaf certificate, then the chain (as Asio's use_certificate_chain).
bool UseChain(SSL_CTX* ctx, const std::string& pem) {
  BioPtr bio = MemBio(pem);
  X509Ptr leaf(PEM_read_bio_X509_AUX(bio.get(), nullptr, nullptr, nullptr));
  if (leaf == nullptr || SSL_CTX_use_certificate(ctx, leaf.get()) != 1) return false;
  SSL_CTX_clear_chain_certs(ctx);
  while (X509* ca = PEM_read_bio_X509(bio.get(), nullptr, nullptr, nullptr)) {
    if (SSL_CTX_add0_chain_cert(ctx, ca) != 1) {
      X509_free(ca);
      return false;
    }
  }
  ERR_clear_error();  // the end of the text (no start line)
  return true;
}

bool UseClientCas(SSL_CTX* ctx, const std::string& pem) {
  BioPtr bio = MemBio(pem);
  X509_STORE* store = SSL_CTX_get_cert_store(ctx);
  int n = 0;
  while (X509* ca = PEM_read_bio_X509(bio.get(), nullptr, nullptr, nullptr)) {
    X509Ptr owned(ca);
    if (X509_STORE_add_cert(store, ca) != 1) return false;
    ++n;
  }
  ERR_clear_error();
  return n > 0;
}

}  // namespace

Result<ssl_ctx_st*> NewServerContext(const TlsIdentity& id, const ServerContextOptions& options) {
  SslCtxPtr ctx(SSL_CTX_new(TLS_server_method()));
  if (ctx == nullptr) return InvalidArgument(fmt::format("TLS: {}", LastError()));
  SSL_CTX* raw = ctx.get();
  // TLS 1.2 and 1.3 only; no compression, no renegotiation by the client.
  SSL_CTX_set_options(raw, SSL_OP_ALL | SSL_OP_NO_COMPRESSION | SSL_OP_NO_RENEGOTIATION |
                               SSL_OP_CIPHER_SERVER_PREFERENCE);
  SSL_CTX_set_min_proto_version(raw, TLS1_2_VERSION);
  SSL_CTX_set_session_id_context(raw, kSessionIdContext, sizeof(kSessionIdContext) - 1);
  // An idle keep-alive connection gives back its 2 x 16 KiB record buffers (many may be open).
  SSL_CTX_set_mode(raw, SSL_MODE_RELEASE_BUFFERS);
  if (!UseChain(raw, id.cert_pem)) {
    return InvalidArgument(fmt::format("tls-cert-file: {}", LastError()));
  }
  EvpKeyPtr key;
  {
    BioPtr bio = MemBio(id.key_pem);
    key.reset(PEM_read_bio_PrivateKey(bio.get(), nullptr, nullptr, nullptr));
  }
  if (key == nullptr || SSL_CTX_use_PrivateKey(raw, key.get()) != 1) {
    return InvalidArgument(fmt::format("tls-key-file: {}", LastError()));
  }
  if (SSL_CTX_check_private_key(raw) != 1) {
    ERR_clear_error();
    return InvalidArgument("tls-key-file: does not match the certificate");
  }
  if (!id.client_ca_pem.empty()) {
    if (!UseClientCas(raw, id.client_ca_pem)) {
      return InvalidArgument(fmt::format("tls-client-ca-file: {}", LastError()));
    }
    SSL_CTX_set_verify(raw, SSL_VERIFY_PEER | SSL_VERIFY_FAIL_IF_NO_PEER_CERT, nullptr);
  }
  if (options.alpn_h2) SSL_CTX_set_alpn_select_cb(raw, SelectH2, nullptr);
  return ctx.release();
}

Result<std::unique_ptr<ServerContext>> ServerContext::Create(const TlsIdentity& identity,
                                                             const ServerContextOptions& options) {
  std::unique_ptr<ServerContext> out(new ServerContext(options));
  CQ_RETURN_IF_ERROR(out->Reload(identity));
  return out;
}

ServerContext::~ServerContext() { SSL_CTX_free(current_); }

Status ServerContext::Reload(const TlsIdentity& identity) {
  CQ_ASSIGN_OR_RETURN(ssl_ctx_st * next, NewServerContext(identity, options_));
  base::MutexLock lock(mu_);
  std::swap(current_, next);
  SSL_CTX_free(next);  // the previous one (connections hold their own references)
  return Status::Ok();
}

ssl_ctx_st* ServerContext::Acquire() const {
  base::MutexLock lock(mu_);
  SSL_CTX_up_ref(current_);
  return current_;
}

}  // namespace chronoq::tls
