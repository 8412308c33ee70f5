#include "service/push_lane.h"

#include <utility>

namespace chronoq::service {

void BackendPushLane::TakeDue(std::string topic, int32_t max, Millis margin,
                              backend::Callback<Result<std::vector<PushJob>>> done) {
  backend_->TakePush(std::move(topic), max, margin,
                     [done = std::move(done)](Result<backend::PushTake> take) mutable {
                       if (!take.has_value()) return done(take.error());
                       std::vector<PushJob> jobs;
                       jobs.reserve(take->messages.size());
                       for (core::Message& m : take->messages) {
                         PushJob job;
                         job.callback = m.record.callback ? m.record.callback.ToOptional()
                                                          : take->topic_callback;
                         job.message = std::move(m);
                         jobs.push_back(std::move(job));
                       }
                       done(std::move(jobs));
                     });
}

void BackendPushLane::Finish(std::string topic, std::vector<PushResult> results,
                             backend::Callback<Status> done) {
  std::vector<backend::AckItem> items;
  items.reserve(results.size());
  for (PushResult& r : results) {
    backend::AckItem item;
    item.msg_id = std::move(r.msg_id);
    item.attempt = r.attempt;
    item.ack = r.verdict == PushVerdict::kAck;
    item.release = r.verdict == PushVerdict::kRelease;
    item.reason = std::move(r.reason);
    items.push_back(std::move(item));
  }
  // An item refused on its own (the attempt is over, the message was deleted) changed nothing,
  // which is what a late outcome must do; only a failed write is an error.
  backend_->AckBatch(std::move(topic), std::move(items),
                     [done = std::move(done)](Result<std::vector<Status>> res) mutable {
                       done(res.has_value() ? Status::Ok() : res.error());
                     });
}

}  // namespace chronoq::service
