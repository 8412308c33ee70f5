// Certificates for the TLS tests, made at test time with the `openssl` command (EC P-256 keys,
// valid two days): a CA, then certificates it signs (a server's with subjectAltName
// IP:127.0.0.1, a client's with extendedKeyUsage clientAuth).
#pragma once

#include <string>

#include "base/status.h"

namespace chronoq::testutil {

// A self-signed CA: `dir`/`name`.pem and `dir`/`name`.key. kInternal with openssl's output when
// the command fails.
Status MakeTestCa(const std::string& dir, const std::string& name);

// A certificate signed by the CA `ca` (made by MakeTestCa in `dir`), with the X.509 extension
// line `ext` (e.g. "subjectAltName=IP:127.0.0.1,DNS:localhost" or
// "extendedKeyUsage=clientAuth"): `dir`/`name`.pem and `dir`/`name`.key.
Status MakeTestCert(const std::string& dir, const std::string& name, const std::string& ca,
                    const std::string& ext);

}  // namespace chronoq::testutil
