// ListCursor: where a listMsg page of the embedded engine ends (API-EXTENSIONS.md section 3), and
// its text form, the opaque `nextCursor` clients hand back. A cursor is a position in the listed
// order, not a snapshot: the next page starts strictly after it, so a message that keeps its
// status (and so its position) is listed exactly once on a walk, whatever changes meanwhile.
//
// Positions per status: WAITING (visible_at, seq): when each becomes consumable (trigger time, or
// end of the retry interval of a delivery waiting for its redelivery); READY (level, visible_at,
// seq) in pull order (level descending: the push lane's 19..10, then the pull lane's 9..0, see
// engine/topic.h; a cursor made before issue 16 holds a priority, the same pull-lane level);
// CONSUMING (visible_at, seq) of the delivery: ack deadline plus its retry interval; ended statuses
// (ended_at, seq). A cursor may also stand at the start of a status (a walk without status moving
// on to READY or CONSUMING).
//
// Text: "cq1" then fields joined by '.', lowercase hex, and a checksum over the topic and the
// fields, so that a cursor of another topic, an altered one or one made by another backend is
// refused (kInvalidArgument "cursor is not valid: ..."). Printable ASCII, at most ~80 bytes.
//
// Plain value type and pure functions.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "base/result.h"
#include "base/time.h"
#include "core/message.h"

namespace chronoq::engine {

struct ListCursor {
  bool walk = false;  // made by a listing without status (WAITING, then READY, then CONSUMING)
  core::MsgStatus status = core::MsgStatus::kWaiting;
  bool at_start = true;  // before the first message of `status`; the fields below are unused
  int32_t level = 0;     // READY only: Topic::Level, 0..19
  TimePoint t{};
  uint64_t seq = 0;

  bool operator==(const ListCursor&) const = default;
};

std::string EncodeListCursor(std::string_view topic, const ListCursor& c);

// Decodes `text`, made by EncodeListCursor for this topic and for a listing of `status` (nullopt:
// a walk). Errors: kInvalidArgument "cursor is not valid: <why>".
Result<ListCursor> DecodeListCursor(std::string_view topic, std::optional<core::MsgStatus> status,
                                    std::string_view text);

}  // namespace chronoq::engine
