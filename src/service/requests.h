// The requests of the service layer (queue_service.h): what a protocol decoded from its wire
// format, before validation and defaults. A field a protocol may leave out is an optional; the
// service decides what its absence means. Required fields (topic, msgId, msg, delay) are the
// protocol's to demand, in its own terms (HTTP: "required parameter 'x' is missing"); the service
// checks their values. Plain value types.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

namespace chronoq::service {

struct SendRequest {
  std::string topic;
  std::string msg_id;  // empty: the server generates one
  std::string msg;
  int64_t delay_millis = 0;           // <= 0: consumable now
  std::optional<int64_t> ttl_millis;  // absent or <= 0: the server default
  std::optional<int32_t> max_retry;   // absent or < 0: the server default
};

struct PullRequest {
  std::string topic;
  std::optional<int32_t> batch;               // absent or <= 0: 1; clamped to max-pull-batch
  std::optional<int64_t> ack_timeout_millis;  // absent or <= 0: the server default
};

struct LongPollRequest {
  PullRequest pull;
  // How long to wait; absent or <= 0: the server default; clamped to
  // max-long-polling-timeout-millis.
  std::optional<int64_t> timeout_millis;
};

struct MessageRef {
  std::string topic;
  std::string msg_id;
};

struct AckRequest {
  MessageRef ref;
  bool ack = true;  // false: nack
};

struct DeleteRequest {
  MessageRef ref;
  bool release = false;  // forget the record at once instead of keeping it for retention
};

}  // namespace chronoq::service
