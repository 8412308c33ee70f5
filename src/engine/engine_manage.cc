// Changes of one message in the Engine (engine.h): updateMsg, touchMsg and countMsg
// (API-EXTENSIONS.md section 3). Each runs under its topic's lock, like a pull, so a message is
// changed or delivered, never both; and works on far messages (on disk only) too: read from the
// store, re-counted in the far histogram, loaded when the change brings them near.
#include "core/state_machine.h"
#include "engine/answer.h"
#include "engine/engine.h"

namespace chronoq::engine {

using core::MessageRecord;
using core::MsgStatus;
using core::Phase;

void Engine::ApplyChange(Topic& t, const MessageRecord& before, bool before_far,
                         MessageRecord after, TimePoint now) {
  // Only pending messages are ever far (delivered ones are always held).
  const bool after_far = after.phase == Phase::kPending && t.IsFar(after.visible_at, after.seq);
  if (before_far && after_far) {
    if (before.visible_at != after.visible_at) {
      t.AddFar(before.visible_at, -1, now);
      t.AddFar(after.visible_at, +1, now);
    }
  } else if (before_far) {
    t.AddFar(before.visible_at, -1, now);  // comes near: loaded
    t.Insert(std::move(after), now);
  } else if (after_far) {
    t.Forget(after.msg_id, now);  // goes beyond the load cursor: on disk only, as if sent so
    t.AddFar(after.visible_at, +1, now);
  } else {
    t.Update(std::move(after), now);
  }
}

void Engine::ChangeOne(std::string topic, std::string msg_id, bool sets_payload, Change change,
                       Callback<Result<core::Message>> done) {
  Shard& shard = ShardFor(topic);
  Effects fx{topic, {}, 0, false};
  Answer<Result<core::Message>> answer(std::move(done));
  std::optional<Status> outcome = Status::Ok();
  {
    base::MutexLock lock(shard.mu);
    Slot* slot = Find(shard, topic);
    Batch batch = store_->NewBatch();
    TimePoint now = slot != nullptr ? Advance(*slot, fx, batch) : clock_->Now();
    const MessageRecord* live = slot != nullptr ? slot->topic->FindLive(msg_id) : nullptr;
    Result<MessageRecord> before =
        live != nullptr ? slot->topic->Copy(*live) : FindStored(topic, msg_id, now, false);
    // In life but not held: a far waiting message.
    const bool far = live == nullptr && before.has_value() && before->phase != Phase::kEnded;
    Result<MessageRecord> next = before.has_value() ? change(*before, now) : before.error();
    if (next.has_value() && !sets_payload) {
      Result<std::optional<std::string>> payload = store_->GetPayload(topic, msg_id);
      if (!payload.has_value()) {
        next = payload.error();
      } else if (*payload) {
        next->payload = std::move(**payload);
      }
    }
    if (!next.has_value()) {
      answer.Set(next.error());
      std::optional<Status> ignored;
      CommitFor(
          slot, std::move(batch), [](Status) {}, &ignored);  // what Advance ended
    } else {
      WriteTransition(batch, &*before, *next);
      if (sets_payload) batch.PutPayload(*next);
      const MsgStatus was = core::StatusAt(*before, now);
      const MsgStatus status = core::StatusAt(*next, now);
      MessageRecord held = core::CopyWithoutPayload(*next);
      const bool push = next->push;
      answer.Set(core::Message{std::move(next).value(), status});
      if (CommitFor(slot, std::move(batch), answer.OnDurable(), &outcome) && slot != nullptr) {
        Topic& t = *slot->topic;
        t.Touch(now);
        ApplyChange(t, *before, far, std::move(held), now);
        if (status == MsgStatus::kReady && was != MsgStatus::kReady) {
          (push ? fx.push_ready : fx.ready) = true;
          if (was == MsgStatus::kWaiting) ++fx.advanced.triggered;  // triggered now, no lag
        }
      }
    }
    if (slot != nullptr) Reschedule(*slot);
  }
  Report(fx);
  if (outcome) answer.Finish(*outcome);
}

void Engine::Update(backend::UpdateRequest req, Callback<Result<core::Message>> done) {
  const bool sets_payload = req.update.payload.has_value();
  ChangeOne(
      std::move(req.topic), std::move(req.msg_id), sets_payload,
      [update = std::move(req.update)](const MessageRecord& before, TimePoint now) {
        return core::ApplyUpdate(before, update, now);
      },
      std::move(done));
}

void Engine::Touch(std::string topic, std::string msg_id, std::optional<Millis> ack_timeout,
                   Callback<Result<core::Message>> done) {
  const Millis timeout = ack_timeout.value_or(ConfigOf(topic).ack_timeout);
  ChangeOne(
      std::move(topic), std::move(msg_id), false,
      [timeout](const MessageRecord& before, TimePoint now) {
        return core::Apply(before, core::Event{core::EventKind::kTouch, timeout}, now);
      },
      std::move(done));
}

void Engine::Count(std::string topic, std::string msg_id, int64_t count,
                   Callback<Result<core::Message>> done) {
  ChangeOne(
      std::move(topic), std::move(msg_id), false,
      [count](const MessageRecord& before, TimePoint now) {
        return core::Apply(before, core::Event{core::EventKind::kCount, Millis(0), count}, now);
      },
      std::move(done));
}

}  // namespace chronoq::engine
