// The queue operations of the Engine (engine.h). Time passing, loading and purging are in
// engine_time.cc; start-up and rebuilds in engine_recovery.cc.
#include "engine/engine.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>

#include "base/log.h"
#include "base/random.h"
#include "core/state_machine.h"

namespace chronoq::engine {

using core::MessageRecord;
using core::MsgStatus;
using core::Phase;

namespace {

// The answer of an operation, given once its writes are durable. T is Status or Result<U>; both
// are constructible from an error Status.
template <typename T>
class Answer {
 public:
  explicit Answer(Callback<T> done) : state_(std::make_shared<State>(std::move(done))) {}
  void Set(T v) { state_->value.emplace(std::move(v)); }
  const T& value() const { return *state_->value; }
  // For the store: called once the batch is durable (or failed).
  UniqueFunction<void(Status)> OnDurable() {
    return [s = state_](Status st) { s->Finish(std::move(st)); };
  }
  void Finish(Status st) { state_->Finish(std::move(st)); }

 private:
  struct State {
    explicit State(Callback<T> d) : done(std::move(d)) {}
    void Finish(Status st) {
      if (st.ok()) {
        done(std::move(*value));
      } else {
        done(T(std::move(st)));
      }
    }
    Callback<T> done;
    std::optional<T> value;
  };
  std::shared_ptr<State> state_;
};

// A pending message that was never delivered: counted in the trigger-time histogram.
bool Waiting(const MessageRecord& r) { return r.phase == Phase::kPending && r.retry == 0; }

}  // namespace

Engine::Engine(EngineOptions options, storage::MessageStore* store, const base::Clock* clock,
               base::Scheduler* scheduler)
    : options_(options), store_(store), clock_(clock), scheduler_(scheduler) {
  int n = std::max(1, options_.shards);
  for (int i = 0; i < n; ++i) shards_.push_back(std::make_unique<Shard>());
  store_->kv()->SetFailureHandler([this](Status s) { OnAsyncCommitFailure(std::move(s)); });
}

Engine::~Engine() {
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

Engine::Shard& Engine::ShardFor(std::string_view topic) {
  return *shards_[std::hash<std::string_view>{}(topic) % shards_.size()];
}

Engine::Slot* Engine::Find(Shard& shard, const std::string& topic) {
  auto it = shard.topics.find(topic);
  return it == shard.topics.end() ? nullptr : &it->second;
}

Engine::Slot& Engine::FindOrCreate(Shard& shard, const std::string& topic) {
  if (Slot* slot = Find(shard, topic)) return *slot;
  Slot fresh;
  const TimePoint now = clock_->Now();
  fresh.topic = std::make_unique<Topic>(topic, now);
  // A new topic has nothing on disk: what is due beyond the horizon stays there.
  fresh.topic->set_cursor(IndexKey{SaturatingAdd(now, options_.memory_horizon), 0});
  return shard.topics.emplace(topic, std::move(fresh)).first->second;
}

uint64_t Engine::AllocSeq(Batch& batch) {
  base::MutexLock lock(seq_mu_);
  if (next_seq_ >= reserved_seq_) {
    // Reserve the next block on disk before using it; a restart starts past the reservation.
    reserved_seq_ = next_seq_ + kSeqBlock;
    batch.PutMeta("seq", storage::EncodeCounter(static_cast<int64_t>(reserved_seq_)));
  }
  return next_seq_++;
}

TimePoint Engine::PurgeTime(const MessageRecord& ended) const {
  return SaturatingAdd(core::NaturalEndTime(ended), options_.retention);
}

void Engine::WriteTransition(Batch& batch, const MessageRecord* before,
                             const MessageRecord& after) {
  batch.PutRecord(after);
  batch.MoveVis(before, &after);
  bool was_waiting = before != nullptr && Waiting(*before);
  bool is_waiting = Waiting(after);
  if (was_waiting && !is_waiting) batch.HistAdd(after.topic, before->trigger_time, -1);
  if (!was_waiting && is_waiting) batch.HistAdd(after.topic, after.trigger_time, +1);
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
  if (fx.ready || a.became_ready) {
    if (ReadyListener* l = listener_.load()) l->OnReady(fx.topic);
  }
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

void Engine::Send(core::NewMessage m, Callback<Result<backend::Sent>> done) {
  // A generated id (milliseconds, a counter and 64 random bits) is new by construction: no
  // idempotence or replacement lookups for it.
  const bool generated = m.msg_id.empty();
  if (generated) m.msg_id = base::NewMsgId();
  Shard& shard = ShardFor(m.topic);
  Effects fx{m.topic, {}, 0, false};
  Answer<Result<backend::Sent>> answer(std::move(done));
  std::optional<Status> outcome;
  {
    base::MutexLock lock(shard.mu);
    const bool created = Find(shard, m.topic) == nullptr;
    bool refused = false;
    Slot& slot = FindOrCreate(shard, m.topic);
    Topic& t = *slot.topic;
    Batch batch = store_->NewBatch();
    TimePoint now = Advance(slot, fx, batch);
    t.Touch(now);

    // An in-life message with this id answers the send (idempotence); an ended one is replaced.
    std::optional<MessageRecord> existing;
    std::optional<MessageRecord> replaced;
    Status lookup;
    if (!generated) {
      auto just_ended =
          std::find_if(fx.advanced.finalized.begin(), fx.advanced.finalized.end(),
                       [&](const EndedByTime& e) { return e.after.msg_id == m.msg_id; });
      if (const MessageRecord* live = t.FindLive(m.msg_id)) {
        existing = t.Copy(*live);
      } else if (just_ended != fx.advanced.finalized.end()) {
        replaced = just_ended->after;  // ended by time in this step: not stored yet
      } else {
        Result<std::optional<MessageRecord>> stored = store_->GetRecord(m.topic, m.msg_id, false);
        if (!stored.has_value()) {
          lookup = stored.error();
        } else if (*stored && (*stored)->phase != Phase::kEnded) {
          existing = std::move(**stored);  // a far waiting message
        } else if (*stored) {
          replaced = std::move(**stored);
        }
      }
      if (existing) {
        Result<std::optional<std::string>> payload = store_->GetPayload(m.topic, m.msg_id);
        if (!payload.has_value()) {
          lookup = payload.error();
        } else if (*payload) {
          existing->payload = std::move(**payload);
        }
      }
    }
    if (!lookup.ok() || existing) {
      if (lookup.ok()) {
        MsgStatus status = core::StatusAt(*existing, now);
        answer.Set(backend::Sent{core::Message{std::move(*existing), status}, true});
      } else {
        answer.Set(lookup);
      }
      std::optional<Status> ignored;
      CommitFor(
          &slot, std::move(batch), [](Status) {}, &ignored);  // what Advance ended
      outcome = Status::Ok();
    } else {
      MessageRecord rec = core::CreateRecord(std::move(m), now, AllocSeq(batch));
      WriteTransition(batch, nullptr, rec);
      batch.PutPayload(rec);
      if (replaced) batch.DeleteEnded(*replaced, PurgeTime(*replaced));
      MsgStatus status = core::StatusAt(rec, now);
      const bool far = t.IsFar(rec.visible_at, rec.seq);
      MessageRecord held = far ? MessageRecord() : core::CopyWithoutPayload(rec);
      const TimePoint trigger = rec.trigger_time;
      answer.Set(backend::Sent{core::Message{std::move(rec), status}, false});
      if (CommitFor(&slot, std::move(batch), answer.OnDurable(), &outcome)) {
        if (far) {
          t.AddFar(trigger, 1, now);
        } else {
          t.Insert(std::move(held), now);
        }
        fx.ready = status == MsgStatus::kReady;
      } else {
        refused = true;
      }
    }
    if (refused && created && slot.topic->empty()) {
      // The topic came with the refused send: it goes with it (unlisted, as before).
      if (slot.timer != 0) scheduler_->Cancel(slot.timer);
      shard.topics.erase(fx.topic);  // (m was moved from)
    } else {
      Reschedule(slot);
    }
  }
  Report(fx);
  if (outcome) answer.Finish(*outcome);
}

void Engine::Pull(PullRequest req, Callback<Result<std::vector<core::Message>>> done) {
  Shard& shard = ShardFor(req.topic);
  Effects fx{req.topic, {}, 0, false};
  Answer<Result<std::vector<core::Message>>> answer(std::move(done));
  std::optional<Status> outcome;
  {
    base::MutexLock lock(shard.mu);
    Slot* slot = Find(shard, req.topic);
    if (slot == nullptr) {
      answer.Set(std::vector<core::Message>());
      outcome = Status::Ok();
    } else {
      Topic& t = *slot->topic;
      Batch batch = store_->NewBatch();
      TimePoint now = Advance(*slot, fx, batch);
      t.Touch(now);
      std::vector<const MessageRecord*> head =
          t.DueHead(now, static_cast<size_t>(std::max(1, req.batch)));
      std::vector<core::Message> out;
      out.reserve(head.size());
      Status read;
      for (const MessageRecord* r : head) {
        Result<MessageRecord> next =
            core::Apply(t.Copy(*r), core::Event{core::EventKind::kDeliver, req.ack_timeout}, now);
        CQ_CHECK(next.has_value(), "head of '{}' not deliverable: {}", t.name(),
                 next.error().ToString());
        out.push_back(core::Message{std::move(next).value(), MsgStatus::kConsuming});
      }
      for (core::Message& m : out) {
        Result<std::optional<std::string>> payload = store_->GetPayload(t.name(), m.record.msg_id);
        if (!payload.has_value()) {
          read = payload.error();
          break;
        }
        if (*payload) m.record.payload = std::move(**payload);
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
        for (size_t i = 0; i < out.size(); ++i) {
          MessageRecord before = t.Copy(*head[i]);
          WriteTransition(batch, &before, out[i].record);
          held.push_back(core::CopyWithoutPayload(out[i].record));
        }
        answer.Set(std::move(out));
        if (CommitFor(slot, std::move(batch), answer.OnDurable(), &outcome)) {
          for (MessageRecord& r : held) t.Update(std::move(r), now);
        }
      }
      Reschedule(*slot);
    }
  }
  Report(fx);
  if (outcome) answer.Finish(*outcome);
}

void Engine::Ack(std::string topic, std::string msg_id, bool ack, Callback<Status> done) {
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
    const core::Event event{ack ? core::EventKind::kAck : core::EventKind::kNack};
    if (live == nullptr) {
      // Not held: unknown, ended, or far (never delivered): neither ack nor nack applies.
      Result<MessageRecord> stored = FindStored(topic, msg_id, now, false);
      answer.Set(stored.has_value() ? core::Apply(*stored, event, now).status() : stored.error());
      std::optional<Status> ignored;
      CommitFor(
          slot, std::move(batch), [](Status) {}, &ignored);
    } else {
      Topic& t = *slot->topic;
      MessageRecord before = t.Copy(*live);
      Result<MessageRecord> next = core::Apply(before, event, now);
      if (!next.has_value()) {
        answer.Set(next.error());
        std::optional<Status> ignored;
        CommitFor(
            slot, std::move(batch), [](Status) {}, &ignored);
      } else {
        WriteTransition(batch, &before, *next);
        answer.Set(Status::Ok());
        const bool ended = next->phase == Phase::kEnded;
        if (CommitFor(slot, std::move(batch), answer.OnDurable(), &outcome)) {
          t.Touch(now);
          if (!ack) {
            fx.ready = !ended;
            fx.ended = ended ? 1 : 0;
          }
          t.Update(std::move(next).value(), now);
        }
      }
    }
    if (slot != nullptr) Reschedule(*slot);
  }
  Report(fx);
  if (outcome) answer.Finish(*outcome);
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
        batch.MoveVis(&*before, nullptr);
        if (Waiting(*before)) batch.HistAdd(topic, before->trigger_time, -1);
      } else {
        WriteTransition(batch, &*before, *next);
      }
      answer.Set(Status::Ok());
      if (CommitFor(slot, std::move(batch), answer.OnDurable(), &outcome) && slot != nullptr) {
        Topic& t = *slot->topic;
        t.Touch(now);
        if (far) {
          t.AddFar(before->trigger_time, -1, now);
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
