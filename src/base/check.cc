#include "base/check.h"

#include <cstdio>
#include <cstdlib>

namespace chronoq::base {

void CheckFailed(const char* file, int line, const char* cond, const std::string& msg) {
  std::fprintf(stderr, "%s:%d: check failed: %s: %s\n", file, line, cond, msg.c_str());
  std::fflush(stderr);
  std::abort();
}

}  // namespace chronoq::base
