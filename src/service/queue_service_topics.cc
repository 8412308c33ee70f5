// The operations of API-EXTENSIONS.md section 4 (queue_service.h): topic configuration, purge,
// redrive. Same shape as the others: check, one backend call, answer.
#include <fmt/format.h>

#include <algorithm>
#include <utility>

#include "core/validation.h"
#include "service/queue_service.h"

namespace chronoq::service {
namespace {

// The request's fields as a configuration layer, or the first error.
Result<core::TopicConfig> CheckConfig(const TopicConfigRequest& req, const core::Limits& limits,
                                      const core::TargetAllowlist& push_allowed) {
  core::TopicConfig c;
  if (req.capacity) c.capacity = *req.capacity;
  if (req.ttl_millis) c.ttl = Millis(*req.ttl_millis);
  if (req.max_retry) {
    if (*req.max_retry > INT32_MAX) {
      return InvalidArgument(
          fmt::format("maxRetry must be at most {}, got {}", INT32_MAX, *req.max_retry));
    }
    c.max_retry = static_cast<int32_t>(std::max<int64_t>(*req.max_retry, INT32_MIN));
  }
  if (req.ack_timeout_millis) c.ack_timeout = Millis(*req.ack_timeout_millis);
  if (req.retry_interval_millis) c.retry_interval = Millis(*req.retry_interval_millis);
  if (req.dead_letter_topic) c.dead_letter_topic = *req.dead_letter_topic;
  if (req.paused) c.paused = *req.paused;
  if (req.history) c.history = *req.history;
  if (req.callback) {
    if (*req.callback) CQ_RETURN_IF_ERROR(core::ValidateCallback(**req.callback, push_allowed));
    c.callback = *req.callback;
  }
  if (c.empty()) {
    return InvalidArgument(
        "no configuration field given; give at least one of capacity, ttlMillis, maxRetry, "
        "ackTimeoutMillis, retryIntervalMillis, deadLetterTopic, paused, callback, history");
  }
  CQ_RETURN_IF_ERROR(core::ValidateTopicConfig(req.topic, c, limits));
  return c;
}

}  // namespace

TopicConfigView QueueService::ViewOf(const std::string& topic,
                                     const core::TopicConfig& stored) const {
  TopicConfigView v;
  v.topic = topic;
  v.config = topic_defaults_.Resolve(topic, stored);
  for (int f = 0; f < core::kTopicFieldCount; ++f) {
    v.sources[f] = topic_defaults_.SourceOf(topic, stored, static_cast<core::TopicField>(f));
  }
  return v;
}

void QueueService::SetTopicConfig(TopicConfigRequest req, Callback<Result<TopicConfigView>> done) {
  if (Status v = core::ValidateScopedTopic(req.topic, options_.limits); !v.ok()) {
    return done(std::move(v));
  }
  Result<core::TopicConfig> change = CheckConfig(req, options_.limits, options_.push_allowed);
  if (!change.has_value()) return done(change.error());
  std::string topic = req.topic;
  backend_->SetTopicConfig(std::move(req.topic), std::move(*change),
                           [this, topic = std::move(topic),
                            done = std::move(done)](Result<core::TopicConfig> stored) mutable {
                             if (!stored.has_value()) return done(stored.error());
                             done(ViewOf(topic, *stored));
                           });
}

void QueueService::GetTopicConfig(std::string topic, Callback<Result<TopicConfigView>> done) {
  if (Status v = core::ValidateScopedTopic(topic, options_.limits); !v.ok())
    return done(std::move(v));
  std::string name = topic;
  backend_->GetTopicConfig(std::move(topic), [this, name = std::move(name), done = std::move(done)](
                                                 Result<core::TopicConfig> stored) mutable {
    if (!stored.has_value()) return done(stored.error());
    done(ViewOf(name, *stored));
  });
}

void QueueService::DeleteTopicConfig(std::string topic, Callback<Status> done) {
  if (Status v = core::ValidateScopedTopic(topic, options_.limits); !v.ok())
    return done(std::move(v));
  backend_->DeleteTopicConfig(std::move(topic), std::move(done));
}

void QueueService::Purge(PurgeRequest req, Callback<Result<int64_t>> done) {
  if (Status v = core::ValidateScopedTopic(req.topic, options_.limits); !v.ok()) {
    return done(std::move(v));
  }
  std::optional<core::MsgStatus> status;
  if (req.status) {
    if (*req.status < 1 || *req.status > 3) {
      return done(InvalidArgument(fmt::format(
          "status must be 1 (waiting), 2 (ready) or 3 (consuming) to purge, got {}", *req.status)));
    }
    status = static_cast<core::MsgStatus>(*req.status);
  }
  backend_->Purge(std::move(req.topic), status, std::move(done));
}

void QueueService::Redrive(RedriveRequest req, Callback<Result<int64_t>> done) {
  const core::Limits& limits = options_.limits;
  if (Status v = core::ValidateScopedTopic(req.topic, limits); !v.ok()) return done(std::move(v));
  if (req.msg_id) {
    if (Status v = core::ValidateMsgId(*req.msg_id, limits); !v.ok()) return done(std::move(v));
  }
  const int64_t limit = req.limit.value_or(100);
  if (Status v = core::ValidateAtLeast("limit", limit, 1); !v.ok()) return done(std::move(v));
  const int64_t delay = req.delay_millis.value_or(0);
  if (Status v = core::ValidateDelay(Millis(delay), limits); !v.ok()) return done(std::move(v));
  backend::RedriveRequest r;
  r.topic = std::move(req.topic);
  r.msg_id = std::move(req.msg_id);
  r.limit = static_cast<int32_t>(std::min<int64_t>(limit, limits.max_list_limit));
  r.delay = Millis(std::max<int64_t>(delay, 0));
  backend_->Redrive(std::move(r), std::move(done));
}

}  // namespace chronoq::service
