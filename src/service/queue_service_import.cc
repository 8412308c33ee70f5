// QueueService::Import (queue_service.h): importMsgBatch's checks, and the records it builds
// from exported messages (docs/api-extensions.md "Export and import").
#include <fmt/format.h>

#include <map>
#include <memory>
#include <set>
#include <utility>

#include "base/mutex.h"
#include "core/validation.h"
#include "service/queue_service.h"

namespace chronoq::service {
namespace {

Status AtLeastZero(std::string_view name, int64_t v) { return core::ValidateAtLeast(name, v, 0); }

// The record an item stands for, or the first error, with a sentence naming the field.
Result<core::MessageRecord> ImportRecord(ImportItem& it, TimePoint now, const core::Limits& limits,
                                         const core::TargetAllowlist& allowed) {
  if (!it.unreadable.ok()) return it.unreadable;
  Status v = core::ValidateTopic(it.topic, limits);
  if (v.ok()) v = core::ValidateMsgId(it.msg_id, limits);
  if (v.ok()) v = core::ValidatePayload(it.msg, limits);
  if (!v.ok()) return v;
  if (it.status < 1 || it.status > 7) {
    return InvalidArgument(fmt::format("status {} is not a message status (1..7)", it.status));
  }
  if (it.status > 3) {
    return InvalidArgument(
        fmt::format("status {} is an ended message; only messages in life (status 1 waiting, 2 "
                    "ready, 3 consuming) are imported",
                    it.status));
  }
  for (auto [name, value] : {std::pair<std::string_view, int64_t>{"produceTime", it.produce_time},
                             {"triggerTime", it.trigger_time},
                             {"expireTime", it.expire_time},
                             {"maxRetry", it.max_retry},
                             {"retry", it.retry},
                             {"countTrigger", it.count_trigger},
                             {"count", it.count},
                             {"retryIntervalMillis", it.retry_interval_millis}}) {
    CQ_RETURN_IF_ERROR(AtLeastZero(name, value));
  }
  if (it.visible_time) CQ_RETURN_IF_ERROR(AtLeastZero("visibleTime", *it.visible_time));
  if (it.ack_deadline) CQ_RETURN_IF_ERROR(AtLeastZero("ackDeadline", *it.ack_deadline));
  if (it.max_retry > INT32_MAX) {
    return InvalidArgument(fmt::format("maxRetry {} is above {}", it.max_retry, INT32_MAX));
  }
  CQ_RETURN_IF_ERROR(core::ValidatePriority(it.priority));
  CQ_RETURN_IF_ERROR(core::ValidateReason(it.last_error, limits));
  if (it.expire_time < it.trigger_time) {
    return InvalidArgument(
        fmt::format("expireTime {} is before triggerTime {}", it.expire_time, it.trigger_time));
  }
  if (FromEpochMs(it.expire_time) <= now) {
    return InvalidArgument(fmt::format(
        "expireTime {} has passed (now {}): the message ended before it could be imported",
        it.expire_time, ToEpochMs(now)));
  }
  if (it.status == 3 && !it.ack_deadline) {
    return InvalidArgument("status 3 (consuming) needs ackDeadline, the delivery's ack deadline");
  }
  if (it.ack_deadline && it.visible_time) {
    return InvalidArgument(
        "give visibleTime (a pending message) or ackDeadline (a delivery), not both");
  }
  if (it.ack_deadline && it.retry < 1) {
    return InvalidArgument(fmt::format(
        "retry {} with ackDeadline: a delivery has been delivered at least once", it.retry));
  }
  if (it.callback) CQ_RETURN_IF_ERROR(core::ValidateCallback(*it.callback, allowed));
  if (it.dead_letter) {
    const ImportItem::DeadLetter& d = *it.dead_letter;
    CQ_RETURN_IF_ERROR(core::ValidateTopicParam("deadLetter.topic", d.topic, limits));
    if (d.status != 5 && d.status != 6) {
      return InvalidArgument(fmt::format(
          "deadLetter.status {} is neither 5 (expired) nor 6 (retries exhausted)", d.status));
    }
    CQ_RETURN_IF_ERROR(AtLeastZero("deadLetter.retry", d.retry));
    CQ_RETURN_IF_ERROR(AtLeastZero("deadLetter.endTime", d.end_time));
  }

  core::MessageRecord r;
  r.topic = std::move(it.topic);
  r.msg_id = std::move(it.msg_id);
  r.payload = std::move(it.msg);
  r.produce_time = FromEpochMs(it.produce_time);
  r.trigger_time = FromEpochMs(it.trigger_time);
  r.expire_time = FromEpochMs(it.expire_time);
  r.max_retry = static_cast<int32_t>(it.max_retry);
  r.priority = static_cast<int32_t>(it.priority);
  r.retry = it.retry;
  r.count_trigger = it.count_trigger;
  r.count = it.count;
  r.last_error = std::move(it.last_error);
  r.push = it.push;
  if (it.callback) r.callback = core::CallbackRef(std::move(*it.callback));
  if (it.dead_letter) {
    ImportItem::DeadLetter& d = *it.dead_letter;
    r.dead_letter = core::DeadLetter{std::move(d.topic), static_cast<core::MsgStatus>(d.status),
                                     d.retry, FromEpochMs(d.end_time)};
  }
  if (it.ack_deadline) {
    r.phase = core::Phase::kDelivered;
    r.retry_interval = Millis(it.retry_interval_millis);
    r.visible_at = FromEpochMs(*it.ack_deadline) + r.retry_interval;
  } else {
    r.phase = core::Phase::kPending;
    if (it.visible_time) {
      r.visible_at = FromEpochMs(*it.visible_time);
    } else {
      r.visible_at = it.status == 2 ? std::min(r.trigger_time, now) : r.trigger_time;
    }
  }
  return r;
}

}  // namespace

void QueueService::Import(ImportRequest req,
                          Callback<Result<std::vector<Result<ImportOutcome>>>> done) {
  const size_t n = req.items.size();
  if (n == 0) return done(InvalidArgument("msgs is empty; give at least one message"));
  if (n > static_cast<size_t>(options_.limits.max_send_batch)) {
    return done(
        InvalidArgument(fmt::format("msgs has {} messages; the limit is {} (max-send-batch)", n,
                                    options_.limits.max_send_batch)));
  }
  const TimePoint now = clock_->Now();
  // The state of one call: the answers, and the backend calls (one per topic) still out.
  struct Join {
    base::Mutex mu;
    std::vector<Result<ImportOutcome>> out CQ_GUARDED_BY(mu);
    Status failed CQ_GUARDED_BY(mu);
    size_t left CQ_GUARDED_BY(mu) = 0;
    Callback<Result<std::vector<Result<ImportOutcome>>>> done;
  };
  auto join = std::make_shared<Join>();
  join->done = std::move(done);
  std::map<std::string, std::pair<std::vector<core::MessageRecord>, std::vector<size_t>>> groups;
  std::set<std::pair<std::string, std::string>> seen;
  std::vector<Result<ImportOutcome>> out(n, ImportOutcome::kSkipped);
  for (size_t i = 0; i < n; ++i) {
    Result<core::MessageRecord> rec =
        ImportRecord(req.items[i], now, options_.limits, options_.push_allowed);
    if (rec.has_value() && !seen.emplace(rec->topic, rec->msg_id).second) {
      continue;  // an earlier item of this batch has the msgId: this one is skipped (kSkipped)
    }
    if (!rec.has_value()) {
      out[i] = rec.error();
      continue;
    }
    auto& g = groups[rec->topic];
    g.first.push_back(std::move(rec).value());
    g.second.push_back(i);
  }
  {
    base::MutexLock lock(join->mu);
    join->out = std::move(out);
    join->left = groups.size() + 1;  // + this call, which arrives last below
  }
  auto arrive = [join]() {
    Result<std::vector<Result<ImportOutcome>>> answer = std::vector<Result<ImportOutcome>>();
    {
      base::MutexLock lock(join->mu);
      if (--join->left > 0) return;
      if (join->failed.ok()) {
        answer = std::move(join->out);
      } else {
        answer = join->failed;
      }
    }
    join->done(std::move(answer));
  };
  for (auto& [topic, group] : groups) {
    backend_->Import(std::move(group.first),
                     [join, arrive, idx = std::move(group.second)](Result<std::vector<bool>> r) {
                       {
                         base::MutexLock lock(join->mu);
                         if (!r.has_value()) {
                           join->failed = r.error();
                         } else {
                           for (size_t k = 0; k < idx.size() && k < r->size(); ++k) {
                             join->out[idx[k]] =
                                 (*r)[k] ? ImportOutcome::kImported : ImportOutcome::kSkipped;
                           }
                         }
                       }
                       arrive();
                     });
  }
  arrive();
}

}  // namespace chronoq::service
