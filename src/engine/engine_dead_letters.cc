// Dead letters and redrive in the Engine (engine.h; API-EXTENSIONS.md section 4).
//
// A message that ends as EXPIRE or RETRY_EXHAUST in a topic with a dead-letter topic gets its
// dead letter in the same store batch as its end (AddDeadLetter), so a crash leaves both or
// neither. The dead-letter topic may live in another shard, whose lock the ending operation must
// not take (two operations ending messages into each other's topics would deadlock): once the
// batch is committed and the source's lock released, DeliverDeadLetters takes the dead letter
// into its topic's memory under that topic's lock, reading it back from the store (a batch that
// failed left nothing to take). Until then a pull of the dead-letter topic does not see it; the
// operation that wrote it delivers it before it answers, so nothing waits for a timer.
//
// Redrive moves a dead letter back to its source in one batch written with both topics' locks
// held, taken in shard index order (as LockAllShards does), so the source's capacity and its msgIds
// are checked exactly.
#include <fmt/format.h>

#include <algorithm>
#include <future>
#include <memory>

#include "base/log.h"
#include "core/state_machine.h"
#include "engine/engine.h"

namespace chronoq::engine {

using core::MessageRecord;
using core::MsgStatus;
using core::Phase;

namespace {
constexpr const char* kLog = "cq.engine";
}  // namespace

void Engine::AddDeadLetter(Batch& batch, const MessageRecord& ended, TimePoint now, Effects& fx) {
  if (ended.end_status != MsgStatus::kExpire && ended.end_status != MsgStatus::kRetryExhaust) {
    return;
  }
  const std::string dlq = ConfigOf(ended.topic).dead_letter_topic;
  if (dlq.empty() || dlq == ended.topic) return;
  {
    base::MutexLock lock(dead_letter_mu_);
    // One on its way there already: that one stands for this one (as an in-life msgId would).
    if (!dead_letters_in_flight_.emplace(dlq, ended.msg_id).second) return;
  }
  auto give_up = [&](const Status& s) {
    if (!s.ok()) {
      CQ_LOG_ERROR(kLog, "dead letter of '{}' from topic '{}' to '{}' not written: {}",
                   ended.msg_id, ended.topic, dlq, s.ToString());
    }
    base::MutexLock lock(dead_letter_mu_);
    dead_letters_in_flight_.erase({dlq, ended.msg_id});
  };
  // The dead-letter topic holding that msgId in life (near or far, or ended by time and not yet
  // finalized): answered like an idempotent send, nothing written.
  Result<std::optional<MessageRecord>> there = store_->GetRecord(dlq, ended.msg_id, false);
  if (!there.has_value()) return give_up(there.error());
  if (*there && (*there)->phase != Phase::kEnded) return give_up(Status::Ok());
  Result<std::optional<std::string>> payload = store_->GetPayload(ended.topic, ended.msg_id);
  if (!payload.has_value()) return give_up(payload.error());
  MessageRecord source = ended;
  if (*payload) source.payload = std::move(**payload);
  MessageRecord dead = core::DeadLetterOf(source, dlq, ConfigOf(dlq), now, AllocSeq(batch));
  if (*there) {  // replaced, like a send does
    batch.DeleteEnded(**there, PurgeTime(**there));
    batch.DeleteRecordMeta(dlq, ended.msg_id);
  }
  WriteTransition(batch, nullptr, dead);
  fx.dead_letters.push_back(DeadLetterKey{dlq, ended.msg_id, dead.seq, ended.topic});
}

void Engine::DeliverDeadLetters(std::vector<DeadLetterKey> keys) {
  for (DeadLetterKey& key : keys) {
    Shard& shard = ShardFor(key.topic);
    Effects fx{key.topic, {}, 0, false};
    bool stored = false;
    {
      base::MutexLock lock(shard.mu);
      Slot& slot = FindOrCreate(shard, key.topic);
      Topic& t = *slot.topic;
      Batch batch = store_->NewBatch();
      const TimePoint now = Advance(slot, fx, batch);
      std::optional<Status> ignored;
      CommitFor(
          &slot, std::move(batch), [](Status) {}, &ignored);
      Result<std::optional<MessageRecord>> rec = store_->GetRecord(key.topic, key.msg_id, false);
      if (!rec.has_value()) {
        CQ_LOG_ERROR(kLog, "reading dead letter '{}' of topic '{}' failed: {}", key.msg_id,
                     key.topic, rec.error().ToString());
      }
      stored = rec.has_value() && *rec && (*rec)->seq == key.seq;
      // Held already when the topic was reloaded from the store since the write.
      if (stored && (*rec)->phase != Phase::kEnded && t.FindLive(key.msg_id) == nullptr) {
        MessageRecord r = std::move(**rec);
        if (t.IsFar(r.visible_at, r.seq)) {
          t.AddFar(r.visible_at, 1, now);
        } else {
          if (core::StatusAt(r, now) == MsgStatus::kReady) fx.Ready(r);
          t.Insert(std::move(r), now);
        }
      }
      t.Touch(now);
      Reschedule(slot);
    }
    {
      base::MutexLock lock(dead_letter_mu_);
      dead_letters_in_flight_.erase({key.topic, key.msg_id});
    }
    if (stored) {
      backend::TopicEvents e;
      e.dead_lettered = 1;
      if (backend::EventSink* sink = sink_.load()) sink->OnEvents(key.source, e);
    }
    Report(fx);  // wakes its long polls; passes on what its own Advance dead-lettered (chains)
  }
}

Status Engine::RedriveOne(const std::string& topic, const std::string& msg_id, Millis delay) {
  // The dead letter's source, read first (under the dead-letter topic's lock alone), then both
  // locks in shard index order; a dead letter whose source changed meanwhile is refused.
  std::string source;
  {
    Shard& shard = ShardFor(topic);
    base::MutexLock lock(shard.mu);
    Slot* slot = Find(shard, topic);
    const MessageRecord* live = slot != nullptr ? slot->topic->FindLive(msg_id) : nullptr;
    if (live == nullptr || !live->dead_letter) {
      Result<MessageRecord> stored = FindStored(topic, msg_id, clock_->Now(), false);
      if (!stored.has_value()) return stored.error();
      return InvalidState(
          fmt::format("message '{}' of topic '{}' is not a READY dead letter", msg_id, topic));
    }
    source = live->dead_letter->topic;
  }
  Shard& dlq_shard = ShardFor(topic);
  Shard& src_shard = ShardFor(source);
  Shard* first = ShardIndex(topic) <= ShardIndex(source) ? &dlq_shard : &src_shard;
  Shard* second = first == &dlq_shard ? &src_shard : &dlq_shard;
  Effects dlq_fx{topic, {}, 0, false};
  Effects src_fx{source, {}, 0, false};
  Status result;
  std::optional<Status> outcome;
  std::shared_ptr<std::promise<Status>> waiter = std::make_shared<std::promise<Status>>();
  std::future<Status> written = waiter->get_future();
  {
    base::MutexLock lock1(first->mu);
    std::optional<base::MutexLock> lock2;
    if (second != first) lock2.emplace(second->mu);
    Slot* dslot = Find(dlq_shard, topic);
    if (dslot == nullptr) return NotFoundError(topic, msg_id);
    Slot& sslot = FindOrCreate(src_shard, source);
    Batch batch = store_->NewBatch();
    const TimePoint now = Advance(*dslot, dlq_fx, batch);
    Advance(sslot, src_fx, batch);
    Topic& d = *dslot->topic;
    Topic& s = *sslot.topic;
    const MessageRecord* live = d.FindLive(msg_id);
    const core::EffectiveTopicConfig config = ConfigOf(source);
    std::optional<MessageRecord> before;
    std::optional<MessageRecord> replaced;
    if (live == nullptr || !live->dead_letter || live->dead_letter->topic != source ||
        core::StatusAt(*live, now) != MsgStatus::kReady) {
      result = live == nullptr
                   ? NotFoundError(topic, msg_id)
                   : InvalidState(fmt::format(
                         "message '{}' of topic '{}' is not a READY dead letter", msg_id, topic));
    } else if (config.capacity > 0 && s.in_life() >= config.capacity) {
      result = core::TopicFull(source, s.in_life(), config.capacity);
    } else if (s.FindLive(msg_id) != nullptr) {
      result = InvalidState(fmt::format("topic '{}' holds message '{}' in life", source, msg_id));
    } else {
      Result<std::optional<MessageRecord>> there = store_->GetRecord(source, msg_id, false);
      Result<std::optional<std::string>> payload = store_->GetPayload(topic, msg_id);
      if (!there.has_value() || !payload.has_value()) {
        result = !there.has_value() ? there.error() : payload.error();
      } else if (*there && (*there)->phase != Phase::kEnded) {
        result = InvalidState(fmt::format("topic '{}' holds message '{}' in life", source, msg_id));
      } else {
        before = d.Copy(*live);
        replaced = std::move(*there);
        MessageRecord dead = *before;
        if (*payload) dead.payload = std::move(**payload);
        MessageRecord back = core::RedriveOf(dead, config, delay, now, AllocSeq(batch));
        // The dead letter goes (DELETE, released at once); the message is back in its source.
        batch.DeleteRecord(topic, msg_id);
        DeleteHistory(batch, topic, msg_id);
        batch.MoveVis(&*before, nullptr);
        if (InHistogram(*before)) batch.HistAdd(topic, before->visible_at, -1);
        if (replaced) {
          batch.DeleteEnded(*replaced, PurgeTime(*replaced));
          batch.DeleteRecordMeta(source, msg_id);
        }
        WriteTransition(batch, nullptr, back, core::HistoryCause::kRedriven);
        if (CommitFor(
                nullptr, std::move(batch), [waiter](Status st) { waiter->set_value(st); },
                &outcome)) {
          d.Forget(msg_id, now);
          if (s.IsFar(back.visible_at, back.seq)) {
            s.AddFar(back.visible_at, 1, now);
          } else {
            if (core::StatusAt(back, now) == MsgStatus::kReady) src_fx.Ready(back);
            s.Insert(core::CopyWithoutPayload(back), now);
          }
          d.Touch(now);
          s.Touch(now);
        } else {
          RebuildTopic(*dslot);
          RebuildTopic(sslot);
        }
        batch = store_->NewBatch();
      }
    }
    if (!before) {
      // Nothing redriven: what Advance ended on the way is written all the same.
      std::optional<Status> ignored;
      CommitFor(
          nullptr, std::move(batch), [](Status) {}, &ignored);
    }
    Reschedule(*dslot);
    Reschedule(sslot);
  }
  Report(dlq_fx);
  Report(src_fx);
  if (!result.ok()) return result;
  return outcome ? *outcome : written.get();
}

void Engine::Redrive(backend::RedriveRequest req, Callback<Result<int64_t>> done) {
  if (req.msg_id) {
    Status s = RedriveOne(req.topic, *req.msg_id, req.delay);
    done(s.ok() ? Result<int64_t>(int64_t{1}) : Result<int64_t>(s));
    return;
  }
  // A walk: READY dead letters in pull order, a few at a time, each moved by its own write. One
  // whose source holds its msgId in life is passed over; a full source ends the walk.
  int64_t moved = 0;
  std::optional<PullPosition> after;
  const size_t want = static_cast<size_t>(std::max(1, req.limit));
  for (;;) {
    std::vector<std::string> ids;
    bool last = false;
    {
      Shard& shard = ShardFor(req.topic);
      base::MutexLock lock(shard.mu);
      Slot* slot = Find(shard, req.topic);
      if (slot == nullptr) break;
      const TimePoint now = std::max(clock_->Now(), slot->topic->processed());
      std::vector<const MessageRecord*> recs =
          slot->topic->PeekReady(now, after, want, Lane::kBoth);
      last = recs.size() < want;
      for (const MessageRecord* r : recs) {
        after = Topic::PositionOf(*r);
        if (r->dead_letter) ids.push_back(r->msg_id);
      }
    }
    bool stop = false;
    for (const std::string& id : ids) {
      if (moved >= req.limit) break;
      Status s = RedriveOne(req.topic, id, req.delay);
      if (s.ok()) {
        ++moved;
      } else if (s.code() == Errc::kResourceExhausted) {
        stop = true;
        break;
      } else if (s.code() != Errc::kInvalidState && s.code() != Errc::kNotFound) {
        done(s);
        return;
      }
    }
    if (stop || last || moved >= req.limit) break;
  }
  done(moved);
}

}  // namespace chronoq::engine
