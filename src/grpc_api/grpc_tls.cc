#include "grpc_api/grpc_tls.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <grpc/support/log.h>
#include <grpcpp/security/server_credentials.h>
#include <grpcpp/security/tls_certificate_provider.h>
#include <grpcpp/security/tls_credentials_options.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <string>
#include <string_view>
#include <utility>

#include "base/log.h"

namespace chronoq::grpc_api {
namespace {

constexpr const char* kLog = "cq.grpc";

// gRPC's own log lines, in the server's log. A failed TLS handshake (a plaintext or untrusting
// client) is logged by gRPC at error level; here at debug level, as the HTTP server does, so that
// whoever reaches the port cannot flood the log.
void GrpcLog(gpr_log_func_args* args) {
  const std::string_view msg = args->message != nullptr ? args->message : "";
  if (msg.find("Handshake failed") != std::string_view::npos) {
    CQ_LOG_DEBUG(kLog, "TLS handshake failed: {}", msg);
  } else if (args->severity == GPR_LOG_SEVERITY_ERROR) {
    CQ_LOG_ERROR(kLog, "{}", msg);
  } else if (args->severity == GPR_LOG_SEVERITY_INFO) {
    CQ_LOG_INFO(kLog, "{}", msg);
  } else {
    CQ_LOG_DEBUG(kLog, "{}", msg);
  }
}

// How often gRPC re-reads the in-memory files (its minimum).
constexpr unsigned kRefreshSeconds = 1;

std::string FdPath(int fd) { return fmt::format("/proc/self/fd/{}", fd); }

// A new in-memory file holding `text`; -1 (errno set) on failure.
int NewMemFile(const char* name, const std::string& text) {
  int fd = ::memfd_create(name, MFD_CLOEXEC);
  if (fd < 0) return -1;
  size_t done = 0;
  while (done < text.size()) {
    ssize_t n = ::write(fd, text.data() + done, text.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      int e = errno;
      ::close(fd);
      errno = e;
      return -1;
    }
    done += static_cast<size_t>(n);
  }
  return fd;
}

// A file made by NewMemFile, closed unless released.
struct MemFile {
  int fd = -1;
  ~MemFile() {
    if (fd >= 0) ::close(fd);
  }
};

Status Make(const char* name, const std::string& text, MemFile* out) {
  out->fd = NewMemFile(name, text);
  if (out->fd >= 0) return Status::Ok();
  return Unavailable(
      fmt::format("gRPC TLS: cannot make an in-memory file: {}", std::strerror(errno)));
}

// Makes `*fd` (its number, which gRPC's path names) refer to `next`'s file, in one step (dup3):
// gRPC reads either the old file or the new one, never half of one.
Status Install(int* fd, MemFile* next) {
  if (*fd < 0) {
    std::swap(*fd, next->fd);
    return Status::Ok();
  }
  if (::dup3(next->fd, *fd, O_CLOEXEC) < 0) {
    return Unavailable(fmt::format("gRPC TLS: dup3: {}", std::strerror(errno)));
  }
  return Status::Ok();
}

}  // namespace

Result<std::unique_ptr<GrpcTls>> GrpcTls::Create(const tls::TlsIdentity& id) {
  gpr_set_log_function(GrpcLog);
  std::unique_ptr<GrpcTls> t(new GrpcTls());
  CQ_RETURN_IF_ERROR(t->Reload(id));
  namespace gx = grpc::experimental;
  const bool clients = t->ca_fd_ >= 0;
  // gRPC reads the files at once (the server then serves this identity from its first
  // connection), then every kRefreshSeconds, and keeps the pair in use when the key read does not
  // match the certificate read.
  t->provider_ =
      clients ? std::make_shared<gx::FileWatcherCertificateProvider>(
                    FdPath(t->key_fd_), FdPath(t->cert_fd_), FdPath(t->ca_fd_), kRefreshSeconds)
              : std::make_shared<gx::FileWatcherCertificateProvider>(
                    FdPath(t->key_fd_), FdPath(t->cert_fd_), kRefreshSeconds);
  gx::TlsServerCredentialsOptions options(t->provider_);
  options.watch_identity_key_cert_pairs();
  if (clients) {
    options.watch_root_certs();
    options.set_cert_request_type(GRPC_SSL_REQUEST_AND_REQUIRE_CLIENT_CERTIFICATE_AND_VERIFY);
  } else {
    options.set_cert_request_type(GRPC_SSL_DONT_REQUEST_CLIENT_CERTIFICATE);
  }
  t->credentials_ = gx::TlsServerCredentials(options);
  if (t->credentials_ == nullptr) return Unavailable("gRPC TLS: gRPC refused the credentials");
  return t;
}

GrpcTls::~GrpcTls() {
  provider_.reset();
  for (int fd : {cert_fd_, key_fd_, ca_fd_}) {
    if (fd >= 0) ::close(fd);
  }
}

Status GrpcTls::Reload(const tls::TlsIdentity& id) {
  if (provider_ != nullptr && (ca_fd_ >= 0) != !id.client_ca_pem.empty()) {
    return InvalidArgument("gRPC TLS: tls-client-ca-file cannot be set or unset without a restart");
  }
  // All three written first, then swapped in back to back: gRPC's once-a-second read almost
  // never falls between two swaps (and when it does, it sees a key of another certificate and
  // keeps the pair in use until its next read).
  MemFile key, cert, ca;
  CQ_RETURN_IF_ERROR(Make("chronoq-grpc-tls-key", id.key_pem, &key));
  CQ_RETURN_IF_ERROR(Make("chronoq-grpc-tls-cert", id.cert_pem, &cert));
  if (!id.client_ca_pem.empty()) {
    CQ_RETURN_IF_ERROR(Make("chronoq-grpc-tls-ca", id.client_ca_pem, &ca));
  }
  CQ_RETURN_IF_ERROR(Install(&key_fd_, &key));
  CQ_RETURN_IF_ERROR(Install(&cert_fd_, &cert));
  if (ca.fd >= 0) CQ_RETURN_IF_ERROR(Install(&ca_fd_, &ca));
  return Status::Ok();
}

}  // namespace chronoq::grpc_api
