#include "base/log.h"

#include <spdlog/sinks/stdout_sinks.h>
#include <spdlog/spdlog.h>

#include <atomic>
#include <ctime>
#include <mutex>

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

void AppendJsonString(std::string& out, std::string_view s) {
  out.push_back('"');
  for (unsigned char c : s) {
    if (c == '"' || c == '\\') {
      out.push_back('\\');
      out.push_back(static_cast<char>(c));
    } else if (c < 0x20) {
      fmt::format_to(std::back_inserter(out), "\\u{:04x}", c);
    } else {
      out.push_back(static_cast<char>(c));
    }
  }
  out.push_back('"');
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

void LogMessage(LogLevel level, std::string_view logger, const char* file, int line,
                std::string_view msg) {
  std::string ts = Timestamp();
  std::string out;
  if (g_json.load(std::memory_order_relaxed)) {
    out =
        fmt::format("{{\"ts\":\"{}\",\"level\":\"{}\",\"logger\":\"{}\",", ts, Name(level), logger);
    out += "\"src\":";
    AppendJsonString(out, fmt::format("{}:{}", BaseName(file), line));
    out += ",\"msg\":";
    AppendJsonString(out, msg);
    out += "}";
  } else {
    out = fmt::format("{} {:<5} {} {}:{}] {}", ts, Name(level), logger, BaseName(file), line, msg);
  }
  Sink().log(ToSpd(level), out);
}

}  // namespace chronoq::base
