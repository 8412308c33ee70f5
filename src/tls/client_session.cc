#include "tls/client_session.h"

#include <arpa/inet.h>
#include <fmt/format.h>
#include <openssl/err.h>
#include <openssl/x509v3.h>
#include <poll.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "tls/openssl_util.h"

namespace chronoq::tls {

struct ClientSession::Impl {
  SslCtxPtr ctx;
  SslPtr ssl;
};

ClientSession::ClientSession(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
ClientSession::~ClientSession() = default;

Result<std::unique_ptr<ClientSession>> ClientSession::Handshake(
    int fd, std::string_view host, const ClientOptions& o,
    std::chrono::steady_clock::time_point deadline) {
  auto impl = std::make_unique<Impl>();
  ERR_clear_error();
  impl->ctx.reset(SSL_CTX_new(TLS_client_method()));
  if (!impl->ctx) return Unavailable(fmt::format("TLS: {}", LastError()));
  SSL_CTX* ctx = impl->ctx.get();
  SSL_CTX_set_min_proto_version(ctx, TLS1_2_VERSION);
  SSL_CTX_set_verify(ctx, SSL_VERIFY_PEER, nullptr);
  // Partial writes, and a retried write may come from a buffer that has moved (a std::string).
  SSL_CTX_set_mode(ctx, SSL_MODE_ENABLE_PARTIAL_WRITE | SSL_MODE_ACCEPT_MOVING_WRITE_BUFFER);
  if (o.ca_file.empty()) {
    SSL_CTX_set_default_verify_paths(ctx);
  } else if (SSL_CTX_load_verify_locations(ctx, o.ca_file.c_str(), nullptr) != 1) {
    return InvalidArgument(
        fmt::format("option '--ca-file': cannot load '{}': {}", o.ca_file, LastError()));
  }
  if (o.cert_file.empty() != o.key_file.empty()) {
    return InvalidArgument("options '--cert-file' and '--key-file' go together");
  }
  if (!o.cert_file.empty()) {
    if (SSL_CTX_use_certificate_chain_file(ctx, o.cert_file.c_str()) != 1) {
      return InvalidArgument(
          fmt::format("option '--cert-file': cannot load '{}': {}", o.cert_file, LastError()));
    }
    if (SSL_CTX_use_PrivateKey_file(ctx, o.key_file.c_str(), SSL_FILETYPE_PEM) != 1 ||
        SSL_CTX_check_private_key(ctx) != 1) {
      ERR_clear_error();
      return InvalidArgument(
          fmt::format("option '--key-file': '{}' holds no key matching '{}' (--cert-file)",
                      o.key_file, o.cert_file));
    }
  }
  if (!o.alpn.empty()) {
    if (o.alpn.size() > 255) return InvalidArgument("TLS: the ALPN protocol name is too long");
    std::string wire(1, static_cast<char>(o.alpn.size()));
    wire += o.alpn;
    // 0 is success here (unlike the rest of OpenSSL's API).
    if (SSL_CTX_set_alpn_protos(ctx, reinterpret_cast<const unsigned char*>(wire.data()),
                                static_cast<unsigned>(wire.size())) != 0) {
      return Unavailable(fmt::format("TLS: {}", LastError()));
    }
  }
  impl->ssl.reset(SSL_new(ctx));
  SSL* ssl = impl->ssl.get();
  SSL_set_fd(ssl, fd);
  const std::string h(host);
  unsigned char ip[16];
  const bool is_ip =
      inet_pton(AF_INET, h.c_str(), ip) == 1 || inet_pton(AF_INET6, h.c_str(), ip) == 1;
  X509_VERIFY_PARAM* param = SSL_get0_param(ssl);
  if (is_ip) {
    X509_VERIFY_PARAM_set1_ip_asc(param, h.c_str());
  } else {
    SSL_set_tlsext_host_name(ssl, h.c_str());  // SNI: IP addresses are not sent
    X509_VERIFY_PARAM_set1_host(param, h.c_str(), 0);
  }
  for (;;) {
    int r = SSL_connect(ssl);
    if (r == 1) break;
    int err = SSL_get_error(ssl, r);
    short events = err == SSL_ERROR_WANT_READ ? POLLIN : err == SSL_ERROR_WANT_WRITE ? POLLOUT : 0;
    if (events == 0) {
      long verify = SSL_get_verify_result(ssl);
      std::string why = verify != X509_V_OK ? fmt::format("certificate verify failed: {}",
                                                          X509_verify_cert_error_string(verify))
                                            : LastError();
      if (why.empty()) why = err == SSL_ERROR_SYSCALL ? "the server closed the connection" : "";
      return Unavailable(fmt::format("TLS handshake with {} failed: {}", h, why));
    }
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
                    deadline - std::chrono::steady_clock::now())
                    .count();
    pollfd p{fd, events, 0};
    if (left <= 0 || ::poll(&p, 1, static_cast<int>(std::min<int64_t>(left, INT32_MAX))) == 0) {
      return Status(Errc::kTimeout, fmt::format("TLS handshake with {} timed out", h));
    }
  }
  if (!o.alpn.empty()) {
    const unsigned char* proto = nullptr;
    unsigned len = 0;
    SSL_get0_alpn_selected(ssl, &proto, &len);
    if (std::string_view(reinterpret_cast<const char*>(proto), len) != o.alpn) {
      return Unavailable(
          fmt::format("TLS handshake with {}: the server did not select {} (ALPN)", h, o.alpn));
    }
  }
  return std::unique_ptr<ClientSession>(new ClientSession(std::move(impl)));
}

long ClientSession::Fail(int ret) {
  int err = SSL_get_error(impl_->ssl.get(), ret);
  if (err == SSL_ERROR_WANT_READ) return kWantRead;
  if (err == SSL_ERROR_WANT_WRITE) return kWantWrite;
  if (err == SSL_ERROR_ZERO_RETURN) return 0;  // close_notify
  std::string why = LastError();
  if (why.empty() && err == SSL_ERROR_SYSCALL) {
    if (errno == 0) return 0;  // closed without close_notify: the end of the stream all the same
    why = std::strerror(errno);
  }
  error_ = why.empty() ? "TLS error" : "TLS: " + why;
  return kFailed;
}

long ClientSession::Read(char* buf, size_t n) {
  ERR_clear_error();
  errno = 0;
  int r = SSL_read(impl_->ssl.get(), buf, static_cast<int>(std::min<size_t>(n, INT32_MAX)));
  return r > 0 ? r : Fail(r);
}

long ClientSession::Write(const char* buf, size_t n) {
  ERR_clear_error();
  errno = 0;
  int r = SSL_write(impl_->ssl.get(), buf, static_cast<int>(std::min<size_t>(n, INT32_MAX)));
  return r > 0 ? r : Fail(r);
}

bool ClientSession::pending() const { return SSL_pending(impl_->ssl.get()) > 0; }

std::string ClientSession::PeerFingerprint() const {
  X509Ptr cert(SSL_get1_peer_certificate(impl_->ssl.get()));
  return cert ? Sha256Fingerprint(cert.get()) : "";
}

std::string ClientSession::PeerSerial() const {
  X509Ptr cert(SSL_get1_peer_certificate(impl_->ssl.get()));
  return cert ? SerialHex(cert.get()) : "";
}

}  // namespace chronoq::tls
