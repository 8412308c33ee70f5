#include "base/log.h"

#include <spdlog/sinks/stdout_sinks.h>
#include <spdlog/spdlog.h>

#include <atomic>
#include <ctime>
#include <mutex>

#include "base/utf8.h"

namespace chronoq::base {
namespace {

std::atomic<int> g_level{static_cast<int>(LogLevel::kInfo)};
std::atomic<bool> g_json{false};

spdlog::logger& Sink() {
  static std::shared_ptr<spdlog::logger> logger = [] {
    auto l = std::make_shared<spdlog::logger>("chronoq",
                                              std::make_shared<spdlog::sinks::stderr_sink_mt>());
    l->set_level(spdlog::level::trace);
    l->set_pattern("%v");
    return l;
  }();
  return *logger;
}

spdlog::level::level_enum ToSpd(LogLevel l) {
  switch (l) {
    case LogLevel::kTrace:
      return spdlog::level::trace;
    case LogLevel::kDebug:
      return spdlog::level::debug;
    case LogLevel::kInfo:
      return spdlog::level::info;
    case LogLevel::kWarn:
      return spdlog::level::warn;
    case LogLevel::kError:
      return spdlog::level::err;
    case LogLevel::kOff:
      return spdlog::level::off;
  }
  return spdlog::level::info;
}

std::string_view Name(LogLevel l) {
  switch (l) {
    case LogLevel::kTrace:
      return "trace";
    case LogLevel::kDebug:
      return "debug";
    case LogLevel::kInfo:
      return "info";
    case LogLevel::kWarn:
      return "warn";
    case LogLevel::kError:
      return "error";
    case LogLevel::kOff:
      return "off";
  }
  return "info";
}

// A JSON string. Control characters are escaped; text that is not valid UTF-8 (a malformed
// topic quoted in an error) has each byte above 0x7F escaped as \u00XX, so every line is valid
// JSON whatever it quotes.
void AppendJsonString(std::string& out, std::string_view s) {
  bool utf8 = IsValidUtf8(s);
  out.push_back('"');
  for (unsigned char c : s) {
    if (c == '"' || c == '\\') {
      out.push_back('\\');
      out.push_back(static_cast<char>(c));
    } else if (c == '\n') {
      out += "\\n";
    } else if (c < 0x20 || c == 0x7f || (c >= 0x80 && !utf8)) {
      fmt::format_to(std::back_inserter(out), "\\u{:04x}", c);
    } else {
      out.push_back(static_cast<char>(c));
    }
  }
  out.push_back('"');
}

// key=value, the value quoted (JSON-style) when it is empty or holds a space, quote or '='.
void AppendTextField(std::string& out, std::string_view key, std::string_view value) {
  out.push_back(' ');
  out += key;
  out.push_back('=');
  bool plain = !value.empty() && value.find_first_of(" \"=\\") == std::string_view::npos &&
               !HasControlChars(value);
  if (plain) {
    out += value;
  } else {
    AppendJsonString(out, value);
  }
}

std::string_view BaseName(const char* file) {
  std::string_view f(file);
  size_t pos = f.rfind("/src/");
  return pos == std::string_view::npos ? f : f.substr(pos + 5);
}

// 2026-11-21T19:44:01.123Z
std::string Timestamp() {
  auto now = std::chrono::system_clock::now();
  auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(now.time_since_epoch()).count();
  std::time_t secs = static_cast<std::time_t>(ms / 1000);
  std::tm tm{};
  gmtime_r(&secs, &tm);
  return fmt::format("{:04}-{:02}-{:02}T{:02}:{:02}:{:02}.{:03}Z", tm.tm_year + 1900, tm.tm_mon + 1,
                     tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec, ms % 1000);
}

}  // namespace

bool ParseLogLevel(std::string_view text, LogLevel* out) {
  for (LogLevel l : {LogLevel::kTrace, LogLevel::kDebug, LogLevel::kInfo, LogLevel::kWarn,
                     LogLevel::kError, LogLevel::kOff}) {
    if (text == Name(l)) {
      *out = l;
      return true;
    }
  }
  return false;
}

void InitLogging(LogLevel level, bool json) {
  g_level.store(static_cast<int>(level));
  g_json.store(json);
  Sink();
}

bool LogEnabled(LogLevel level) {
  return static_cast<int>(level) >= g_level.load(std::memory_order_relaxed) &&
         level != LogLevel::kOff;
}

std::string FormatLogLine(bool json, std::string_view time, LogLevel level, std::string_view logger,
                          std::string_view src, std::string_view msg, const LogFields& fields) {
  std::string out;
  if (!json) {
    out = fmt::format("{} {:<5} {} {}] {}", time, Name(level), logger, src, msg);
    for (const auto& [k, v] : fields) AppendTextField(out, k, v);
    return out;
  }
  out = fmt::format(R"({{"time":"{}","level":"{}","logger":)", time, Name(level));
  AppendJsonString(out, logger);
  out += ",\"src\":";
  AppendJsonString(out, src);
  out += ",\"msg\":";
  AppendJsonString(out, msg);
  if (!fields.empty()) {
    out += ",\"fields\":{";
    for (size_t i = 0; i < fields.size(); ++i) {
      if (i > 0) out.push_back(',');
      AppendJsonString(out, fields[i].first);
      out.push_back(':');
      AppendJsonString(out, fields[i].second);
    }
    out.push_back('}');
  }
  out.push_back('}');
  return out;
}

void LogMessage(LogLevel level, std::string_view logger, const char* file, int line,
                std::string_view msg, const LogFields& fields) {
  std::string src = fmt::format("{}:{}", BaseName(file), line);
  Sink().log(ToSpd(level), FormatLogLine(g_json.load(std::memory_order_relaxed), Timestamp(), level,
                                         logger, src, msg, fields));
}

}  // namespace chronoq::base
