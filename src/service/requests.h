// The requests of the service layer (queue_service.h): what a protocol decoded from its wire
// format, before validation and defaults. A field a protocol may leave out is an optional; the
// service decides what its absence means. Required fields (topic, msgId, msg, delay) are the
// protocol's to demand, in its own terms (HTTP: "required parameter 'x' is missing"); the service
// checks their values. Plain value types.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "base/status.h"
#include "core/callback.h"

namespace chronoq::service {

struct SendRequest {
  std::string topic;   // ignored in a SendBatch item (the batch names the topic)
  std::string msg_id;  // empty: the server generates one
  std::string msg;
  // Exactly one of delay_millis and trigger_time (API-EXTENSIONS.md section 2).
  std::optional<int64_t> delay_millis{};     // <= 0: consumable now
  std::optional<int64_t> ttl_millis{};       // absent or <= 0: the server default
  std::optional<int32_t> max_retry{};        // absent or < 0: the server default
  std::optional<int64_t> trigger_time{};     // ms since the epoch; in the past: consumable now
  std::optional<int64_t> priority{};         // absent: 0; else 0..9
  std::optional<int64_t> count_trigger{};    // absent: 0 (none); else >= 0
  std::optional<core::Callback> callback{};  // push delivery (docs/push.md)
};

struct SendBatchRequest {
  std::string topic;
  std::vector<SendRequest> msgs;  // 1..max-send-batch items, msgIds distinct
  // Empty, or one per item of msgs: not OK where the caller could not read the item (a JSON value
  // of the wrong type...). Such an item is answered with that status and never stored, but counts
  // toward max-send-batch, and its msg_id (when it gave one) toward the distinct msgIds.
  std::vector<Status> unreadable{};
};

struct PullRequest {
  std::string topic;
  std::optional<int32_t> batch{};               // absent or <= 0: 1; clamped to max-pull-batch
  std::optional<int64_t> ack_timeout_millis{};  // absent or <= 0: the server default
};

struct LongPollRequest {
  PullRequest pull;
  // How long to wait; absent or <= 0: the server default; clamped to
  // max-long-polling-timeout-millis.
  std::optional<int64_t> timeout_millis{};
};

struct MessageRef {
  std::string topic;
  std::string msg_id;
};

struct AckRequest {
  MessageRef ref;
  bool ack = true;  // false: nack
  // A nack's reason, kept as the message's lastError; checked but not kept on an ack.
  std::string reason{};
};

struct AckBatchRequest {
  std::string topic;
  std::vector<std::string> ack;   // ids to ack
  std::vector<std::string> nack;  // ids to nack
  std::string reason{};           // for the nacks
};

// One answer of AckBatch: in the order ack ids, then nack ids.
struct AckResult {
  std::string msg_id;
  bool ack = true;
  Status status;
};

// updateMsg: at least one field besides the reference.
struct UpdateRequest {
  MessageRef ref;
  std::optional<int64_t> delay_millis{};  // not with trigger_time
  std::optional<int64_t> trigger_time{};
  std::optional<std::string> msg{};
  std::optional<int64_t> ttl_millis{};  // > 0
  std::optional<int64_t> max_retry{};   // >= 0
  std::optional<int64_t> priority{};    // 0..9
};

struct TouchRequest {
  MessageRef ref;
  std::optional<int64_t> ack_timeout_millis{};  // absent or <= 0: the server default
};

struct CountRequest {
  MessageRef ref;
  std::optional<int64_t> count{};  // absent: 1; else >= 1
};

struct ListRequest {
  std::string topic;
  std::optional<int64_t> status{};  // absent: 1, 2 and 3; else 1..7
  std::optional<int64_t> limit{};   // absent: 100; >= 1; clamped to 1,000
  std::string cursor;               // empty: the first page
  // The callbacks' real header values (listMsg export=true, admin only); else masked
  // (service/session.h).
  bool reveal_callback_headers = false;
};

struct DeleteRequest {
  MessageRef ref;
  bool release = false;  // forget the record at once instead of keeping it for retention
};

// setTopicConfig (API-EXTENSIONS.md section 4): the fields to set; at least one.
struct TopicConfigRequest {
  std::string topic;
  std::optional<int64_t> capacity{};               // >= 0; 0: unlimited
  std::optional<int64_t> ttl_millis{};             // > 0
  std::optional<int64_t> max_retry{};              // >= 0
  std::optional<int64_t> ack_timeout_millis{};     // > 0
  std::optional<int64_t> retry_interval_millis{};  // >= 0
  std::optional<std::string> dead_letter_topic{};  // "": none
  std::optional<bool> paused{};
  std::optional<bool> history{};
  // Push delivery (docs/push.md): set (checked like a message's callback), or an empty inner
  // value: none.
  std::optional<std::optional<core::Callback>> callback{};
};

struct PurgeRequest {
  std::string topic;
  std::optional<int64_t> status{};  // absent: every in-life message; else 1..3
};

struct RedriveRequest {
  std::string topic;  // the dead-letter topic
  std::optional<std::string> msg_id{};
  std::optional<int64_t> limit{};         // absent: 100; >= 1; clamped to max-list-limit
  std::optional<int64_t> delay_millis{};  // absent or <= 0: consumable at once
};

}  // namespace chronoq::service
