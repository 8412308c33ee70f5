#include "cli/format.h"

#include <fmt/format.h>

#include <algorithm>
#include <ctime>

namespace chronoq::cli {

std::string IsoUtc(int64_t epoch_ms) {
  int64_t secs = epoch_ms / 1000;
  int64_t millis = epoch_ms % 1000;
  if (millis < 0) {
    millis += 1000;
    secs -= 1;
  }
  std::time_t t = static_cast<std::time_t>(secs);
  std::tm tm{};
  if (::gmtime_r(&t, &tm) == nullptr) return fmt::format("{} ms", epoch_ms);
  return fmt::format("{:04}-{:02}-{:02}T{:02}:{:02}:{:02}.{:03}Z", tm.tm_year + 1900, tm.tm_mon + 1,
                     tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec, millis);
}

std::string_view StatusName(int64_t status) {
  static constexpr std::string_view kNames[] = {
      "WAITING", "READY", "CONSUMING", "CONSUME_OK", "EXPIRE", "RETRY_EXHAUST", "DELETE"};
  if (status < 1 || status > 7) return "UNKNOWN";
  return kNames[status - 1];
}

std::string Printable(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (unsigned char c : s) {
    if (c == '\\') {
      out += "\\\\";
    } else if (c == '\n') {
      out += "\\n";
    } else if (c == '\t') {
      out += "\\t";
    } else if (c < 0x20 || c == 0x7f) {
      out += fmt::format("\\x{:02x}", c);
    } else {
      out.push_back(static_cast<char>(c));
    }
  }
  return out;
}

namespace {

std::string CountText(const client::Json& m) {
  return fmt::format("{} of {}", m["count"].AsInt(), m["countTrigger"].AsInt());
}

}  // namespace

std::string StateLine(const client::Json& m) {
  std::string out =
      fmt::format("{}, triggers at {}, expires at {}", StatusName(m["status"].AsInt()),
                  IsoUtc(m["triggerTime"].AsInt()), IsoUtc(m["expireTime"].AsInt()));
  if (m.Has("priority")) out += fmt::format(", priority {}", m["priority"].AsInt());
  if (m.Has("countTrigger")) out += ", count " + CountText(m);
  return out;
}

std::string MessageBlock(const client::Json& m) {
  int64_t status = m["status"].AsInt();
  int64_t max_retry = m["maxRetry"].AsInt();
  std::string out;
  auto line = [&](std::string_view field, std::string_view value) {
    out += fmt::format("{:<12} {}\n", field, value);
  };
  line("msgId", Printable(m["msgId"].AsString()));
  line("topic", Printable(m["topic"].AsString()));
  line("status", fmt::format("{} ({})", StatusName(status), status));
  line("msg", Printable(m["msg"].AsString()));
  line("produced", IsoUtc(m["produceTime"].AsInt()));
  line("trigger", IsoUtc(m["triggerTime"].AsInt()));
  line("expire", IsoUtc(m["expireTime"].AsInt()));
  line("deliveries",
       fmt::format("{} of at most {} (maxRetry {})", m["retry"].AsInt(), max_retry + 1, max_retry));
  if (m.Has("priority")) line("priority", std::to_string(m["priority"].AsInt()));
  if (m.Has("countTrigger")) line("count", CountText(m) + " (countTrigger)");
  if (m.Has("lastError")) line("lastError", Printable(m["lastError"].AsString()));
  return out;
}

std::string Table(const std::vector<std::vector<std::string>>& rows) {
  std::vector<size_t> widths;
  for (const auto& row : rows) {
    if (widths.size() < row.size()) widths.resize(row.size(), 0);
    for (size_t i = 0; i < row.size(); ++i) widths[i] = std::max(widths[i], row[i].size());
  }
  std::string out;
  for (const auto& row : rows) {
    std::string line;
    for (size_t i = 0; i < row.size(); ++i) {
      if (i == 0) {
        line += fmt::format("{:<{}}", row[i], widths[i]);
      } else {
        line += fmt::format("  {:>{}}", row[i], widths[i]);
      }
    }
    while (!line.empty() && line.back() == ' ') line.pop_back();
    out += line + "\n";
  }
  return out;
}

}  // namespace chronoq::cli
