// The queue operations of the Engine (engine.h). Time passing, loading and purging are in
// engine_time.cc; start-up and rebuilds in engine_recovery.cc.
#include "engine/engine.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>

#include "base/log.h"
#include "base/random.h"
#include "core/state_machine.h"
#include "engine/answer.h"

namespace chronoq::engine {

using core::MessageRecord;
using core::MsgStatus;
using core::Phase;

Engine::Engine(EngineOptions options, storage::MessageStore* store, const base::Clock* clock,
               base::Scheduler* scheduler)
    : options_(options), store_(store), clock_(clock), scheduler_(scheduler) {
  int n = std::max(1, options_.shards);
  for (int i = 0; i < n; ++i) shards_.push_back(std::make_unique<Shard>());
  store_->kv()->SetFailureHandler([this](Status s) { OnAsyncCommitFailure(std::move(s)); });
}

Engine::~Engine() {
  JoinBackup();
  store_->kv()->SetFailureHandler(nullptr);  // waits for a call in progress
  for (auto& shard : shards_) {
    base::MutexLock lock(shard->mu);
    for (auto& [name, slot] : shard->topics) {
      if (slot.timer != 0) scheduler_->Cancel(slot.timer);
    }
  }
  {
    base::MutexLock lock(purge_mu_);
    if (purge_timer_ != 0) scheduler_->Cancel(purge_timer_);
  }
  base::MutexLock lock(rebuild_mu_);
  if (rebuild_timer_ != 0) scheduler_->Cancel(rebuild_timer_);
}

size_t Engine::ShardIndex(std::string_view topic) const {
  return std::hash<std::string_view>{}(topic) % shards_.size();
}

Engine::Shard& Engine::ShardFor(std::string_view topic) { return *shards_[ShardIndex(topic)]; }

Engine::Slot* Engine::Find(Shard& shard, const std::string& topic) {
  auto it = shard.topics.find(topic);
  return it == shard.topics.end() ? nullptr : &it->second;
}

Engine::Slot& Engine::FindOrCreate(Shard& shard, const std::string& topic, bool* created) {
  if (created != nullptr) *created = false;
  if (Slot* slot = Find(shard, topic)) return *slot;
  if (created != nullptr) *created = true;
  Slot fresh;
  const TimePoint now = clock_->Now();
  fresh.topic = std::make_unique<Topic>(topic, now);
  // A new topic has nothing on disk: what is due beyond the horizon stays there.
  fresh.topic->set_cursor(IndexKey{SaturatingAdd(now, options_.memory_horizon), 0});
  return shard.topics.emplace(topic, std::move(fresh)).first->second;
}

uint64_t Engine::AllocSeqs(Batch& batch, uint64_t n) {
  base::MutexLock lock(seq_mu_);
  if (next_seq_ + n > reserved_seq_) {
    // Reserve the next block on disk before using it; a restart starts past the reservation.
    reserved_seq_ = next_seq_ + std::max(n, kSeqBlock);
    batch.PutMeta("seq", storage::EncodeCounter(static_cast<int64_t>(reserved_seq_)));
  }
  const uint64_t first = next_seq_;
  next_seq_ += n;
  return first;
}

TimePoint Engine::PurgeTime(const MessageRecord& ended) const {
  return SaturatingAdd(core::NaturalEndTime(ended), options_.retention);
}

void Engine::WriteTransition(Batch& batch, const MessageRecord* before, const MessageRecord& after,
                             core::HistoryCause cause) {
  if (any_history_.load(std::memory_order_relaxed)) [[unlikely]] {
    RecordHistory(batch, before, after, cause);
  }
  if (before == nullptr) {
    batch.PutNew(after);  // metadata and payload in one value (docs/storage-format.md)
  } else {
    batch.PutRecordMoveVis(before, after);
  }
  // The histogram counts pending messages by visibility time (see InHistogram in engine.h).
  const bool was = before != nullptr && InHistogram(*before);
  const bool is = InHistogram(after);
  const bool moved = was && is && before->visible_at != after.visible_at;
  if (was && (!is || moved)) batch.HistAdd(after.topic, before->visible_at, -1);
  if (is && (!was || moved)) batch.HistAdd(after.topic, after.visible_at, +1);
  if (after.phase == Phase::kEnded) {
    TimePoint purge_at = PurgeTime(after);
    batch.PutEnded(after, purge_at);
    NotePurgeTime(purge_at);
  }
}

bool Engine::CommitFor(Slot* slot, Batch batch, UniqueFunction<void(Status)> on_durable,
                       std::optional<Status>* outcome) {
  if (batch.empty()) {
    *outcome = Status::Ok();
    return true;
  }
  *outcome = store_->Commit(std::move(batch), std::move(on_durable));
  if (*outcome && !(*outcome)->ok()) {
    LogWriteFailure(**outcome);
    {
      // The batch may have carried a sequence reservation: write a new one with the next use.
      base::MutexLock lock(seq_mu_);
      reserved_seq_ = 0;
    }
    if (slot != nullptr) RebuildTopic(*slot);
    return false;
  }
  return true;
}

void Engine::LogWriteFailure(const Status& s) {
  // One line a second at most: a full disk fails every write until space is freed.
  const int64_t now_ms = std::chrono::duration_cast<std::chrono::milliseconds>(
                             std::chrono::steady_clock::now().time_since_epoch())
                             .count();
  int64_t last = last_failure_log_ms_.load();
  if (now_ms - last < 1000 || !last_failure_log_ms_.compare_exchange_strong(last, now_ms)) {
    failures_not_logged_.fetch_add(1);
    return;
  }
  const uint64_t more = failures_not_logged_.exchange(0);
  CQ_LOG_ERROR("cq.engine", "storage write failed{}: {}",
               more == 0 ? "" : fmt::format(" ({} more since the last line)", more), s.ToString());
}

void Engine::Report(Effects& fx) {
  if (!fx.dead_letters.empty()) DeliverDeadLetters(std::move(fx.dead_letters));
  const AdvanceResult& a = fx.advanced;
  backend::TopicEvents e;
  e.triggered = a.triggered;
  e.ready_gap_sum_ms = a.ready_gap_sum_ms;
  e.ready_gap_max_ms = a.ready_gap_max_ms;
  e.ack_timeouts = a.ack_timeouts;
  for (const EndedByTime& ended : a.finalized) {
    ++(ended.after.end_status == MsgStatus::kExpire ? e.expired : e.retries_exhausted);
  }
  e.retries_exhausted += fx.ended;
  if (!e.empty()) {
    if (backend::EventSink* sink = sink_.load()) sink->OnEvents(fx.topic, e);
  }
  ReadyListener* l = listener_.load();
  if (l == nullptr) return;
  if (fx.ready || a.became_ready) l->OnReady(fx.topic);
  if (fx.push_ready || a.became_push_ready) l->OnPushReady(fx.topic);
}

void Engine::SetReadyListener(ReadyListener* listener) {
  listener_.store(listener);
  AnnouncePushWork();
}

void Engine::AnnouncePushWork() {
  ReadyListener* l = listener_.load();
  if (l == nullptr) return;
  std::vector<std::string> topics;
  for (auto& shard : shards_) {
    base::MutexLock lock(shard->mu);
    for (const auto& [name, slot] : shard->topics) {
      if (slot.topic && slot.topic->push_live_count() > 0) topics.push_back(name);
    }
  }
  for (const std::string& topic : topics) l->OnPushReady(topic);
}

bool Engine::Listed(const Topic& t, TimePoint now) const {
  return !t.empty() || now - t.last_active() < options_.topic_inactive;
}

Status Engine::NotFoundError(const std::string& topic, const std::string& msg_id) const {
  return NotFound(fmt::format("message '{}' not found in topic '{}'", msg_id, topic));
}

Result<MessageRecord> Engine::FindStored(const std::string& topic, const std::string& msg_id,
                                         TimePoint now, bool with_payload) {
  CQ_ASSIGN_OR_RETURN(std::optional<MessageRecord> stored,
                      store_->GetRecord(topic, msg_id, with_payload));
  if (!stored) return NotFoundError(topic, msg_id);
  if (now >= PurgeTime(*stored)) {
    // Past retention, not purged yet; or a far message that ended by time that long ago while
    // timers lagged (it is past retention just the same).
    return NotFoundError(topic, msg_id);
  }
  return std::move(*stored);
}

void Engine::Pull(PullRequest req, Callback<Result<std::vector<core::Message>>> done) {
  TakeRequest take{std::move(req.topic), static_cast<size_t>(std::max(1, req.batch)), Lane::kPull,
                   req.ack_timeout};
  Take(std::move(take), [done = std::move(done)](Result<backend::PushTake> r) mutable {
    if (r.has_value()) {
      done(std::move(r->messages));
    } else {
      done(r.error());
    }
  });
}

void Engine::TakePush(std::string topic, int32_t max, Millis lease_margin,
                      Callback<Result<backend::PushTake>> done) {
  TakeRequest take{std::move(topic), static_cast<size_t>(std::max(1, max)), Lane::kPush,
                   std::nullopt, lease_margin};
  Take(std::move(take), std::move(done));
}

void Engine::Take(TakeRequest req, Callback<Result<backend::PushTake>> done) {
  Shard& shard = ShardFor(req.topic);
  Effects fx{req.topic, {}, 0, false};
  Answer<Result<backend::PushTake>> answer(std::move(done));
  std::optional<Status> outcome;
  {
    base::MutexLock lock(shard.mu);
    Slot* slot = Find(shard, req.topic);
    if (slot == nullptr || ConfigOf(*slot).paused) {
      // Paused: nothing is delivered (resuming wakes the listener, WriteTopicConfig).
      answer.Set(backend::PushTake{});
      outcome = Status::Ok();
    } else {
      const core::EffectiveTopicConfig& config = ConfigOf(*slot);
      Topic& t = *slot->topic;
      Batch batch = store_->NewBatch();
      // Answered in `done` only: the store may write it with the rest of this thread's loop turn.
      batch.SetDeferrable();
      TimePoint now = Advance(*slot, fx, batch);
      t.Touch(now);
      std::vector<const MessageRecord*> head = t.DueHead(now, req.max, req.lane);
      backend::PushTake take;
      if (req.lane == Lane::kPush) take.topic_callback = config.callback;
      std::vector<core::Message>& out = take.messages;
      out.reserve(head.size());
      Status read;
      core::Event deliver{core::EventKind::kDeliver, req.ack_timeout.value_or(config.ack_timeout)};
      deliver.retry_interval = config.retry_interval;
      for (const MessageRecord* r : head) {
        if (req.lane == Lane::kPush) {
          // Each push's lease and retry interval come from its callback (its own, else the
          // topic's).
          deliver.ack_timeout = core::PushLease(*r, config, req.lease_margin);
          deliver.retry_interval = core::RetryIntervalOf(*r, config);
        }
        Result<MessageRecord> next = core::Apply(t.Copy(*r), deliver, now);
        CQ_CHECK(next.has_value(), "head of '{}' not deliverable: {}", t.name(),
                 next.error().ToString());
        out.push_back(core::Message{std::move(next).value(), MsgStatus::kConsuming});
      }
      // The payloads the held records do not carry (Topic: an empty one is not held), in one
      // batched read (RocksDB's MultiGet).
      std::vector<std::string> ids;
      std::vector<size_t> unheld;
      for (size_t i = 0; i < out.size(); ++i) {
        if (!out[i].record.payload.empty()) continue;
        ids.push_back(out[i].record.msg_id);
        unheld.push_back(i);
      }
      if (!ids.empty()) {
        Result<std::vector<std::optional<std::string>>> payloads =
            store_->GetPayloads(t.name(), ids);
        if (!payloads.has_value()) {
          read = payloads.error();
        } else {
          for (size_t j = 0; j < unheld.size(); ++j) {
            if ((*payloads)[j]) out[unheld[j]].record.payload = std::move(*(*payloads)[j]);
          }
        }
      }
      if (!read.ok()) {
        // Nothing is delivered; what Advance ended on the way is written all the same.
        answer.Set(read);
        std::optional<Status> ignored;
        CommitFor(
            slot, std::move(batch), [](Status) {}, &ignored);
        outcome = Status::Ok();
      } else {
        std::vector<MessageRecord> held;
        held.reserve(out.size());
        MessageRecord before;  // one copy, its buffers reused from message to message
        for (size_t i = 0; i < out.size(); ++i) {
          before = *head[i];
          before.topic = t.name();
          WriteTransition(batch, &before, out[i].record);
          held.push_back(core::CopyWithoutPayload(out[i].record));
        }
        answer.Set(std::move(take));
        if (CommitFor(slot, std::move(batch), answer.OnDurable(), &outcome)) {
          for (size_t i = 0; i < held.size(); ++i) t.Replace(head[i], std::move(held[i]), now);
        }
      }
      Reschedule(*slot);
    }
  }
  Report(fx);
  if (outcome) answer.Finish(*outcome);
}

void Engine::Ack(std::string topic, std::string msg_id, bool ack, Callback<Status> done) {
  std::vector<backend::AckItem> one;
  one.push_back(backend::AckItem{std::move(msg_id), ack, {}, false, 0});
  AckBatch(std::move(topic), std::move(one),
           [done = std::move(done)](Result<std::vector<Status>> r) mutable {
             done(r.has_value() ? std::move(r->front()) : r.error());
           });
}

void Engine::Delete(std::string topic, std::string msg_id, bool release, Callback<Status> done) {
  Shard& shard = ShardFor(topic);
  Effects fx{topic, {}, 0, false};
  Answer<Status> answer(std::move(done));
  std::optional<Status> outcome = Status::Ok();
  {
    base::MutexLock lock(shard.mu);
    Slot* slot = Find(shard, topic);
    Batch batch = store_->NewBatch();
    TimePoint now = slot != nullptr ? Advance(*slot, fx, batch) : clock_->Now();
    const MessageRecord* live = slot != nullptr ? slot->topic->FindLive(msg_id) : nullptr;
    std::optional<MessageRecord> before;
    bool far = false;
    if (live != nullptr) {
      before = slot->topic->Copy(*live);
    } else {
      Result<MessageRecord> stored = FindStored(topic, msg_id, now, false);
      if (stored.has_value()) {
        far = stored->phase != Phase::kEnded;  // in life but not held: a far waiting message
        before = std::move(stored).value();
      } else {
        answer.Set(stored.error());
      }
    }
    Result<MessageRecord> next =
        before ? core::Apply(*before, core::Event{core::EventKind::kDelete}, now)
               : Result<MessageRecord>(Status(Errc::kNotFound, "unused"));
    if (before && !next.has_value()) answer.Set(next.error());
    if (!before || !next.has_value()) {
      std::optional<Status> ignored;
      CommitFor(
          slot, std::move(batch), [](Status) {}, &ignored);
    } else {
      if (release) {
        batch.DeleteRecord(topic, msg_id);
        DeleteHistory(batch, topic, msg_id);
        batch.MoveVis(&*before, nullptr);
        if (InHistogram(*before)) batch.HistAdd(topic, before->visible_at, -1);
      } else {
        WriteTransition(batch, &*before, *next);
      }
      answer.Set(Status::Ok());
      if (CommitFor(slot, std::move(batch), answer.OnDurable(), &outcome) && slot != nullptr) {
        Topic& t = *slot->topic;
        t.Touch(now);
        if (far) {
          t.AddFar(before->visible_at, -1, now);
        } else {
          t.Forget(msg_id, now);
        }
      }
    }
    if (slot != nullptr) Reschedule(*slot);
  }
  Report(fx);
  if (outcome) answer.Finish(*outcome);
}

void Engine::Get(std::string topic, std::string msg_id, Callback<Result<core::Message>> done) {
  Shard& shard = ShardFor(topic);
  Result<core::Message> result = [&]() -> Result<core::Message> {
    base::MutexLock lock(shard.mu);
    Slot* slot = Find(shard, topic);
    TimePoint now = clock_->Now();
    if (slot != nullptr) now = std::max(now, slot->topic->processed());
    MessageRecord rec;
    if (const MessageRecord* live = slot != nullptr ? slot->topic->FindLive(msg_id) : nullptr) {
      rec = slot->topic->Copy(*live);
      // Ended by time and past its retention, though not yet finalized (timers lag): gone.
      if (now >= PurgeTime(rec)) return NotFoundError(topic, msg_id);
      CQ_ASSIGN_OR_RETURN(std::optional<std::string> payload, store_->GetPayload(topic, msg_id));
      if (payload) rec.payload = std::move(*payload);
    } else {
      CQ_ASSIGN_OR_RETURN(rec, FindStored(topic, msg_id, now, true));
    }
    MsgStatus status = core::StatusAt(rec, now);
    return core::Message{std::move(rec), status};
  }();
  done(std::move(result));
}

void Engine::GetTopicInfo(std::string topic, Callback<Result<core::TopicInfo>> done) {
  Shard& shard = ShardFor(topic);
  Effects fx{topic, {}, 0, false};
  core::TopicInfo info;
  info.topic = topic;
  {
    base::MutexLock lock(shard.mu);
    if (Slot* slot = Find(shard, topic)) {
      Batch batch = store_->NewBatch();
      Advance(*slot, fx, batch);
      std::optional<Status> ignored;
      CommitFor(
          slot, std::move(batch), [](Status) {}, &ignored);
      info = slot->topic->Info();
      Reschedule(*slot);
    }
  }
  Report(fx);
  done(std::move(info));
}

Engine::TierCounts Engine::TEST_Tiers(const std::string& topic) {
  Shard& shard = ShardFor(topic);
  base::MutexLock lock(shard.mu);
  Slot* slot = Find(shard, topic);
  if (slot == nullptr) return {};
  return TierCounts{slot->topic->live_count(), slot->topic->far_count()};
}

void Engine::ListTopics(Callback<Result<std::vector<core::TopicInfo>>> done) {
  std::vector<core::TopicInfo> out;
  std::vector<Effects> effects;
  for (auto& shard : shards_) {
    base::MutexLock lock(shard->mu);
    for (auto& [name, slot] : shard->topics) {
      Effects fx{name, {}, 0, false};
      Batch batch = store_->NewBatch();
      TimePoint now = Advance(slot, fx, batch);
      std::optional<Status> ignored;
      CommitFor(
          &slot, std::move(batch), [](Status) {}, &ignored);
      if (Listed(*slot.topic, now)) out.push_back(slot.topic->Info());
      Reschedule(slot);
      effects.push_back(std::move(fx));
    }
  }
  for (Effects& fx : effects) Report(fx);
  std::sort(out.begin(), out.end(),
            [](const core::TopicInfo& a, const core::TopicInfo& b) { return a.topic < b.topic; });
  done(std::move(out));
}

}  // namespace chronoq::engine
