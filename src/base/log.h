// Logging: a thin layer over spdlog (which stays inside base/log.cc). Each module logs under its
// own name ("cq.http", "cq.engine"). Levels follow STYLE.md section 10: error = an operator must
// act, warn = degraded but serving, info = lifecycle only, debug = per request. Never log message
// payloads. Logs go to stderr; stdout is reserved for the "listening" line.
//
// A line carries a message and optional fields (key, value). Text format:
//   2026-11-21T19:44:01.123Z info  cq.app app/serve.cc:120] started storage=embedded
//   ttl-millis=60000
// JSON format, one object per line:
//   {"time":"2026-11-21T19:44:01.123Z","level":"info","logger":"cq.app","src":"app/serve.cc:120",
//    "msg":"started","fields":{"storage":"embedded","ttl-millis":"60000"}}
// ("fields" only when there are some; every value a string.)
//
// Thread-safety: all functions are thread-safe; InitLogging should run once, early.
#pragma once

#include <fmt/format.h>

#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace chronoq::base {

enum class LogLevel { kTrace, kDebug, kInfo, kWarn, kError, kOff };

// Parses "trace|debug|info|warn|error|off"; false when unknown.
bool ParseLogLevel(std::string_view text, LogLevel* out);

using LogFields = std::vector<std::pair<std::string, std::string>>;

void InitLogging(LogLevel level, bool json);
bool LogEnabled(LogLevel level);
void LogMessage(LogLevel level, std::string_view logger, const char* file, int line,
                std::string_view msg, const LogFields& fields = {});
// One line as InitLogging's format writes it (tests).
std::string FormatLogLine(bool json, std::string_view time, LogLevel level, std::string_view logger,
                          std::string_view src, std::string_view msg, const LogFields& fields);

}  // namespace chronoq::base

#define CQ_LOG(level, logger, ...)                                                              \
  do {                                                                                          \
    if (::chronoq::base::LogEnabled(level)) {                                                   \
      ::chronoq::base::LogMessage(level, logger, __FILE__, __LINE__, fmt::format(__VA_ARGS__)); \
    }                                                                                           \
  } while (0)
// CQ_LOG_FIELDS(kInfo, "cq.app", fields, "started on {}", addr): a line with fields.
#define CQ_LOG_FIELDS(level, logger, fields, ...)                                              \
  do {                                                                                         \
    if (::chronoq::base::LogEnabled(level)) {                                                  \
      ::chronoq::base::LogMessage(level, logger, __FILE__, __LINE__, fmt::format(__VA_ARGS__), \
                                  fields);                                                     \
    }                                                                                          \
  } while (0)
#define CQ_LOG_DEBUG(logger, ...) CQ_LOG(::chronoq::base::LogLevel::kDebug, logger, __VA_ARGS__)
#define CQ_LOG_INFO(logger, ...) CQ_LOG(::chronoq::base::LogLevel::kInfo, logger, __VA_ARGS__)
#define CQ_LOG_WARN(logger, ...) CQ_LOG(::chronoq::base::LogLevel::kWarn, logger, __VA_ARGS__)
#define CQ_LOG_ERROR(logger, ...) CQ_LOG(::chronoq::base::LogLevel::kError, logger, __VA_ARGS__)
