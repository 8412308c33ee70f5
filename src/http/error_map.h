// The one table from Errc to the application `code` of API.md section 2 (queue operations always
// answer HTTP 200; the outcome is in `code`).
#pragma once

#include "base/status.h"

namespace chronoq::http {

// 400 for kInvalidArgument; 404 for kNotFound and kInvalidState; 500 for everything else
// (storage and internal errors). Never called with OK.
int AppCode(Errc code);

}  // namespace chronoq::http
