// RedisBackend::Import (backend/queue_backend.h; issue 21): one script (scripts_import.cc), so
// atomic on the topic, after the topic is registered (getTopicInfoList) and, when a message is
// in the push lane, listed in the push set (as a send with its own callback is).
#include <memory>

#include "redis/redis_backend.h"
#include "redis/script_reply.h"

namespace chronoq::redis {

using backend::Callback;
using core::MessageRecord;
using core::MsgStatus;

void RedisBackend::Import(std::vector<MessageRecord> records,
                          Callback<Result<std::vector<bool>>> done) {
  if (records.empty()) return done(std::vector<bool>());
  const TimePoint now = clock_->Now();
  const std::string topic = records.front().topic;
  std::vector<std::string> args = {Ms(now), std::to_string(options_.retention.count())};
  args.reserve(2 + 20 * records.size());
  bool push = false;
  bool ready = false;
  bool due = false;
  for (MessageRecord& r : records) {
    const bool delivered = r.phase == core::Phase::kDelivered;
    args.push_back(r.msg_id);
    args.push_back(std::move(r.payload));
    args.push_back(Ms(r.produce_time));
    args.push_back(Ms(r.trigger_time));
    args.push_back(Ms(r.expire_time));
    args.push_back(std::to_string(r.max_retry));
    args.push_back(std::to_string(r.priority));
    args.push_back(std::to_string(r.count_trigger));
    args.push_back(std::to_string(r.count));
    args.push_back(r.last_error);
    args.push_back(CallbackBytes(r.callback));
    args.push_back(r.push ? "1" : "0");
    args.push_back(std::to_string(r.retry));
    args.push_back(delivered ? "1" : "0");
    args.push_back(Ms(r.visible_at));
    args.push_back(std::to_string(delivered ? r.retry_interval.count() : 0));
    const core::DeadLetter* d = r.dead_letter ? &*r.dead_letter : nullptr;
    args.push_back(d != nullptr ? d->topic : std::string());
    args.push_back(d != nullptr ? std::to_string(static_cast<int>(d->status)) : "0");
    args.push_back(d != nullptr ? std::to_string(d->retry) : "0");
    args.push_back(d != nullptr ? Ms(d->end_time) : "0");
    push |= r.push;
    if (core::StatusAt(r, now) == MsgStatus::kReady) (r.push ? due : ready) = true;
  }
  const size_t n = records.size();
  auto shared_done = std::make_shared<Callback<Result<std::vector<bool>>>>(std::move(done));
  auto script = [this, topic, args = std::move(args), n, push, ready, due,
                 shared_done](Status listed) mutable {
    if (!listed.ok()) return (*shared_done)(std::move(listed));
    Eval(kImportScript, topic, std::move(args),
         AfterReplicas(
             topic, [this, topic, n, push, ready, due, shared_done](Result<RedisReply> r) mutable {
               Callback<Result<std::vector<bool>>>& answer = *shared_done;
               if (!r.has_value()) return answer(r.error());
               const auto& e = r->elements;
               if (r->type != RedisReply::Type::kArray || e.size() != n + 1) {
                 return answer(Unexpected(*r, "import"));
               }
               std::vector<bool> out(n);
               for (size_t i = 0; i < n; ++i) out[i] = Str(e[i + 1]) == "NEW";
               const std::string next = Str(e[0]);
               if (!next.empty()) {
                 if (push) PushWatched(topic, /*add=*/true);
                 if (ready) {
                   News(topic);
                   NotifyReady(topic);
                 }
                 if (due) NotifyPush(topic);
                 ArmWake(topic, next);
                 Publish(topic,
                         (ready ? kPubPullReady : 0) | (due ? kPubPushReady : 0) |
                             (push ? kPubPushLane : 0),
                         next);
               }
               answer(std::move(out));
             }));
  };
  RegisterTopic(topic, now, [this, topic, push, script = std::move(script)]() mutable {
    if (!push) return script(Status::Ok());
    EnsurePushListed(topic, /*force=*/false, std::move(script));
  });
}

}  // namespace chronoq::redis
