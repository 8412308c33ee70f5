// Status: the outcome of an operation that can fail in an ordinary way (missing message, wrong
// state, backend down). An error code plus an optional human-readable message; OK carries no
// allocation. Value type, thread-compatible. See STYLE.md section 4.
#pragma once

#include <memory>
#include <string>
#include <string_view>

namespace chronoq {

enum class Errc {
  kOk = 0,
  kNotFound,
  kAlreadyExists,
  kInvalidArgument,
  kInvalidState,  // an illegal lifecycle transition
  kConflict,
  kResourceExhausted,  // a limit is reached (a full topic); trying later may succeed
  kUnavailable,        // a backend is down or unreachable
  kTryLater,  // closed for a while on purpose (a topic being migrated): the same request later
  kTimeout,
  kIOError,
  kCorruption,
  kInternal,
};

// Stable lower-case name of a code ("not_found"), for logs and tests.
std::string_view ErrcName(Errc code);

class [[nodiscard]] Status {
 public:
  Status() = default;  // OK
  Status(Errc code, std::string message);

  static Status Ok() { return Status(); }

  bool ok() const { return code_ == Errc::kOk; }
  Errc code() const { return code_; }
  // The message given at construction; empty for OK.
  const std::string& message() const;

  // "not_found: message xyz does not exist", for logs.
  std::string ToString() const;

  // Drops an error on purpose.
  void IgnoreError() const {}

  friend bool operator==(const Status& a, const Status& b) {
    return a.code_ == b.code_ && a.message() == b.message();
  }

 private:
  Errc code_ = Errc::kOk;
  std::shared_ptr<const std::string> message_;  // null when OK
};

inline Status NotFound(std::string msg) { return Status(Errc::kNotFound, std::move(msg)); }
inline Status InvalidArgument(std::string msg) {
  return Status(Errc::kInvalidArgument, std::move(msg));
}
inline Status InvalidState(std::string msg) { return Status(Errc::kInvalidState, std::move(msg)); }
inline Status Internal(std::string msg) { return Status(Errc::kInternal, std::move(msg)); }
inline Status IOError(std::string msg) { return Status(Errc::kIOError, std::move(msg)); }
inline Status Unavailable(std::string msg) { return Status(Errc::kUnavailable, std::move(msg)); }
inline Status ResourceExhausted(std::string msg) {
  return Status(Errc::kResourceExhausted, std::move(msg));
}

}  // namespace chronoq

#define CQ_RETURN_IF_ERROR(expr)             \
  do {                                       \
    ::chronoq::Status cq_status_ = (expr);   \
    if (!cq_status_.ok()) return cq_status_; \
  } while (0)
