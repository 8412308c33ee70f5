// The input of the subcommands that take many items at once (send-batch: JSON lines; ack --batch:
// message ids): reading it from a file or stdin, cutting it into lines, and the JSON text of the
// batch requests they send. ReadInput is the only I/O; the rest are pure functions.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "base/result.h"

namespace chronoq::cli {

// The most items one sendMsgBatch or ackMsgBatch request carries: the server's default
// max-send-batch and max-pull-batch (API-EXTENSIONS.md sections 2 and 3). Larger inputs are sent
// in several requests.
inline constexpr size_t kMaxBatchItems = 1000;

// The whole text of the file at `path`, or of stdin when `path` is "-". kInvalidArgument naming
// `what` (the option or the input) when it cannot be read, or when stdin is a terminal: nobody
// types a batch by hand, and waiting for it would look like a hang.
Result<std::string> ReadInput(std::string_view path, std::string_view what);

struct InputLine {
  int64_t number = 0;     // 1-based line number in the input
  std::string_view text;  // without its line end ("\n" or "\r\n")
};
// The lines of `text` that hold more than spaces and tabs, with their line numbers.
std::vector<InputLine> NonBlankLines(std::string_view text);

// `s` as a JSON string: quoted, with '"', '\\' and control characters escaped (UTF-8 kept).
std::string JsonString(std::string_view s);

}  // namespace chronoq::cli
