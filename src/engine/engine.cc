#include "engine/engine.h"

#include <fmt/format.h>

#include <algorithm>

#include "base/log.h"
#include "base/random.h"
#include "core/state_machine.h"

namespace chronoq::engine {

using core::MessageRecord;
using core::MsgStatus;

namespace {
constexpr const char* kLog = "cq.engine";
}

Engine::Engine(EngineOptions options, storage::Store* store, const base::Clock* clock,
               base::Scheduler* scheduler, metrics::MonitorRecorder* monitor)
    : options_(options), store_(store), clock_(clock), scheduler_(scheduler), monitor_(monitor) {
  int n = std::max(1, options_.shards);
  for (int i = 0; i < n; ++i) shards_.push_back(std::make_unique<Shard>());
}

Engine::~Engine() {
  for (auto& shard : shards_) {
    std::lock_guard lock(shard->mu);
    for (auto& [name, slot] : shard->topics) {
      if (slot.timer != 0) scheduler_->Cancel(slot.timer);
    }
  }
}

Engine::Shard& Engine::ShardFor(std::string_view topic) {
  return *shards_[std::hash<std::string_view>{}(topic) % shards_.size()];
}

Engine::Slot* Engine::Find(Shard& shard, const std::string& topic) {
  auto it = shard.topics.find(topic);
  return it == shard.topics.end() ? nullptr : &it->second;
}

TimePoint Engine::Advance(Topic& t, Effects& fx) {
  TimePoint now = std::max(clock_->Now(), t.processed());
  size_t before = fx.advanced.finalized.size();
  t.AdvanceTo(now, &fx.advanced);
  if (fx.advanced.finalized.size() > before) {
    storage::WriteBatch batch;
    for (size_t i = before; i < fx.advanced.finalized.size(); ++i) {
      batch.PutMeta(fx.advanced.finalized[i]);
    }
    // A lost finalization is harmless: the stored record's derived status is already ended.
    Status s = store_->Write(batch);
    if (!s.ok()) CQ_LOG_WARN(kLog, "persisting ended messages of a topic failed: {}", s.ToString());
  }
  return now;
}

void Engine::Reschedule(Slot& slot) {
  TimePoint next = slot.topic->NextDue(options_.topic_inactive);
  if (slot.timer != 0 && slot.timer_at <= next) return;  // that timer reschedules when it fires
  if (slot.timer != 0) scheduler_->Cancel(slot.timer);
  slot.timer = 0;
  slot.timer_at = kTimeMax;
  if (next == kTimeMax) return;
  slot.timer_at = next;
  slot.timer = scheduler_->Schedule(next, [this, name = slot.topic->name()] { Tick(name); });
}

void Engine::Report(Effects& fx) {
  const AdvanceResult& a = fx.advanced;
  if (a.triggered > 0 || a.ack_timeouts > 0 || !a.finalized.empty() || fx.ended > 0) {
    TimePoint now = clock_->Now();
    monitor_->Add(fx.topic, metrics::MonitorCounter::kTriggerMsgReady, a.triggered, now);
    monitor_->AddReadyGap(fx.topic, a.triggered, a.ready_gap_sum_ms, a.ready_gap_max_ms, now);
    monitor_->Add(fx.topic, metrics::MonitorCounter::kTriggerMsgTimeout, a.ack_timeouts, now);
    monitor_->Add(fx.topic, metrics::MonitorCounter::kTriggerMsgEndLife,
                  static_cast<int64_t>(a.finalized.size()) + fx.ended, now);
  }
  if (fx.ready || a.became_ready) {
    if (ReadyListener* l = listener_.load()) l->OnReady(fx.topic);
  }
}

bool Engine::Listed(const Topic& t, TimePoint now) const {
  return t.live_count() > 0 || now - t.last_active() < options_.topic_inactive;
}

Status Engine::NotFoundError(const std::string& topic, const std::string& msg_id) const {
  return NotFound(fmt::format("message '{}' not found in topic '{}'", msg_id, topic));
}

Result<MessageRecord> Engine::FindRetained(const Topic& t, const std::string& msg_id, TimePoint now,
                                           bool with_payload) {
  Result<std::optional<MessageRecord>> stored = store_->Get(t.name(), msg_id, with_payload);
  if (!stored.has_value()) return stored.error();
  if (!stored->has_value() || now >= t.PurgeTime(**stored)) return NotFoundError(t.name(), msg_id);
  return std::move(**stored);
}

void Engine::Send(core::NewMessage m, Callback<Result<core::Message>> done) {
  // A generated id (128 random bits) is new by construction: no idempotence or replacement
  // lookups for it.
  const bool generated = m.msg_id.empty();
  if (generated) m.msg_id = base::NewMsgId();
  Shard& shard = ShardFor(m.topic);
  Effects fx{m.topic, {}, 0, false};
  Result<core::Message> result = [&]() -> Result<core::Message> {
    std::lock_guard lock(shard.mu);
    Slot* slot = Find(shard, m.topic);
    if (slot == nullptr) {
      Slot fresh;
      fresh.topic = std::make_unique<Topic>(m.topic, clock_->Now(), options_.retention);
      slot = &shard.topics.emplace(m.topic, std::move(fresh)).first->second;
    }
    Topic& t = *slot->topic;
    TimePoint now = Advance(t, fx);
    t.Touch(now);

    if (const MessageRecord* live = generated ? nullptr : t.FindLive(m.msg_id)) {  // idempotent
      Reschedule(*slot);
      CQ_ASSIGN_OR_RETURN(std::optional<MessageRecord> stored,
                          store_->Get(m.topic, m.msg_id, /*with_payload=*/true));
      MessageRecord rec = t.Copy(*live);
      if (stored) rec.payload = std::move(stored->payload);
      MsgStatus status = core::StatusAt(rec, now);
      return core::Message{std::move(rec), status};
    }
    std::optional<MessageRecord> old;
    if (!generated) {
      CQ_ASSIGN_OR_RETURN(old, store_->Get(m.topic, m.msg_id, /*with_payload=*/false));
    }
    MessageRecord rec = core::CreateRecord(std::move(m), now, next_seq_.fetch_add(1));
    storage::WriteBatch batch;
    batch.PutMeta(rec);
    batch.PutPayload(rec);
    CQ_RETURN_IF_ERROR(store_->Write(batch));
    if (old) t.RemoveRetention(*old);  // the ended message it replaces
    t.Insert(core::CopyWithoutPayload(rec), now);
    Reschedule(*slot);
    MsgStatus status = core::StatusAt(rec, now);
    fx.ready = status == MsgStatus::kReady;
    return core::Message{std::move(rec), status};
  }();
  Report(fx);
  done(std::move(result));
}

void Engine::Pull(PullRequest req, Callback<Result<std::vector<core::Message>>> done) {
  Shard& shard = ShardFor(req.topic);
  Effects fx{req.topic, {}, 0, false};
  Result<std::vector<core::Message>> result = [&]() -> Result<std::vector<core::Message>> {
    std::lock_guard lock(shard.mu);
    std::vector<core::Message> out;
    Slot* slot = Find(shard, req.topic);
    if (slot == nullptr) return out;
    Topic& t = *slot->topic;
    TimePoint now = Advance(t, fx);
    t.Touch(now);
    std::vector<const MessageRecord*> head =
        t.DueHead(now, static_cast<size_t>(std::max(1, req.batch)));
    storage::WriteBatch batch;
    out.reserve(head.size());
    for (const MessageRecord* r : head) {
      Result<MessageRecord> next =
          core::Apply(*r, core::Event{core::EventKind::kDeliver, req.ack_timeout}, now);
      CQ_CHECK(next.has_value(), "head of '{}' not deliverable: {}", t.name(),
               next.error().ToString());
      next->topic = t.name();
      out.push_back(core::Message{std::move(next).value(), MsgStatus::kConsuming});
      batch.PutMeta(out.back().record);  // `out` was reserved: the record stays put
    }
    for (core::Message& m : out) {
      CQ_ASSIGN_OR_RETURN(std::optional<MessageRecord> stored,
                          store_->Get(t.name(), m.record.msg_id, /*with_payload=*/true));
      if (stored) m.record.payload = std::move(stored->payload);
    }
    if (!batch.empty()) CQ_RETURN_IF_ERROR(store_->Write(batch));
    for (const core::Message& m : out) t.Update(m.record, now);
    Reschedule(*slot);
    return out;
  }();
  Report(fx);
  done(std::move(result));
}

void Engine::Ack(std::string topic, std::string msg_id, bool ack, Callback<Status> done) {
  Shard& shard = ShardFor(topic);
  Effects fx{topic, {}, 0, false};
  Status result = [&]() -> Status {
    std::lock_guard lock(shard.mu);
    Slot* slot = Find(shard, topic);
    if (slot == nullptr) return NotFoundError(topic, msg_id);
    Topic& t = *slot->topic;
    TimePoint now = Advance(t, fx);
    const MessageRecord* live = t.FindLive(msg_id);
    if (live == nullptr) {
      CQ_ASSIGN_OR_RETURN(MessageRecord ended, FindRetained(t, msg_id, now, false));
      return core::Apply(ended, core::Event{ack ? core::EventKind::kAck : core::EventKind::kNack},
                         now)
          .status();  // always kInvalidState: an ended message accepts neither
    }
    CQ_ASSIGN_OR_RETURN(
        MessageRecord next,
        core::Apply(*live, core::Event{ack ? core::EventKind::kAck : core::EventKind::kNack}, now));
    next.topic = topic;
    storage::WriteBatch batch;
    batch.PutMeta(next);
    CQ_RETURN_IF_ERROR(store_->Write(batch));
    t.Touch(now);
    if (!ack) {
      fx.ready = next.phase != core::Phase::kEnded;
      if (next.phase == core::Phase::kEnded) fx.ended = 1;
    }
    t.Update(std::move(next), now);
    Reschedule(*slot);
    return Status::Ok();
  }();
  Report(fx);
  done(std::move(result));
}

void Engine::Delete(std::string topic, std::string msg_id, bool release, Callback<Status> done) {
  Shard& shard = ShardFor(topic);
  Effects fx{topic, {}, 0, false};
  Status result = [&]() -> Status {
    std::lock_guard lock(shard.mu);
    Slot* slot = Find(shard, topic);
    if (slot == nullptr) return NotFoundError(topic, msg_id);
    Topic& t = *slot->topic;
    TimePoint now = Advance(t, fx);
    const MessageRecord* live = t.FindLive(msg_id);
    if (live == nullptr) {
      CQ_ASSIGN_OR_RETURN(MessageRecord ended, FindRetained(t, msg_id, now, false));
      return core::Apply(ended, core::Event{core::EventKind::kDelete}, now).status();
    }
    CQ_ASSIGN_OR_RETURN(MessageRecord next,
                        core::Apply(*live, core::Event{core::EventKind::kDelete}, now));
    next.topic = topic;
    storage::WriteBatch batch;
    if (release) {
      batch.Delete(topic, msg_id);
    } else {
      batch.PutMeta(next);
    }
    CQ_RETURN_IF_ERROR(store_->Write(batch));
    t.Touch(now);
    if (release) {
      t.Forget(msg_id, now);
    } else {
      t.Update(std::move(next), now);
    }
    Reschedule(*slot);
    return Status::Ok();
  }();
  Report(fx);
  done(std::move(result));
}

void Engine::Get(std::string topic, std::string msg_id, Callback<Result<core::Message>> done) {
  Shard& shard = ShardFor(topic);
  Result<core::Message> result = [&]() -> Result<core::Message> {
    std::lock_guard lock(shard.mu);
    Slot* slot = Find(shard, topic);
    if (slot == nullptr) return NotFoundError(topic, msg_id);
    Topic& t = *slot->topic;
    TimePoint now = std::max(clock_->Now(), t.processed());
    if (const MessageRecord* live = t.FindLive(msg_id)) {
      // Ended by time and past its retention, though not yet finalized (timers lag): gone.
      if (now >= t.PurgeTime(*live)) return NotFoundError(topic, msg_id);
      CQ_ASSIGN_OR_RETURN(std::optional<MessageRecord> stored,
                          store_->Get(topic, msg_id, /*with_payload=*/true));
      MessageRecord rec = t.Copy(*live);
      if (stored) rec.payload = std::move(stored->payload);
      MsgStatus status = core::StatusAt(rec, now);
      return core::Message{std::move(rec), status};
    }
    CQ_ASSIGN_OR_RETURN(MessageRecord ended, FindRetained(t, msg_id, now, true));
    MsgStatus status = core::StatusAt(ended, now);
    return core::Message{std::move(ended), status};
  }();
  done(std::move(result));
}

void Engine::GetTopicInfo(std::string topic, Callback<Result<core::TopicInfo>> done) {
  Shard& shard = ShardFor(topic);
  Effects fx{topic, {}, 0, false};
  core::TopicInfo info;
  info.topic = topic;
  {
    std::lock_guard lock(shard.mu);
    if (Slot* slot = Find(shard, topic)) {
      Advance(*slot->topic, fx);
      info = slot->topic->Info();
      Reschedule(*slot);
    }
  }
  Report(fx);
  done(std::move(info));
}

void Engine::ListTopics(Callback<Result<std::vector<core::TopicInfo>>> done) {
  std::vector<core::TopicInfo> out;
  std::vector<Effects> effects;
  for (auto& shard : shards_) {
    std::lock_guard lock(shard->mu);
    for (auto& [name, slot] : shard->topics) {
      Effects fx{name, {}, 0, false};
      TimePoint now = Advance(*slot.topic, fx);
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

void Engine::Tick(const std::string& topic) {
  Shard& shard = ShardFor(topic);
  Effects fx{topic, {}, 0, false};
  {
    std::lock_guard lock(shard.mu);
    Slot* slot = Find(shard, topic);
    if (slot == nullptr) return;
    slot->timer = 0;
    slot->timer_at = kTimeMax;
    Topic& t = *slot->topic;
    TimePoint now = Advance(t, fx);
    std::vector<Topic::Purge> purge = t.PopPurgeable(now);
    if (!purge.empty()) {
      storage::WriteBatch batch;
      for (const Topic::Purge& p : purge) batch.Delete(topic, p.msg_id);
      Status s = store_->Write(batch);
      if (!s.ok()) CQ_LOG_WARN(kLog, "purging ended messages failed: {}", s.ToString());
    }
    if (t.live_count() == 0 && t.retained_count() == 0 && !Listed(t, now)) {
      shard.topics.erase(topic);  // inactive: forgotten
    } else {
      Reschedule(*slot);
    }
  }
  Report(fx);
}

}  // namespace chronoq::engine
