// Logging: a thin layer over spdlog (which stays inside base/log.cc). Each module logs under its
// own name ("cq.http", "cq.engine"). Levels follow STYLE.md section 10: error = an operator must
// act, warn = degraded but serving, info = lifecycle only, debug = per request. Never log message
// payloads. Logs go to stderr; stdout is reserved for the "listening" line.
//
// Thread-safety: all functions are thread-safe; InitLogging should run once, early.
#pragma once

#include <fmt/format.h>

#include <string_view>

namespace chronoq::base {

enum class LogLevel { kTrace, kDebug, kInfo, kWarn, kError, kOff };

// Parses "trace|debug|info|warn|error|off"; false when unknown.
bool ParseLogLevel(std::string_view text, LogLevel* out);

void InitLogging(LogLevel level, bool json);
bool LogEnabled(LogLevel level);
void LogMessage(LogLevel level, std::string_view logger, const char* file, int line,
                std::string_view msg);

}  // namespace chronoq::base

#define CQ_LOG(level, logger, ...)                                                              \
  do {                                                                                          \
    if (::chronoq::base::LogEnabled(level)) {                                                   \
      ::chronoq::base::LogMessage(level, logger, __FILE__, __LINE__, fmt::format(__VA_ARGS__)); \
    }                                                                                           \
  } while (0)
#define CQ_LOG_DEBUG(logger, ...) CQ_LOG(::chronoq::base::LogLevel::kDebug, logger, __VA_ARGS__)
#define CQ_LOG_INFO(logger, ...) CQ_LOG(::chronoq::base::LogLevel::kInfo, logger, __VA_ARGS__)
#define CQ_LOG_WARN(logger, ...) CQ_LOG(::chronoq::base::LogLevel::kWarn, logger, __VA_ARGS__)
#define CQ_LOG_ERROR(logger, ...) CQ_LOG(::chronoq::base::LogLevel::kError, logger, __VA_ARGS__)
