// TempDir: a fresh directory under TempRoot() (mkdtemp), removed with everything in it when
// destroyed. TempRoot() is $TMPDIR when set, else /tmp: `make test` points TMPDIR into the build
// tree and fails when a passing run left anything there, so every temporary file or directory of
// a test goes under TempRoot(), never under a hard-coded /tmp.
#pragma once

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <string>

namespace chronoq::testutil {

// Where tests put their temporary files: $TMPDIR when set and not empty, else /tmp.
inline std::string TempRoot() {
  const char* env = std::getenv("TMPDIR");
  return env != nullptr && *env != '\0' ? std::string(env) : std::string("/tmp");
}

// A mkstemp/mkdtemp template under TempRoot(): "<root>/<prefix>XXXXXX".
inline std::string TempTemplate(const std::string& prefix) {
  return TempRoot() + "/" + prefix + "XXXXXX";
}

class TempDir {
 public:
  TempDir() {
    std::string tmpl = TempTemplate("chronoq-test-");
    char* made = ::mkdtemp(tmpl.data());
    EXPECT_NE(made, nullptr) << "mkdtemp failed for " << tmpl;
    if (made != nullptr) path_ = made;
  }
  ~TempDir() {
    std::error_code ec;
    if (!path_.empty()) std::filesystem::remove_all(path_, ec);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;

  const std::string& path() const { return path_; }
  // A path inside the directory (not created).
  std::string Sub(const std::string& name) const { return path_ + "/" + name; }

 private:
  std::string path_;
};

}  // namespace chronoq::testutil
