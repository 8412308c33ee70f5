// Internal to src/grpc_api: the gRPC server's TLS credentials, reloadable.
//
// gRPC 1.51 (Debian 12) serves TLS from a certificate provider; the only one that can change its
// certificate is FileWatcherCertificateProvider, which re-reads files every second. It watches
// in-memory files here (memfd, through /proc/self/fd/N), never the configured files: the server
// writes identities into them only after tls::LoadIdentity has checked them, at start and on
// SIGHUP, so gRPC switches certificates on SIGHUP (within a second) like HTTPS, never serves a
// broken file, and the key is never copied to disk.
//
// Thread-safety: Reload() from one thread at a time (SIGHUP's); gRPC reads the files on its own.
#pragma once

#include <memory>

#include "base/result.h"
#include "tls/identity.h"

// Declared only: gRPC's headers stay in this folder's .cc files (scripts/check-layering.sh).
namespace grpc {
class ServerCredentials;
namespace experimental {
class CertificateProviderInterface;
}  // namespace experimental
}  // namespace grpc

namespace chronoq::grpc_api {

class GrpcTls {
 public:
  // kUnavailable when the in-memory files cannot be made.
  static Result<std::unique_ptr<GrpcTls>> Create(const tls::TlsIdentity& identity);
  ~GrpcTls();

  std::shared_ptr<grpc::ServerCredentials> credentials() const { return credentials_; }
  // New connections get `identity` within about a second.
  Status Reload(const tls::TlsIdentity& identity);

 private:
  GrpcTls() = default;
  int cert_fd_ = -1;
  int key_fd_ = -1;
  int ca_fd_ = -1;  // -1: no client certificates asked for
  std::shared_ptr<grpc::experimental::CertificateProviderInterface> provider_;
  std::shared_ptr<grpc::ServerCredentials> credentials_;
};

}  // namespace chronoq::grpc_api
