// Limits and defaults of the queue API (API.md sections 4, 7 and 8). Plain values, filled from
// configuration by the app and handed to whoever checks requests.
#pragma once

#include <cstddef>
#include <cstdint>

#include "base/time.h"

namespace chronoq::core {

inline constexpr int32_t kMaxPriority = 9;  // priorities are 0..9
inline constexpr Millis kTenYears = Millis(int64_t{10} * 365 * 24 * 3600 * 1000);

// Each limit is the largest value allowed.
struct Limits {
  size_t max_topic_bytes = 255;
  size_t max_msg_id_bytes = 255;
  size_t max_msg_bytes = size_t{4} << 20;
  int32_t max_pull_batch = 1000;                      // larger batches are clamped
  int32_t max_send_batch = 1000;                      // sendMsgBatch items; more is refused
  int32_t max_list_limit = 1000;                      // larger listMsg limits are clamped
  size_t max_reason_bytes = 1024;                     // a nack reason
  Millis max_long_polling_timeout = Millis(120'000);  // longer timeouts are clamped
  Millis max_delay = kTenYears;
  size_t max_parked_long_polls = 10'000;  // more long polls are answered at once
  size_t max_parked_long_polls_per_topic = 10'000;
};

// Server defaults used when a request leaves a value out (or gives one <= 0, see API.md).
struct Defaults {
  Millis ttl = Millis(3'600'000);
  int32_t max_retry = 10;
  Millis ack_timeout = Millis(30'000);
  Millis long_polling_timeout = Millis(10'000);
};

}  // namespace chronoq::core
