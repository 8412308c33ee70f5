#include "tls/openssl_util.h"

#include <fmt/format.h>
#include <openssl/err.h>

namespace chronoq::tls {

std::string BioText(BIO* bio) {
  char* data = nullptr;
  long n = BIO_get_mem_data(bio, &data);
  return n > 0 ? std::string(data, static_cast<size_t>(n)) : std::string();
}

std::string LastError() {
  unsigned long e = ERR_get_error();
  ERR_clear_error();
  if (e == 0) return "";
  const char* reason = ERR_reason_error_string(e);
  return reason != nullptr ? reason : fmt::format("OpenSSL error {:x}", e);
}

std::string Sha256Fingerprint(X509* cert) {
  unsigned char md[EVP_MAX_MD_SIZE];
  unsigned int n = 0;
  if (X509_digest(cert, EVP_sha256(), md, &n) != 1) return "";
  std::string out;
  for (unsigned int i = 0; i < n; ++i) {
    if (i > 0) out.push_back(':');
    out += fmt::format("{:02X}", md[i]);
  }
  return out;
}

std::string SerialHex(X509* cert) {
  BignumPtr bn(ASN1_INTEGER_to_BN(X509_get_serialNumber(cert), nullptr));
  char* hex = bn ? BN_bn2hex(bn.get()) : nullptr;
  std::string s = hex != nullptr ? hex : "";
  OPENSSL_free(hex);
  return s;
}

}  // namespace chronoq::tls
