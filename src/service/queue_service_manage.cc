// The operations of API-EXTENSIONS.md sections 2-3 (queue_service.h): batches, update, touch,
// count, list. Same shape as the core operations: check, apply defaults, one backend call,
// count what it did.
#include <fmt/format.h>

#include <algorithm>
#include <unordered_set>
#include <utility>

#include "core/validation.h"
#include "service/masking.h"
#include "service/queue_service.h"

namespace chronoq::service {
namespace {

// The first id of `ids` already seen (in `seen` or earlier in `ids`), or nullptr.
const std::string* FirstRepeat(const std::vector<std::string>& ids,
                               std::unordered_set<std::string_view>& seen) {
  for (const std::string& id : ids) {
    if (!seen.insert(id).second) return &id;
  }
  return nullptr;
}

}  // namespace

Status QueueService::CheckSendBatchSize(size_t n) const {
  if (n == 0) return InvalidArgument("msgs is empty; give at least one message");
  if (n > static_cast<size_t>(options_.limits.max_send_batch)) {
    return InvalidArgument(fmt::format("msgs has {} messages; the limit is {} (max-send-batch)", n,
                                       options_.limits.max_send_batch));
  }
  return Status::Ok();
}

void QueueService::SendBatch(SendBatchRequest req,
                             Callback<Result<std::vector<Result<backend::Sent>>>> done) {
  const core::Limits& limits = options_.limits;
  if (Status v = core::ValidateScopedTopic(req.topic, limits); !v.ok()) return done(std::move(v));
  const size_t n = req.msgs.size();
  if (Status v = CheckSendBatchSize(n); !v.ok()) return done(std::move(v));
  std::unordered_set<std::string_view> ids;
  for (size_t i = 0; i < n; ++i) {
    const std::string& id = req.msgs[i].msg_id;
    if (!id.empty() && !ids.insert(id).second) {
      return done(
          InvalidArgument(fmt::format("msgId '{}' is given more than once in this batch", id)));
    }
  }
  // Check every item; the accepted ones go to the backend, in order, and `where` says which
  // answer each backend result fills.
  auto results = std::make_shared<std::vector<Result<backend::Sent>>>();
  results->reserve(n);
  std::vector<core::NewMessage> accepted;
  std::vector<size_t> where;
  accepted.reserve(n);
  where.reserve(n);
  for (size_t i = 0; i < n; ++i) {
    if (i < req.unreadable.size() && !req.unreadable[i].ok()) {
      results->emplace_back(std::move(req.unreadable[i]));
      continue;
    }
    core::NewMessage m;
    if (Status v = CheckSend(req.msgs[i], req.topic, &m); v.ok()) {
      results->emplace_back(Internal("not answered"));
      where.push_back(i);
      accepted.push_back(std::move(m));
    } else {
      results->emplace_back(std::move(v));
    }
  }
  if (accepted.empty()) return done(std::move(*results));
  backend_->SendBatch(
      std::move(accepted),
      [this, results, where = std::move(where), topic = std::move(req.topic),
       done = std::move(done)](Result<std::vector<Result<backend::Sent>>> res) mutable {
        if (!res.has_value()) return done(res.error());
        if (res->size() != where.size()) {
          return done(Internal(
              fmt::format("the backend answered {} of {} messages", res->size(), where.size())));
        }
        for (size_t k = 0; k < where.size(); ++k) {
          Result<backend::Sent>& sent = (*res)[k];
          if (sent.has_value() && !sent->existing) recorder_.Sent(sent->message.record.topic);
          if (sent.has_value()) MaskCallbackHeaders(sent->message);
          if (!sent.has_value()) recorder_.Refused(topic, sent.error());
          (*results)[where[k]] = std::move(sent);
        }
        done(std::move(*results));
      });
}

void QueueService::AckBatch(AckBatchRequest req, Callback<Result<std::vector<AckResult>>> done) {
  const core::Limits& limits = options_.limits;
  if (Status v = core::ValidateScopedTopic(req.topic, limits); !v.ok()) return done(std::move(v));
  const size_t n = req.ack.size() + req.nack.size();
  if (n == 0) return done(InvalidArgument("ack and nack are both empty; give at least one msgId"));
  if (n > static_cast<size_t>(limits.max_pull_batch)) {
    return done(InvalidArgument(
        fmt::format("ack and nack hold {} msgIds; the limit is {} in all (max-pull-batch)", n,
                    limits.max_pull_batch)));
  }
  if (Status v = core::ValidateReason(req.reason, limits); !v.ok()) return done(std::move(v));
  std::unordered_set<std::string_view> seen;
  for (const auto* ids : {&req.ack, &req.nack}) {
    for (const std::string& id : *ids) {
      if (Status v = core::ValidateMsgId(id, limits); !v.ok()) {
        return done(InvalidArgument(fmt::format("{} ('{}')", v.message(), id)));
      }
    }
  }
  const std::string* repeat = FirstRepeat(req.ack, seen);
  if (repeat == nullptr) repeat = FirstRepeat(req.nack, seen);
  if (repeat != nullptr) {
    return done(InvalidArgument(
        fmt::format("msgId '{}' is given more than once in ack and nack", *repeat)));
  }
  std::vector<backend::AckItem> items;
  items.reserve(n);
  for (std::string& id : req.ack) items.push_back({std::move(id), true, {}});
  for (std::string& id : req.nack) items.push_back({std::move(id), false, req.reason});
  std::vector<std::pair<std::string, bool>> names;
  names.reserve(n);
  for (const backend::AckItem& it : items) names.emplace_back(it.msg_id, it.ack);
  std::string topic = req.topic;
  backend_->AckBatch(
      std::move(req.topic), std::move(items),
      [this, topic = std::move(topic), names = std::move(names),
       done = std::move(done)](Result<std::vector<Status>> res) mutable {
        if (!res.has_value()) return done(res.error());
        if (res->size() != names.size()) {
          return done(Internal(
              fmt::format("the backend answered {} of {} ids", res->size(), names.size())));
        }
        std::vector<AckResult> out;
        out.reserve(names.size());
        for (size_t i = 0; i < names.size(); ++i) {
          if ((*res)[i].ok()) recorder_.Acked(topic, names[i].second);
          out.push_back({std::move(names[i].first), names[i].second, std::move((*res)[i])});
        }
        done(std::move(out));
      });
}

void QueueService::Update(UpdateRequest req, Callback<Result<core::Message>> done) {
  const core::Limits& limits = options_.limits;
  if (Status v = CheckRef(req.ref); !v.ok()) return done(std::move(v));
  if (req.delay_millis && req.trigger_time) {
    return done(InvalidArgument("give either delayMillis or triggerTime, not both"));
  }
  if (!req.delay_millis && !req.trigger_time && !req.msg && !req.ttl_millis && !req.max_retry &&
      !req.priority) {
    return done(InvalidArgument(
        "nothing to update: give at least one of delayMillis, triggerTime, msg, ttlMillis, "
        "maxRetry, priority"));
  }
  const TimePoint now = clock_->Now();
  Status v;
  if (req.delay_millis) v = core::ValidateDelay(Millis(*req.delay_millis), limits);
  if (v.ok() && req.trigger_time) v = core::ValidateTriggerTime(*req.trigger_time, now, limits);
  if (v.ok() && req.msg) v = core::ValidatePayload(*req.msg, limits);
  if (v.ok() && req.ttl_millis) v = core::ValidateAtLeast("ttlMillis", *req.ttl_millis, 1);
  if (v.ok() && req.max_retry) {
    v = core::ValidateAtLeast("maxRetry", *req.max_retry, 0);
    if (v.ok() && *req.max_retry > INT32_MAX) {
      v = InvalidArgument(
          fmt::format("maxRetry must be at most {}, got {}", INT32_MAX, *req.max_retry));
    }
  }
  if (v.ok() && req.priority) v = core::ValidatePriority(*req.priority);
  if (!v.ok()) return done(std::move(v));
  core::MessageUpdate u;
  if (req.delay_millis) u.trigger_time = SaturatingAdd(now, Millis(*req.delay_millis));
  if (req.trigger_time) u.trigger_time = FromEpochMs(*req.trigger_time);
  u.payload = std::move(req.msg);
  if (req.ttl_millis) u.ttl = Millis(*req.ttl_millis);
  if (req.max_retry) u.max_retry = static_cast<int32_t>(*req.max_retry);
  if (req.priority) u.priority = static_cast<int32_t>(*req.priority);
  backend_->Update(
      backend::UpdateRequest{std::move(req.ref.topic), std::move(req.ref.msg_id), std::move(u)},
      std::move(done));
}

void QueueService::Touch(TouchRequest req, Callback<Result<core::Message>> done) {
  if (Status v = CheckRef(req.ref); !v.ok()) return done(std::move(v));
  std::optional<Millis> ack_timeout;  // absent: the topic's
  if (req.ack_timeout_millis && *req.ack_timeout_millis > 0) {
    ack_timeout = Millis(*req.ack_timeout_millis);
  }
  backend_->Touch(std::move(req.ref.topic), std::move(req.ref.msg_id), ack_timeout,
                  std::move(done));
}

void QueueService::Count(CountRequest req, Callback<Result<core::Message>> done) {
  if (Status v = CheckRef(req.ref); !v.ok()) return done(std::move(v));
  const int64_t count = req.count.value_or(1);
  if (Status v = core::ValidateAtLeast("count", count, 1); !v.ok()) return done(std::move(v));
  backend_->Count(std::move(req.ref.topic), std::move(req.ref.msg_id), count, std::move(done));
}

void QueueService::List(ListRequest req, Callback<Result<backend::ListPage>> done) {
  const core::Limits& limits = options_.limits;
  if (Status v = core::ValidateScopedTopic(req.topic, limits); !v.ok()) return done(std::move(v));
  if (req.status && (*req.status < 1 || *req.status > 7)) {
    return done(InvalidArgument(
        fmt::format("status must be between 1 and 7 (API.md section 5), got {}", *req.status)));
  }
  const int64_t limit = req.limit.value_or(100);
  if (Status v = core::ValidateAtLeast("limit", limit, 1); !v.ok()) return done(std::move(v));
  if (req.cursor.size() > 1024) {
    return done(InvalidArgument(
        fmt::format("cursor is not valid: {} bytes long; cursors are at most 1024 bytes (pass "
                    "nextCursor of the previous page as it came)",
                    req.cursor.size())));
  }
  // Backends make cursors of printable ASCII; anything else was not made by one.
  for (size_t i = 0; i < req.cursor.size(); ++i) {
    const auto c = static_cast<unsigned char>(req.cursor[i]);
    if (c < 0x20 || c > 0x7E) {
      return done(InvalidArgument(
          fmt::format("cursor is not valid: byte 0x{:02X} at offset {} is not printable ASCII "
                      "(pass nextCursor of the previous page as it came)",
                      c, i)));
    }
  }
  backend::ListRequest b;
  b.topic = std::move(req.topic);
  if (req.status) b.status = static_cast<core::MsgStatus>(*req.status);
  b.limit = static_cast<int32_t>(std::min<int64_t>(limit, limits.max_list_limit));
  b.cursor = std::move(req.cursor);
  backend_->List(std::move(b), std::move(done));
}

}  // namespace chronoq::service
