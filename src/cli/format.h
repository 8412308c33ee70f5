// Human-readable output of the client subcommands: times, statuses, payloads, message blocks and
// aligned tables. Pure functions returning strings; the subcommands print them.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "client/json.h"

namespace chronoq::cli {

// Milliseconds since the epoch as ISO-8601 UTC with milliseconds: "2026-11-22T01:51:04.123Z".
std::string IsoUtc(int64_t epoch_ms);

// "WAITING" for status 1 ... "DELETE" for 7 (API.md section 5); "UNKNOWN" otherwise.
std::string_view StatusName(int64_t status);

// A payload or name made safe for one terminal line: control characters and backslashes are
// written as escapes (\n, \t, \\, \x1b), everything else (UTF-8 included) is kept.
std::string Printable(std::string_view s);

// A message's state in one line: "WAITING, triggers at <time>, expires at <time>", plus
// ", priority 5" and ", count 2 of 3" when it has those extension fields (API-EXTENSIONS.md
// section 1).
std::string StateLine(const client::Json& m);

// A message object (API.md section 3) as an aligned block of "field  value" lines; extension
// fields (priority, countTrigger and count, lastError) get a line when the message has them.
std::string MessageBlock(const client::Json& m);

// Rows of cells as an aligned table; the first row is the header. Columns after the first are
// right-aligned (they hold numbers).
std::string Table(const std::vector<std::vector<std::string>>& rows);

}  // namespace chronoq::cli
