// Sends and acks of the Engine (engine.h), one message or a batch of one topic: either way one
// shard lock, one store batch (one group commit) and one answer. Send and Ack are batches of one.
#include <algorithm>
#include <optional>
#include <span>
#include <vector>

#include "base/random.h"
#include "core/state_machine.h"
#include "engine/answer.h"
#include "engine/engine.h"

namespace chronoq::engine {

using core::MessageRecord;
using core::MsgStatus;
using core::Phase;

Result<Engine::Prior> Engine::FindPrior(const Topic& t, const Effects& fx,
                                        const std::string& msg_id) {
  Prior prior;
  auto just_ended = std::find_if(fx.advanced.finalized.begin(), fx.advanced.finalized.end(),
                                 [&](const EndedByTime& e) { return e.after.msg_id == msg_id; });
  if (const MessageRecord* live = t.FindLive(msg_id)) {
    prior.existing = t.Copy(*live);
  } else if (just_ended != fx.advanced.finalized.end()) {
    prior.replaced = just_ended->after;  // ended by time in this step: not stored yet
  } else {
    CQ_ASSIGN_OR_RETURN(std::optional<MessageRecord> stored,
                        store_->GetRecord(t.name(), msg_id, false));
    if (stored && stored->phase != Phase::kEnded) {
      prior.existing = std::move(*stored);  // a far waiting message
    } else if (stored) {
      prior.replaced = std::move(*stored);
    }
  }
  if (prior.existing) {
    CQ_ASSIGN_OR_RETURN(std::optional<std::string> payload, store_->GetPayload(t.name(), msg_id));
    if (payload) prior.existing->payload = std::move(*payload);
  }
  return prior;
}

void Engine::WriteNew(Batch& batch, const MessageRecord& rec,
                      const std::optional<MessageRecord>& replaced) {
  if (replaced) {
    batch.DeleteEnded(*replaced, PurgeTime(*replaced));
    batch.DeleteRecordMeta(rec.topic, rec.msg_id);
  }
  WriteTransition(batch, nullptr, rec);
}

void Engine::NewRecords::Add(const Topic& t, const MessageRecord& rec) {
  // Only pending messages live in the far tier; deliveries (imported ones) are always held.
  if (rec.phase == Phase::kPending && t.IsFar(rec.visible_at, rec.seq)) {
    Held& h = held_.emplace_back(true);
    h.rec.visible_at = rec.visible_at;
  } else if (rec.payload.size() <= kHeldPayloadBytes) {
    // A small payload stays with the held record: its delivery reads none (Topic). The copy is
    // made in place, not moved there.
    held_.emplace_back(false, rec);
  } else {
    held_.emplace_back(false, core::CopyWithoutPayload(rec));
  }
}

void Engine::NewRecords::TakeInto(Topic& t, TimePoint now) {
  for (Held& h : held_) {
    if (h.far) {
      t.AddFar(h.rec.visible_at, 1, now);
    } else {
      t.Insert(std::move(h.rec), now);
    }
  }
  held_.clear();
}

void Engine::AfterNewWrite(Shard& shard, Slot& slot, bool created, bool refused) {
  if (refused && created && slot.topic->empty()) {
    if (slot.timer != 0) scheduler_->Cancel(slot.timer);
    const std::string name = slot.topic->name();  // the key outlives the erased slot
    shard.topics.erase(name);
  } else {
    Reschedule(slot);
  }
}

namespace {

// The answers of SendItems' items, as SendBatch gives them: a vector of one answer per item, set
// as the operation's answer by Done().
class BatchAnswers {
 public:
  using Answer = Result<std::vector<Result<backend::Sent>>>;
  BatchAnswers(engine::Answer<Answer>& answer, size_t n) : answer_(answer) { out_.reserve(n); }
  template <typename R>
  void Add(R&& r) {
    out_.emplace_back(std::forward<R>(r));
  }
  void Done() { answer_.Set(std::move(out_)); }

 private:
  engine::Answer<Answer>& answer_;
  std::vector<Result<backend::Sent>> out_;
};

// Send's: the one item's answer is the operation's, constructed where the answer keeps it.
class OneAnswer {
 public:
  using Answer = Result<backend::Sent>;
  OneAnswer(engine::Answer<Answer>& answer, size_t) : answer_(answer) {}
  template <typename R>
  void Add(R&& r) {
    answer_.Set(std::forward<R>(r));
  }
  void Done() {}

