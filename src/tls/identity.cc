#include "tls/identity.h"

#include <fmt/format.h>
#include <openssl/asn1.h>
#include <openssl/bio.h>
#include <openssl/bn.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/x509.h>

#include <cerrno>
#include <cstring>
#include <ctime>
#include <fstream>
#include <memory>
#include <sstream>

#include "tls/openssl_util.h"

namespace chronoq::tls {
namespace {

Result<std::string> ReadFile(std::string_view key, const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    return InvalidArgument(
        fmt::format("{}: cannot read '{}': {}", key, path, std::strerror(errno)));
  }
  std::ostringstream text;
  text << in.rdbuf();
  if (in.bad()) return InvalidArgument(fmt::format("{}: cannot read '{}'", key, path));
  return text.str();
}

BioPtr MemBio(const std::string& text) {
  return BioPtr(BIO_new_mem_buf(text.data(), static_cast<int>(text.size())));
}

std::string Subject(X509* cert) {
  BioPtr out(BIO_new(BIO_s_mem()));
  X509_NAME_print_ex(out.get(), X509_get_subject_name(cert), 0, XN_FLAG_RFC2253);
  return BioText(out.get());
}

std::string NotAfter(X509* cert) {
  std::tm tm{};
  if (ASN1_TIME_to_tm(X509_get0_notAfter(cert), &tm) != 1) return "";
  char buf[64];
  std::strftime(buf, sizeof(buf), "%Y-%m-%d %H:%M:%S UTC", &tm);
  return buf;
}

}  // namespace

std::string TlsIdentity::Describe() const {
  return fmt::format("subject {}, serial {}, SHA-256 {}, valid until {}", subject, serial,
                     sha256_fingerprint, not_after);
}

Result<TlsIdentity> LoadIdentity(const TlsFiles& files) {
  if (files.cert_file.empty() || files.key_file.empty()) {
    return InvalidArgument(
        files.cert_file.empty()
            ? "tls-key-file is set but tls-cert-file is not: HTTPS needs both (or neither)"
            : "tls-cert-file is set but tls-key-file is not: HTTPS needs both (or neither)");
  }
  TlsIdentity id;
  CQ_ASSIGN_OR_RETURN(id.cert_pem, ReadFile("tls-cert-file", files.cert_file));
  CQ_ASSIGN_OR_RETURN(id.key_pem, ReadFile("tls-key-file", files.key_file));
  ERR_clear_error();
  BioPtr cert_bio = MemBio(id.cert_pem);
  X509Ptr cert(PEM_read_bio_X509(cert_bio.get(), nullptr, nullptr, nullptr));
  if (!cert) {
    return InvalidArgument(fmt::format("tls-cert-file: '{}' holds no PEM certificate ({})",
                                       files.cert_file, LastError()));
  }
  // The rest of the chain must parse too (OpenSSL would refuse it when serving).
  while (X509Ptr more{PEM_read_bio_X509(cert_bio.get(), nullptr, nullptr, nullptr)}) {
  }
  ERR_clear_error();
  BioPtr key_bio = MemBio(id.key_pem);
  // No passphrase callback: an encrypted key fails here instead of prompting on a terminal.
  EvpKeyPtr key(PEM_read_bio_PrivateKey(
      key_bio.get(), nullptr, [](char*, int, int, void*) { return 0; }, nullptr));
  if (!key) {
    ERR_clear_error();
    return InvalidArgument(
        fmt::format("tls-key-file: '{}' holds no unencrypted PEM private key", files.key_file));
  }
  if (X509_check_private_key(cert.get(), key.get()) != 1) {
    ERR_clear_error();
    return InvalidArgument(fmt::format(
        "tls-key-file: the key in '{}' does not match the certificate in '{}' (tls-cert-file)",
        files.key_file, files.cert_file));
  }
  if (!files.client_ca_file.empty()) {
    CQ_ASSIGN_OR_RETURN(id.client_ca_pem, ReadFile("tls-client-ca-file", files.client_ca_file));
    BioPtr ca_bio = MemBio(id.client_ca_pem);
    X509Ptr ca(PEM_read_bio_X509(ca_bio.get(), nullptr, nullptr, nullptr));
    if (!ca) {
      ERR_clear_error();
      return InvalidArgument(
          fmt::format("tls-client-ca-file: '{}' holds no PEM certificate", files.client_ca_file));
    }
  }
  id.subject = Subject(cert.get());
  id.serial = SerialHex(cert.get());
  id.sha256_fingerprint = Sha256Fingerprint(cert.get());
  id.not_after = NotAfter(cert.get());
  return id;
}

}  // namespace chronoq::tls
