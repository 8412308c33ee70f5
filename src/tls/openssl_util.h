// Internal to src/tls: owning pointers for OpenSSL objects and small helpers shared by
// identity.cc, client_session.cc and openssl_util.cc. The only header of the project that names
// OpenSSL types; no file outside this folder includes it.
#pragma once

#include <openssl/bio.h>
#include <openssl/bn.h>
#include <openssl/evp.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>

#include <memory>
#include <string>

namespace chronoq::tls {

template <auto Free>
struct Deleter {
  template <class T>
  void operator()(T* p) const {
    Free(p);
  }
};
using BioPtr = std::unique_ptr<BIO, Deleter<BIO_free_all>>;
using X509Ptr = std::unique_ptr<X509, Deleter<X509_free>>;
using EvpKeyPtr = std::unique_ptr<EVP_PKEY, Deleter<EVP_PKEY_free>>;
using BignumPtr = std::unique_ptr<BIGNUM, Deleter<BN_free>>;
using SslCtxPtr = std::unique_ptr<SSL_CTX, Deleter<SSL_CTX_free>>;
using SslPtr = std::unique_ptr<SSL, Deleter<SSL_free>>;

// The text a memory BIO holds.
std::string BioText(BIO* bio);
// OpenSSL's oldest queued error as text ("" when none); clears the queue.
std::string LastError();
// "AB:CD:..." (upper-case hex, as `openssl x509 -fingerprint -sha256`).
std::string Sha256Fingerprint(X509* cert);
// The serial number in upper-case hex ("1A2B").
std::string SerialHex(X509* cert);

}  // namespace chronoq::tls
