#include "base/status.h"

namespace chronoq {

std::string_view ErrcName(Errc code) {
  switch (code) {
    case Errc::kOk:
      return "ok";
    case Errc::kNotFound:
      return "not_found";
    case Errc::kAlreadyExists:
      return "already_exists";
    case Errc::kInvalidArgument:
      return "invalid_argument";
    case Errc::kInvalidState:
      return "invalid_state";
    case Errc::kConflict:
      return "conflict";
    case Errc::kResourceExhausted:
      return "resource_exhausted";
    case Errc::kUnavailable:
      return "unavailable";
    case Errc::kTryLater:
      return "try_later";
    case Errc::kTimeout:
      return "timeout";
    case Errc::kIOError:
      return "io_error";
    case Errc::kCorruption:
      return "corruption";
    case Errc::kInternal:
      return "internal";
  }
  return "unknown";
}

Status::Status(Errc code, std::string message) : code_(code) {
  if (code_ != Errc::kOk) message_ = std::make_shared<const std::string>(std::move(message));
}

const std::string& Status::message() const {
  static const std::string kEmpty;
  return message_ ? *message_ : kEmpty;
}

std::string Status::ToString() const {
  std::string out(ErrcName(code_));
  if (!message().empty()) {
    out += ": ";
    out += message();
  }
  return out;
}

}  // namespace chronoq
