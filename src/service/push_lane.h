// BackendPushLane: the push scheduler's storage side (service::PushLane) over any
// backend::QueueBackend: a take is the backend's TakePush, the outcomes of a topic's attempts are
// one AckBatch (ack, nack with the error as reason, release), each item guarded by its attempt
// number so that a late outcome never ends a newer attempt (docs/push.md).
//
// Thread-safety: as the backend's.
#pragma once

#include <string>
#include <vector>

#include "backend/queue_backend.h"
#include "service/push_scheduler.h"

namespace chronoq::service {

class BackendPushLane final : public PushLane {
 public:
  // REQUIRES: `backend` outlives this.
  explicit BackendPushLane(backend::QueueBackend* backend) : backend_(backend) {}

  void TakeDue(std::string topic, int32_t max, Millis margin,
               backend::Callback<Result<std::vector<PushJob>>> done) override;
  void Finish(std::string topic, std::vector<PushResult> results,
              backend::Callback<Status> done) override;

 private:
  backend::QueueBackend* const backend_;
};

}  // namespace chronoq::service
