// Time passing in the Engine (engine.h): advancing topics, loading far messages as they come near,
// per-topic timers, and the retention purge.
#include <algorithm>

#include "base/log.h"
#include "engine/engine.h"

namespace chronoq::engine {

using core::MessageRecord;

namespace {
constexpr const char* kLog = "cq.engine";
constexpr size_t kPurgeChunk = 2048;
}  // namespace

Status Engine::LoadNear(Topic& t, TimePoint now, bool* more) {
  *more = false;
  const TimePoint target = SaturatingAdd(now, options_.memory_horizon);
  const IndexKey target_key{target, 0};
  if (t.far_count() == 0) {
    if (t.cursor() < target_key) t.set_cursor(target_key);
    return Status::Ok();
  }
  const TimePoint first = t.FirstFar();
  const TimePoint half = SaturatingAdd(now, options_.memory_horizon / 2);
  if (first > half) {
    // Nothing to load yet; the cursor may still move up to the first far message, so that new
    // sends before it are held in memory at once.
    IndexKey up_to = first < target ? IndexKey{first, 0} : target_key;
    if (t.cursor() < up_to) t.set_cursor(up_to);
    return Status::Ok();
  }
  // Load in time order what is due by `target`: in chunks, but everything already due at once.
  IndexKey cursor = t.cursor();
  size_t loaded = 0;
  int64_t unknown = 0;
  bool stopped = false;
  // A vis value holds no payload: the payloads of a step's first `load_chunk` messages are read
  // here, in one batched read, ahead of their due time, so that their delivery reads none (a held
  // payload is at most kHeldPayloadBytes; a larger one, one that cannot be read now, or one of
  // the messages already due loaded beyond the chunk, is read at the pull). The step holds the
  // topic's shard lock: the chunk bounds it (docs/benchmarks.md, "Fifth session: bursts").
  std::vector<MessageRecord> chunk;
  auto hold = [&] {
    std::vector<std::string> ids;
    ids.reserve(chunk.size());
    for (const MessageRecord& r : chunk) ids.push_back(r.msg_id);
    Result<std::vector<std::optional<std::string>>> payloads = store_->GetPayloads(t.name(), ids);
    for (size_t i = 0; i < chunk.size(); ++i) {
      MessageRecord& r = chunk[i];
      if (payloads.has_value() && (*payloads)[i] && (*payloads)[i]->size() <= kHeldPayloadBytes) {
        r.payload = std::move(*(*payloads)[i]);
      }
      if (!t.LoadFar(std::move(r), t.processed())) ++unknown;
    }
    chunk.clear();
  };
  Status s = store_->ScanVis(t.name(), storage::VisKind::kPending, cursor.t, cursor.seq, target,
                             [&](MessageRecord&& rec) {
                               if (loaded >= options_.load_chunk && rec.visible_at > now) {
                                 stopped = true;
                                 return false;
                               }
                               cursor = IndexKey{rec.visible_at, rec.seq + 1};
                               if (loaded < options_.load_chunk) {
                                 chunk.push_back(std::move(rec));
                               } else if (!t.LoadFar(std::move(rec), t.processed())) {
                                 ++unknown;
                               }
                               ++loaded;
                               if (loaded == options_.load_chunk) hold();
                               return true;
                             });
  if (!chunk.empty()) hold();
  if (!s.ok()) return s;
  // The histogram and the visibility index are written in the same batches, so they agree;
  // should they not, trust the index rather than wait for messages that are not there.
  int64_t missing = stopped ? 0 : t.DropFarBefore(target, t.processed());
  if (unknown > 0 || missing > 0) {
    CQ_LOG_ERROR(kLog,
                 "topic '{}': the far-message histogram disagreed with the index ({} loaded "
                 "messages it did not count, {} counted messages not found); counts corrected",
                 t.name(), unknown, missing);
  }
  t.set_cursor(stopped ? cursor : target_key);
  *more = stopped;
  return Status::Ok();
}

TimePoint Engine::Advance(Slot& slot, Effects& fx, Batch& batch) {
  Topic& t = *slot.topic;
  TimePoint now = std::max(clock_->Now(), t.processed());
  bool more = false;
  Status s = LoadNear(t, now, &more);
  if (!s.ok()) {
    CQ_LOG_WARN(kLog, "loading messages of topic '{}' failed (retrying in 1 s): {}", t.name(),
                s.ToString());
    slot.load_retry_at = SaturatingAdd(now, Millis(1000));
  }
  size_t before = fx.advanced.finalized.size();
  t.AdvanceTo(now, &fx.advanced);
  for (size_t i = before; i < fx.advanced.finalized.size(); ++i) {
    const EndedByTime& e = fx.advanced.finalized[i];
    WriteTransition(batch, &e.before, e.after);
    AddDeadLetter(batch, e.after, now, fx);
  }
  return now;
}

void Engine::Reschedule(Slot& slot) {
  const Topic& t = *slot.topic;
  TimePoint next = t.NextDue(options_.topic_inactive);
  if (t.far_count() > 0) {
    // Load far messages half a horizon before they are due (at once when loading was cut short).
    TimePoint load_at = t.FirstFar() - options_.memory_horizon / 2;
    next = std::min(next, std::max({load_at, t.processed(), slot.load_retry_at}));
  }
  if (next != kTimeMax) next = std::max(next, slot.write_retry_at);
  if (slot.timer != 0 && slot.timer_at <= next) return;  // that timer reschedules when it fires
  if (slot.timer != 0) scheduler_->Cancel(slot.timer);
  slot.timer = 0;
  slot.timer_at = kTimeMax;
  if (next == kTimeMax) return;
  slot.timer_at = next;
  slot.timer = scheduler_->Schedule(next, [this, name = t.name()] { Tick(name); });
}

void Engine::Tick(const std::string& topic) {
  Shard& shard = ShardFor(topic);
  Effects fx{topic, {}, 0, false};
  {
    base::MutexLock lock(shard.mu);
    Slot* slot = Find(shard, topic);
    if (slot == nullptr) return;
    slot->timer = 0;
    slot->timer_at = kTimeMax;
    Batch batch = store_->NewBatch();
    TimePoint now = Advance(*slot, fx, batch);
    std::optional<Status> ignored;
    CommitFor(
        slot, std::move(batch), [](Status) {}, &ignored);
    if (slot->topic->empty() && !Listed(*slot->topic, now)) {
      shard.topics.erase(topic);  // inactive: forgotten
    } else {
      Reschedule(*slot);
    }
  }
  Report(fx);
}

void Engine::NotePurgeTime(TimePoint purge_at) {
  // An entry before the cursor (a message that ended in the past): walk from the start again.
  RestartPurge(purge_at, /*only_if_earlier=*/true);
}

void Engine::RestartPurge(TimePoint at, bool only_if_earlier) {
  base::MutexLock lock(purge_mu_);
  if (only_if_earlier && at >= purge_at_) return;
  purge_cursor_.clear();
  ++purge_epoch_;
  if (at >= purge_at_) return;
  if (purge_timer_ != 0) scheduler_->Cancel(purge_timer_);
  purge_at_ = at;
  purge_timer_ = scheduler_->Schedule(at, [this] { PurgeRetained(); });
}

void Engine::PurgeRetained() {
  std::string cursor;
  uint64_t epoch = 0;
  {
    base::MutexLock lock(purge_mu_);
    purge_timer_ = 0;
    purge_at_ = kTimeMax;
    cursor = purge_cursor_;
    epoch = purge_epoch_;
  }
  const TimePoint now = clock_->Now();
  std::vector<std::pair<storage::RetentionEntry, std::string>> due;
  Status s = store_->ScanRetention(cursor, now,
                                   [&](const storage::RetentionEntry& e, const std::string& key) {
                                     due.emplace_back(e, key);
                                     return due.size() < kPurgeChunk;
                                   });
  if (!s.ok()) CQ_LOG_WARN(kLog, "reading the retention index failed: {}", s.ToString());
  // Delete each record under its topic's lock, unless a new message has taken its id since.
  std::sort(due.begin(), due.end(), [this](const auto& a, const auto& b) {
    return &ShardFor(a.first.topic) < &ShardFor(b.first.topic);
  });
  size_t i = 0;
  while (i < due.size()) {
    Shard& shard = ShardFor(due[i].first.topic);
    base::MutexLock lock(shard.mu);
    Batch batch = store_->NewBatch();
    for (; i < due.size() && &ShardFor(due[i].first.topic) == &shard; ++i) {
      const storage::RetentionEntry& e = due[i].first;
      Result<std::optional<MessageRecord>> rec = store_->GetRecord(e.topic, e.msg_id, false);
      if (rec.has_value() && *rec && (*rec)->seq == e.seq) {
        batch.DeleteRecord(e.topic, e.msg_id);
        DeleteHistory(batch, e.topic, e.msg_id);
        if ((*rec)->phase == core::Phase::kEnded) batch.DeleteEnded(**rec, e.purge_at);
      }
      batch.DeleteRetentionEntry(e.purge_at, e.seq);
    }
    // A failed write leaves its entries in the store: walk from the start again, a bit later.
    auto retry = [this] { RestartPurge(SaturatingAdd(clock_->Now(), Millis(1000)), false); };
    std::optional<Status> outcome;
    if (!CommitFor(
            nullptr, std::move(batch),
            [retry](Status st) {
              if (!st.ok()) retry();
            },
            &outcome)) {
      retry();
    }
  }
  // Next run: at once when this one was cut short, else at the next retention entry.
  TimePoint next = kTimeMax;
  std::string last = due.empty() ? cursor : due.back().second;
  if (due.size() >= kPurgeChunk) {
    next = now;
  } else {
    Status s2 = store_->ScanRetention(last, kTimeMax,
                                      [&](const storage::RetentionEntry& e, const std::string&) {
                                        next = e.purge_at;
                                        return false;
                                      });
    if (!s2.ok()) next = SaturatingAdd(now, Millis(1000));
  }
  base::MutexLock lock(purge_mu_);
  if (purge_epoch_ == epoch) purge_cursor_ = last;  // unless it was reset meanwhile
  if (next < purge_at_) {
    if (purge_timer_ != 0) scheduler_->Cancel(purge_timer_);
    purge_at_ = next;
    purge_timer_ = scheduler_->Schedule(next, [this] { PurgeRetained(); });
  }
}

}  // namespace chronoq::engine
