// A self-signed certificate made at run time (OpenSSL), for HTTPS receivers in tests: no key
// material lives in the repository.
#pragma once

#include <string>
#include <string_view>

namespace chronoq::push::testing {

struct TlsCert {
  std::string cert_pem;  // also the CA to trust: it signs itself
  std::string key_pem;
};

// A P-256 certificate valid for one day whose subjectAltName is `san` ("IP:127.0.0.1",
// "DNS:localhost"). Aborts on an OpenSSL failure (test code).
TlsCert MakeSelfSignedCert(std::string_view san);

}  // namespace chronoq::push::testing
