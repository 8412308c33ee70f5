#include "push/testing/tls_cert.h"

#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>

#include "base/check.h"

namespace chronoq::push::testing {
namespace {

std::string Drain(BIO* bio) {
  char* data = nullptr;
  const long n = BIO_get_mem_data(bio, &data);
  std::string out(data, static_cast<size_t>(n));
  BIO_free(bio);
  return out;
}

}  // namespace

TlsCert MakeSelfSignedCert(std::string_view san) {
  EVP_PKEY* key = EVP_EC_gen("P-256");
  CQ_CHECK(key != nullptr, "EVP_EC_gen failed");
  X509* x = X509_new();
  X509_set_version(x, 2);
  ASN1_INTEGER_set(X509_get_serialNumber(x), 1);
  X509_gmtime_adj(X509_getm_notBefore(x), -60);
  X509_gmtime_adj(X509_getm_notAfter(x), 24 * 3600);
  X509_set_pubkey(x, key);
  X509_NAME* name = X509_get_subject_name(x);
  X509_NAME_add_entry_by_txt(name, "CN", MBSTRING_ASC,
                             reinterpret_cast<const unsigned char*>("chronoq push test"), -1, -1,
                             0);
  X509_set_issuer_name(x, name);
  X509V3_CTX ctx;
  X509V3_set_ctx_nodb(&ctx);
  X509V3_set_ctx(&ctx, x, x, nullptr, nullptr, 0);
  const std::string san_text(san);
  X509_EXTENSION* ext = X509V3_EXT_conf_nid(nullptr, &ctx, NID_subject_alt_name, san_text.c_str());
  CQ_CHECK(ext != nullptr, "subjectAltName '{}' refused", san_text);
  X509_add_ext(x, ext, -1);
  X509_EXTENSION_free(ext);
  X509_EXTENSION* ca =
      X509V3_EXT_conf_nid(nullptr, &ctx, NID_basic_constraints, "critical,CA:TRUE");
  X509_add_ext(x, ca, -1);
  X509_EXTENSION_free(ca);
  CQ_CHECK(X509_sign(x, key, EVP_sha256()) > 0, "X509_sign failed");

  TlsCert out;
  BIO* cert_bio = BIO_new(BIO_s_mem());
  PEM_write_bio_X509(cert_bio, x);
  out.cert_pem = Drain(cert_bio);
  BIO* key_bio = BIO_new(BIO_s_mem());
  PEM_write_bio_PrivateKey(key_bio, key, nullptr, nullptr, 0, nullptr, nullptr);
  out.key_pem = Drain(key_bio);
  X509_free(x);
  EVP_PKEY_free(key);
  return out;
}

}  // namespace chronoq::push::testing
