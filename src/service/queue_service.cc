#include "service/queue_service.h"

#include <algorithm>
#include <utility>

#include "base/base64.h"
#include "core/scope.h"
#include "core/validation.h"
#include "metrics/exposition.h"
#include "service/masking.h"

namespace chronoq::service {
namespace {

// Shared by Pull and LongPoll: the checked request, or the error.
Result<PollSpec> CheckPull(PullRequest& req, const ServiceOptions& o) {
  CQ_RETURN_IF_ERROR(core::ValidateScopedTopic(req.topic, o.limits));
  PollSpec spec;
  spec.topic = std::move(req.topic);
  spec.batch = req.batch && *req.batch > 0 ? std::min(*req.batch, o.limits.max_pull_batch) : 1;
  if (req.ack_timeout_millis && *req.ack_timeout_millis > 0) {
    spec.ack_timeout = Millis(*req.ack_timeout_millis);
  }  // else the topic's, resolved by the backend
  return spec;
}

}  // namespace

QueueService::QueueService(backend::QueueBackend* backend, const base::Clock* clock,
                           base::Scheduler* scheduler, ServiceOptions options)
    : backend_(backend),
      clock_(clock),
      options_(std::move(options)),
      topic_defaults_(options_.defaults, options_.topic_files),
      recorder_(clock, options_.monitor_interval, options_.metrics_max_topics),
      waiters_(backend, clock, scheduler, options_.limits.max_parked_long_polls,
               options_.limits.max_parked_long_polls_per_topic),
      push_metrics_(clock),
      push_lane_(backend),
      push_(options_.push_transport == nullptr
                ? nullptr
                : std::make_unique<PushScheduler>(&push_lane_, options_.push_transport,
                                                  options_.push, &push_metrics_)),
      lanes_(&waiters_, push_.get()) {
  backend_->SetTopicDefaults(&topic_defaults_);
  backend_->SetEventSink(&recorder_);
  // Last: the backend announces the topics with push work at once.
  backend_->SetReadyListener(&lanes_);
}

QueueService::~QueueService() {
  Shutdown();
  backend_->SetReadyListener(nullptr);
  backend_->SetEventSink(nullptr);
}

void QueueService::Shutdown(Millis push_grace) {
  waiters_.Shutdown();
  if (push_) push_->Shutdown(push_grace);
}

void QueueService::Send(SendRequest&& req, Callback<Result<backend::Sent>> done) {
  if (Status v = core::ValidateScopedTopic(req.topic, options_.limits); !v.ok())
    return done(std::move(v));
  std::string topic = std::move(req.topic);
  core::NewMessage m;
  if (Status v = CheckSend(req, topic, &m); !v.ok()) return done(std::move(v));
  backend_->Send(std::move(m), [this, topic = std::move(topic),
                                done = std::move(done)](Result<backend::Sent>&& res) mutable {
    if (res.has_value()) {
      recorder_.Sent(res->message.record.topic);
      MaskCallbackHeaders(res->message);  // the answer's callback as clients see it
    } else {
      recorder_.Refused(topic, res.error());
    }
    done(std::move(res));
  });
}

Status QueueService::CheckRef(const MessageRef& ref) const {
  Status s = core::ValidateScopedTopic(ref.topic, options_.limits);
  if (s.ok()) s = core::ValidateMsgId(ref.msg_id, options_.limits);
  return s;
}

Status QueueService::CheckSend(SendRequest& req, const std::string& topic,
                               core::NewMessage* out) const {
  const core::Limits& limits = options_.limits;
  if (req.delay_millis.has_value() == req.trigger_time.has_value()) {
    return InvalidArgument(req.delay_millis.has_value()
                               ? "give either delayMillis or triggerTime, not both"
                               : "delayMillis is missing (or give triggerTime)");
  }
  Status v;
  if (!req.msg_id.empty()) v = core::ValidateMsgId(req.msg_id, limits);
  if (v.ok()) v = core::ValidatePayload(req.msg, limits);
  if (v.ok() && req.delay_millis) v = core::ValidateDelay(Millis(*req.delay_millis), limits);
  if (v.ok() && req.trigger_time) {
    v = core::ValidateTriggerTime(*req.trigger_time, clock_->Now(), limits);
  }
  if (v.ok() && req.priority) v = core::ValidatePriority(*req.priority);
  if (v.ok() && req.count_trigger) v = core::ValidateCountTrigger(*req.count_trigger);
  if (v.ok() && req.callback) v = core::ValidateCallback(*req.callback, options_.push_allowed);
  if (v.ok() && req.callback && req.callback->base64 && !base::Base64Decode(req.msg)) {
    v = InvalidArgument(
        "msg is not valid base64, which callback.format base64 needs (the gRPC request bytes)");
  }
  if (!v.ok()) return v;
  core::NewMessage& m = *out;
  m.topic = topic;
  m.msg_id = std::move(req.msg_id);
  m.payload = std::move(req.msg);
  m.delay = Millis(req.delay_millis.value_or(0));
  if (req.trigger_time) m.trigger_time = FromEpochMs(*req.trigger_time);
  // Left out (or out of range, API.md): the topic's, resolved by the backend.
  if (req.ttl_millis && *req.ttl_millis > 0) m.ttl = Millis(*req.ttl_millis);
  if (req.max_retry && *req.max_retry >= 0) m.max_retry = *req.max_retry;
  m.priority = static_cast<int32_t>(req.priority.value_or(0));
  m.count_trigger = req.count_trigger.value_or(0);
  m.callback = std::move(req.callback);
  return Status::Ok();
}

// Delivered messages as a pull's or a long poll's answer shows them: counted, callback header
// values masked.
void QueueService::Shown(Messages& delivered, bool long_poll) {
  recorder_.Delivered(delivered, long_poll);
  for (core::Message& m : delivered) MaskCallbackHeaders(m);
}

void QueueService::Pull(PullRequest req, Callback<Result<Messages>> done) {
  Result<PollSpec> spec = CheckPull(req, options_);
  if (!spec.has_value()) return done(spec.error());
  backend_->Pull(backend::PullRequest{std::move(spec->topic), spec->batch, spec->ack_timeout},
                 [this, done = std::move(done)](Result<Messages> res) mutable {
                   if (res.has_value()) Shown(*res, /*long_poll=*/false);
                   done(std::move(res));
                 });
}

LongPollTicket QueueService::LongPoll(LongPollRequest req, std::function<bool()> alive,
                                      Callback<Result<Messages>> done) {
  Result<PollSpec> spec = CheckPull(req.pull, options_);
  if (!spec.has_value()) {
    done(spec.error());
    return nullptr;
  }
  spec->timeout =
      req.timeout_millis && *req.timeout_millis > 0
          ? std::min(Millis(*req.timeout_millis), options_.limits.max_long_polling_timeout)
          : options_.defaults.long_polling_timeout;
  return waiters_.Park(std::move(*spec), std::move(alive),
                       [this, done = std::move(done)](Result<Messages> res) mutable {
                         if (res.has_value()) Shown(*res, /*long_poll=*/true);
                         done(std::move(res));
                       });
}

void QueueService::CancelLongPoll(const LongPollTicket& ticket) {
  if (ticket) waiters_.Cancel(ticket);
}

void QueueService::Ack(AckRequest req, Callback<Status> done) {
  if (Status v = CheckRef(req.ref); !v.ok()) return done(std::move(v));
  // An ack does not keep its reason, but a bad one is refused all the same (as ackMsgBatch does).
  if (Status v = core::ValidateReason(req.reason, options_.limits); !v.ok()) {
    return done(std::move(v));
  }
  if (!req.ack && !req.reason.empty()) {
    // A nack with a reason: the one backend call that carries reasons.
    std::string topic = req.ref.topic;
    std::vector<backend::AckItem> items;
    items.push_back({std::move(req.ref.msg_id), false, std::move(req.reason)});
    backend_->AckBatch(
        std::move(req.ref.topic), std::move(items),
        [this, topic = std::move(topic),
         done = std::move(done)](Result<std::vector<Status>> res) mutable {
          Status s = !res.has_value() ? res.error()
                     : res->size() == 1
                         ? std::move(res->front())
                         : Internal("the backend answered a batch of one with another count");
          if (s.ok()) recorder_.Acked(topic, false);
          done(std::move(s));
        });
    return;
  }
  std::string topic = req.ref.topic;
  const bool ack = req.ack;
  backend_->Ack(std::move(req.ref.topic), std::move(req.ref.msg_id), ack,
                [this, topic = std::move(topic), ack, done = std::move(done)](Status s) mutable {
                  if (s.ok()) recorder_.Acked(topic, ack);
                  done(std::move(s));
                });
}

void QueueService::Delete(DeleteRequest req, Callback<Status> done) {
  if (Status v = CheckRef(req.ref); !v.ok()) return done(std::move(v));
  std::string topic = req.ref.topic;
  backend_->Delete(std::move(req.ref.topic), std::move(req.ref.msg_id), req.release,
                   [this, topic = std::move(topic), done = std::move(done)](Status s) mutable {
                     if (s.ok()) recorder_.Deleted(topic);
                     done(std::move(s));
                   });
}

void QueueService::Get(MessageRef req, Callback<Result<core::Message>> done) {
  if (Status v = CheckRef(req); !v.ok()) return done(std::move(v));
  backend_->Get(std::move(req.topic), std::move(req.msg_id),
                [this, done = std::move(done)](Result<core::Message> res) mutable {
                  if (res.has_value()) recorder_.Got(res->record.topic);
                  done(std::move(res));
                });
}

void QueueService::GetTopicInfo(std::string topic, Callback<Result<core::TopicInfo>> done) {
  if (Status v = core::ValidateScopedTopic(topic, options_.limits); !v.ok())
    return done(std::move(v));
  backend_->GetTopicInfo(std::move(topic), std::move(done));
}

void QueueService::ListTopics(Callback<Result<std::vector<core::TopicInfo>>> done) {
  backend_->ListTopics(std::move(done));
}

void QueueService::SetOnline(bool online) {
  base::MutexLock lock(online_mu_);
  if (online_.exchange(online) == online) return;
  for (auto& [id, fn] : online_watchers_) fn(online);
}

uint64_t QueueService::AddOnlineWatcher(std::function<void(bool)> fn) {
  base::MutexLock lock(online_mu_);
  const uint64_t id = next_online_watcher_++;
  online_watchers_.emplace(id, std::move(fn));
  return id;
}

void QueueService::RemoveOnlineWatcher(uint64_t id) {
  base::MutexLock lock(online_mu_);
  online_watchers_.erase(id);
}

metrics::MonitorSnapshot QueueService::MonitorData() {
  metrics::MonitorSnapshot s = recorder_.monitor().LastCompleted(clock_->Now());
  // Operators read scoped topics as "shop/orders" (core/scope.h), as on /metrics.
  for (metrics::RequestStats& r : s.request_stats) r.topic = core::DisplayTopic(r.topic);
  for (metrics::GapStats& g : s.pull_gaps) g.topic = core::DisplayTopic(g.topic);
  for (metrics::GapStats& g : s.ready_gaps) g.topic = core::DisplayTopic(g.topic);
  return s;
}

void QueueService::Scrape(const metrics::Registry* others, UniqueFunction<void(std::string)> done) {
  backend_->ListTopics(
      [this, others, done = std::move(done)](Result<std::vector<core::TopicInfo>> res) mutable {
        std::vector<metrics::TopicDepth> depths;
        if (res.has_value()) {
          depths.reserve(res->size());
          for (core::TopicInfo& t : *res) {
            depths.push_back({std::move(t.topic), t.waiting, t.ready, t.consuming});
          }
        }
        using metrics::MetricType;
        metrics::TextWriter w;
        w.Family("cq_queue_depth_read_ok",
                 "1 when this scrape read the topics' depth from the storage, 0 when it failed "
                 "(cq_queue_messages is then missing)",
                 MetricType::kGauge);
        w.Sample("cq_queue_depth_read_ok", {}, res.has_value() ? 1 : 0);
        recorder_.probe().Render(w, depths);
        push_metrics_.Render(w);
        w.Family("cq_http_long_polls_parked", "longPollingMsg requests parked or being served",
                 MetricType::kGauge);
        w.Sample("cq_http_long_polls_parked", {}, static_cast<double>(waiters_.parked()));
        if (others != nullptr) others->Render(w);
        done(w.Take());
      });
}

}  // namespace chronoq::service
