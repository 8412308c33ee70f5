// The server's TLS identity: the certificate chain, its private key and, optionally, the CAs
// that client certificates must chain to, read from the files of `tls-cert-file`,
// `tls-key-file` and `tls-client-ca-file` and checked together. The HTTP server
// (http/tls_context.h) and the gRPC server build their TLS from one loaded identity, at start and
// on each SIGHUP (a file that fails the checks keeps the identity in use).
//
// Secrets: `key_pem` is the private key. It is never logged, printed or put in an error
// sentence; Describe() names the certificate only.
//
// Thread-safety: LoadIdentity is a pure function of the files; a TlsIdentity is a value.
#pragma once

#include <string>

#include "base/result.h"

namespace chronoq::tls {

struct TlsFiles {
  std::string cert_file;       // PEM: the server certificate, then its intermediates
  std::string key_file;        // PEM: its private key (unencrypted)
  std::string client_ca_file;  // PEM: CAs of client certificates; empty: none asked for

  bool enabled() const { return !cert_file.empty() || !key_file.empty(); }
  bool operator==(const TlsFiles&) const = default;
};

struct TlsIdentity {
  std::string cert_pem;       // the chain, as read
  std::string key_pem;        // secret
  std::string client_ca_pem;  // empty: clients are not asked for a certificate
  // About the leaf certificate, for the log and tests.
  std::string subject;             // "CN=chronoq.example"
  std::string serial;              // hex, upper case ("1A2B")
  std::string sha256_fingerprint;  // "AB:CD:...", as `openssl x509 -fingerprint -sha256`
  std::string not_after;           // "2027-11-26 04:00:00 UTC"

  // "subject CN=..., serial 1A2B, SHA-256 AB:CD:..., valid until ..." (no secret).
  std::string Describe() const;
};

// Reads and checks the files. kInvalidArgument with one sentence naming the setting and the file
// when: only one of cert and key is set, a file cannot be read, holds no PEM certificate (key),
// the key does not match the certificate, or the CA file holds no certificate. The sentence never
// quotes the key file's content.
// REQUIRES: files.enabled().
Result<TlsIdentity> LoadIdentity(const TlsFiles& files);

}  // namespace chronoq::tls