 private:
  engine::Answer<Answer>& answer_;
};

}  // namespace

void Engine::Send(core::NewMessage m, Callback<Result<backend::Sent>> done) {
  SendItems<OneAnswer>(std::span<core::NewMessage>(&m, 1), std::move(done));
}

void Engine::SendBatch(std::vector<core::NewMessage> msgs,
                       Callback<Result<std::vector<Result<backend::Sent>>>> done) {
  if (msgs.empty()) {
    done(std::vector<Result<backend::Sent>>());
    return;
  }
  SendItems<BatchAnswers>(msgs, std::move(done));
}

template <typename Out>
void Engine::SendItems(std::span<core::NewMessage> msgs, Callback<typename Out::Answer> done) {
  // What each item needs besides its message: one allocation for all of them, none for a send
  // of one message.
  struct Item {
    bool generated = false;  // the id is ours: no idempotence or replacement lookup
    bool full = false;       // refused: the topic is at capacity
    Prior prior;             // the in-life or ended message with the item's id
  };
  Item one;  // a send of one message allocates none
  std::vector<Item> many(msgs.size() > 1 ? msgs.size() : 0);
  Item* items = msgs.size() == 1 ? &one : many.data();
  // A generated id (milliseconds, a counter and 64 random bits) is new by construction: no
  // idempotence or replacement lookups for it.
  for (size_t i = 0; i < msgs.size(); ++i) {
    items[i].generated = msgs[i].msg_id.empty();
    if (items[i].generated) msgs[i].msg_id = base::NewMsgId();
  }
  Effects fx{msgs.front().topic, {}, 0, false};
  const std::string& topic = fx.topic;  // msgs[i] are moved from below
  Shard& shard = ShardFor(topic);
  Answer<typename Out::Answer> answer(std::move(done));
  std::optional<Status> outcome;
  {
    base::MutexLock lock(shard.mu);
    bool created = false;
    bool refused = false;
    Slot& slot = FindOrCreate(shard, topic, &created);  // one lookup of the topic
    const core::EffectiveTopicConfig& config = ConfigOf(slot);
    Topic& t = *slot.topic;
    Batch batch = store_->NewBatch();
    // A new message writes its `sent` and `vis` entries and a histogram addition; a few more
    // for what Advance ends.
    batch.Reserve(3 * msgs.size() + 2);
    // Answered in `done` only: the store may write it with the rest of this thread's loop turn.
    batch.SetDeferrable();
    TimePoint now = Advance(slot, fx, batch);
    t.Touch(now);

    // An in-life message with an item's id answers that item (idempotence); an ended one is
    // replaced. A failed lookup fails the whole batch.
    Status lookup;
    size_t fresh = 0;
    for (size_t i = 0; i < msgs.size() && lookup.ok(); ++i) {
      if (!items[i].generated) {
        Result<Prior> prior = FindPrior(t, fx, msgs[i].msg_id);
        if (!prior.has_value()) {
          lookup = prior.error();
          break;
        }
        items[i].prior = std::move(prior).value();
      }
    }
    // Capacity: the in-life messages now (near and far, counted as of `now` under the lock), so
    // that concurrent sends never overfill the topic. New items beyond it are refused each.
    const int64_t in_life = t.in_life();
    for (size_t i = 0; i < msgs.size() && lookup.ok(); ++i) {
      Item& item = items[i];
      if (item.prior.existing) continue;
      item.full = config.capacity > 0 && in_life + static_cast<int64_t>(fresh) >= config.capacity;
      if (!item.full) ++fresh;
    }
    // The answer to an item that stores nothing: the in-life message, or the refusal.
    auto unstored = [&](size_t i) -> Result<backend::Sent> {
      if (items[i].full)
        return core::TopicFull(topic, in_life + static_cast<int64_t>(fresh), config.capacity);
      Prior& p = items[i].prior;
      MsgStatus status = core::StatusAt(*p.existing, now);
      return backend::Sent{core::Message{std::move(*p.existing), status}, true};
    };
    if (!lookup.ok() || fresh == 0) {
      if (lookup.ok()) {
        Out out(answer, msgs.size());
        for (size_t i = 0; i < msgs.size(); ++i) out.Add(unstored(i));
        out.Done();
      } else {
        answer.Set(lookup);
      }
      std::optional<Status> ignored;
      CommitFor(
          &slot, std::move(batch), [](Status) {}, &ignored);  // what Advance ended
      outcome = Status::Ok();
    } else {
      NewRecords held;  // what memory takes once the write is accepted
      Out out(answer, msgs.size());
      uint64_t seq = AllocSeqs(batch, fresh);
      for (size_t i = 0; i < msgs.size(); ++i) {
        Prior& p = items[i].prior;
        if (p.existing || items[i].full) {
          out.Add(unstored(i));
          continue;
        }
        core::ResolveDefaults(msgs[i], config);
        // The record is created where the answer keeps it (not moved there afterwards).
        backend::Sent sent{
            core::Message{core::CreateRecord(std::move(msgs[i]), now, seq++), MsgStatus::kWaiting},
            false};
        const MessageRecord& rec = sent.message.record;
        WriteNew(batch, rec, p.replaced);
        sent.message.status = core::StatusAt(rec, now);
        if (sent.message.status == MsgStatus::kReady) fx.Ready(rec);
        held.Add(t, rec);
        out.Add(std::move(sent));
      }
      out.Done();
      if (CommitFor(&slot, std::move(batch), answer.OnDurable(), &outcome)) {
        held.TakeInto(t, now);
      } else {
        refused = true;
        fx.ready = false;
        fx.push_ready = false;
      }
    }
    AfterNewWrite(shard, slot, created, refused);
  }
  Report(fx);
  if (outcome) answer.Finish(*outcome);
}

void Engine::AckBatch(std::string topic, std::vector<backend::AckItem> items,
                      Callback<Result<std::vector<Status>>> done) {
  Shard& shard = ShardFor(topic);
  Effects fx{topic, {}, 0, false};
  Answer<Result<std::vector<Status>>> answer(std::move(done));
  std::optional<Status> outcome = Status::Ok();
  {
    base::MutexLock lock(shard.mu);
    Slot* slot = Find(shard, topic);
    // A nack's retry interval is the topic's at the time of the nack, or the push-lane message's
    // own callback's (without a slot, nothing is delivered: no nack applies).
    static const core::EffectiveTopicConfig kNone{};
    const core::EffectiveTopicConfig& config = slot != nullptr ? ConfigOf(*slot) : kNone;
    Batch batch = store_->NewBatch();
    // Answered in `done` only: the store may write it with the rest of this thread's loop turn.
    batch.SetDeferrable();
    TimePoint now = slot != nullptr ? Advance(*slot, fx, batch) : clock_->Now();
    std::vector<Status> results(items.size());
    std::vector<MessageRecord> changed;      // the new records, without payload
    std::vector<const MessageRecord*> held;  // the records `changed` replaces
    int64_t ended = 0;
    bool ready = false;  // in the pull lane, in the push lane
    bool push_ready = false;
    Status read;
    for (size_t i = 0; i < items.size(); ++i) {
      const backend::AckItem& item = items[i];
      const core::EventKind kind = item.ack       ? core::EventKind::kAck
                                   : item.release ? core::EventKind::kRelease
                                                  : core::EventKind::kNack;
      core::Event event{kind, Millis(0), 0, item.reason};
      // The outcome of one push attempt applies only while the message is in that attempt.
      auto outcome_of = [&](const MessageRecord& r) -> Result<MessageRecord> {
        CQ_RETURN_IF_ERROR(core::CheckAttempt(r, item.attempt));
        if (kind == core::EventKind::kRelease) {
          event.retry_interval = core::kReleaseBackoff;
        } else {
          event.retry_interval = r.push ? core::RetryIntervalOf(r, config) : config.retry_interval;
        }
        return core::Apply(r, event, now);
      };
      const MessageRecord* live = slot != nullptr ? slot->topic->FindLive(item.msg_id) : nullptr;
      if (live == nullptr) {
        // Not held: unknown, ended, or far (never delivered): neither ack nor nack applies.
        Result<MessageRecord> stored = FindStored(topic, item.msg_id, now, false);
        if (!stored.has_value() && stored.error().code() != Errc::kNotFound) {
          read = stored.error();
          break;
        }
        results[i] = stored.has_value() ? outcome_of(*stored).status() : stored.error();
        continue;
      }
      MessageRecord before = slot->topic->Copy(*live);
      Result<MessageRecord> next = outcome_of(before);
      if (!next.has_value()) {
        results[i] = next.error();
        continue;
      }
      WriteTransition(batch, &before, *next);
      if (!item.ack) {
        const bool end = next->phase == Phase::kEnded;
        if (end) AddDeadLetter(batch, *next, now, fx);
        ended += end ? 1 : 0;
        // A pull-lane nack wakes long polls (they pull again); a push is told when it is due.
        if (!end && (!next->push || next->visible_at <= now)) {
          (next->push ? push_ready : ready) = true;
        }
      }
      held.push_back(live);
      changed.push_back(std::move(next).value());
    }
    if (!read.ok() || changed.empty()) {
      // Nothing to write for the items; what Advance ended on the way is written all the same.
      if (read.ok()) {
        answer.Set(std::move(results));
      } else {
        answer.Set(read);
      }
      std::optional<Status> ignored;
      CommitFor(
          slot, std::move(batch), [](Status) {}, &ignored);
    } else {
      answer.Set(std::move(results));
      if (CommitFor(slot, std::move(batch), answer.OnDurable(), &outcome)) {
        Topic& t = *slot->topic;
        t.Touch(now);
        fx.ended = ended;
        fx.ready = ready;
        fx.push_ready = push_ready;
        // Distinct records (the service refuses a repeated msgId) are replaced without a second
        // lookup by id.
        std::vector<const MessageRecord*> order = held;
        std::sort(order.begin(), order.end());
        const bool distinct = std::adjacent_find(order.begin(), order.end()) == order.end();
        for (size_t i = 0; i < changed.size(); ++i) {
          if (distinct) {
            t.Replace(held[i], std::move(changed[i]), now);
          } else {
            t.Update(std::move(changed[i]), now);
          }
        }
      }
    }
    if (slot != nullptr) Reschedule(*slot);
  }
  Report(fx);
  if (outcome) answer.Finish(*outcome);
}

}  // namespace chronoq::engine
