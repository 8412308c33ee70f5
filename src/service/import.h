// The request of importMsgBatch (docs/api-extensions.md "Export and import", issue 21): messages
// with the full state an export (`chronoq export`, `chronoq import-camellia`) carries, decoded by
// a protocol, checked and built into records by QueueService::Import
// (queue_service_import.cc). Plain value types.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "base/status.h"
#include "core/callback.h"

namespace chronoq::service {

// One message as exported: the message object of API.md section 3 and API-EXTENSIONS.md section
// 1, plus the export fields (visibleTime, ackDeadline, retryIntervalMillis). Times are ms since
// the epoch.
struct ImportItem {
  // Not OK where the protocol could not read the item (not an object, a field of the wrong
  // type, a required field missing): answered with it, never stored.
  Status unreadable;
  std::string topic;
  std::string msg_id;
  std::string msg;
  int64_t produce_time = 0;
  int64_t trigger_time = 0;
  int64_t expire_time = 0;
  int64_t max_retry = 0;
  int64_t retry = 0;   // deliveries so far (push lane: attempts)
  int64_t status = 0;  // 1..3; ended ones (4..7) are refused
  int64_t priority = 0;
  int64_t count_trigger = 0;
  int64_t count = 0;
  std::string last_error;
  bool push = false;  // in its topic's push lane
  std::optional<core::Callback> callback{};
  // Pending (no ackDeadline): when it is or became consumable; absent: its trigger time (status
  // 1), or the earlier of its trigger time and now (status 2).
  std::optional<int64_t> visible_time{};
  // A delivery (required with status 3, allowed with 1 and 2: a delivery past its deadline
  // waiting out its retry interval, or consumable again): its ack deadline.
  std::optional<int64_t> ack_deadline{};
  int64_t retry_interval_millis = 0;  // with ack_deadline: the delivery's retry interval
  struct DeadLetter {
    std::string topic;
    int64_t status = 0;  // 5 or 6
    int64_t retry = 0;
    int64_t end_time = 0;
  };
  std::optional<DeadLetter> dead_letter{};
};

struct ImportRequest {
  std::vector<ImportItem> items;  // 1..max-send-batch items, any topics
};

enum class ImportOutcome {
  kImported,  // stored with its state
  kSkipped,   // a message with its msgId is in life in its topic: left as it is
};

}  // namespace chronoq::service
