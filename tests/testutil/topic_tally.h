// Tally: adds one message of a given status to the expected TopicInfo of a model test, the way
// getTopicInfo counts it (waiting messages also land in their time-until-trigger bucket).
#pragma once

#include "base/time.h"
#include "core/message.h"
#include "core/topic_info.h"

namespace chronoq::testutil {

inline void Tally(core::TopicInfo& info, core::MsgStatus status, Millis until_trigger) {
  switch (status) {
    case core::MsgStatus::kWaiting:
      ++info.waiting;
      ++info.buckets[core::BucketOf(until_trigger)];
      break;
    case core::MsgStatus::kReady:
      ++info.ready;
      break;
    case core::MsgStatus::kConsuming:
      ++info.consuming;
      break;
    default:
      break;
  }
}

}  // namespace chronoq::testutil
