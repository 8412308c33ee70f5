#include "http/error_map.h"

namespace chronoq::http {

int AppCode(Errc code) {
  switch (code) {
    case Errc::kOk:
      return 200;
    case Errc::kInvalidArgument:
      return 400;
    case Errc::kNotFound:
      return 404;
    case Errc::kInvalidState:
      return 404;
    case Errc::kResourceExhausted:
      return 429;
    case Errc::kTryLater:
      return 503;
    case Errc::kAlreadyExists:
    case Errc::kConflict:
    case Errc::kUnavailable:
    case Errc::kTimeout:
    case Errc::kIOError:
    case Errc::kCorruption:
    case Errc::kInternal:
      return 500;
  }
  return 500;
}

}  // namespace chronoq::http
