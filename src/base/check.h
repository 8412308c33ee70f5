// CQ_CHECK / CQ_DCHECK: invariants. A broken invariant is a bug, not an error: it logs the file,
// line and message to stderr and aborts. CQ_CHECK is always on; CQ_DCHECK only without NDEBUG.
#pragma once

#include <fmt/format.h>

namespace chronoq::base {
[[noreturn]] void CheckFailed(const char* file, int line, const char* cond, const std::string& msg);
}  // namespace chronoq::base

#define CQ_CHECK(cond, ...)                                                              \
  do {                                                                                   \
    if (!(cond)) [[unlikely]] {                                                          \
      ::chronoq::base::CheckFailed(__FILE__, __LINE__, #cond, fmt::format(__VA_ARGS__)); \
    }                                                                                    \
  } while (0)

#ifdef NDEBUG
#define CQ_DCHECK(cond, ...)                \
  do {                                      \
    if (false) CQ_CHECK(cond, __VA_ARGS__); \
  } while (0)
#else
#define CQ_DCHECK(cond, ...) CQ_CHECK(cond, __VA_ARGS__)
#endif
