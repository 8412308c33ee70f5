#include "tests/testutil/test_certs.h"

#include <fmt/format.h>
#include <sys/wait.h>

#include <array>
#include <cstdio>
#include <fstream>

namespace chronoq::testutil {
namespace {

// Runs `cmd` with /bin/sh; kInternal with its output when it fails.
Status Run(const std::string& cmd) {
  FILE* p = ::popen((cmd + " 2>&1").c_str(), "r");
  if (p == nullptr) return Internal("popen failed: " + cmd);
  std::string out;
  std::array<char, 4096> buf;
  size_t n;
  while ((n = std::fread(buf.data(), 1, buf.size(), p)) > 0) out.append(buf.data(), n);
  const int status = ::pclose(p);
  if (WIFEXITED(status) && WEXITSTATUS(status) == 0) return Status::Ok();
  return Internal(fmt::format("`{}` failed: {}", cmd, out));
}

}  // namespace

Status MakeTestCa(const std::string& dir, const std::string& name) {
  return Run(
      fmt::format("openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes "
                  "-days 2 -subj '/CN={0}' -keyout {1}/{0}.key -out {1}/{0}.pem",
                  name, dir));
}

Status MakeTestCert(const std::string& dir, const std::string& name, const std::string& ca,
                    const std::string& ext) {
  const std::string base = dir + "/" + name;
  std::ofstream(base + ".ext") << ext << "\n";
  return Run(fmt::format(
      "openssl req -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -subj '/CN={0}' "
      "-keyout {1}.key -out {1}.csr && "
      "openssl x509 -req -in {1}.csr -CA {2}/{3}.pem -CAkey {2}/{3}.key -CAcreateserial -days 2 "
      "-extfile {1}.ext -out {1}.pem",
      name, base, dir, ca));
}

}  // namespace chronoq::testutil
