// importMsgBatch on the Engine (engine.h, backend/queue_backend.h Import): messages of one topic
// stored with the state they carry, in one shard-lock hold and one store batch, as SendBatch
// stores new messages (engine_batch.cc) but without defaults, capacity or generated ids.
#include "engine/answer.h"
#include "engine/engine.h"

namespace chronoq::engine {

using core::MessageRecord;
using core::MsgStatus;

void Engine::Import(std::vector<MessageRecord> records, Callback<Result<std::vector<bool>>> done) {
  if (records.empty()) {
    done(std::vector<bool>());
    return;
  }
  const std::string topic = records.front().topic;
  Shard& shard = ShardFor(topic);
  Effects fx{topic, {}, 0, false};
  Answer<Result<std::vector<bool>>> answer(std::move(done));
  std::optional<Status> outcome;
  {
    base::MutexLock lock(shard.mu);
    const bool created = Find(shard, topic) == nullptr;
    Slot& slot = FindOrCreate(shard, topic);
    Topic& t = *slot.topic;
    Batch batch = store_->NewBatch();
    TimePoint now = Advance(slot, fx, batch);
    t.Touch(now);
    std::vector<Prior> priors(records.size());
    Status lookup;
    size_t fresh = 0;
    for (size_t i = 0; i < records.size(); ++i) {
      Result<Prior> prior = FindPrior(t, fx, records[i].msg_id);
      if (!prior.has_value()) {
        lookup = prior.error();
        break;
      }
      priors[i] = std::move(prior).value();
      if (!priors[i].existing) ++fresh;
    }
    bool refused = false;
    if (!lookup.ok() || fresh == 0) {
      if (lookup.ok()) {
        answer.Set(std::vector<bool>(records.size(), false));
      } else {
        answer.Set(lookup);
      }
      std::optional<Status> ignored;
      CommitFor(
          &slot, std::move(batch), [](Status) {}, &ignored);  // what Advance ended
      outcome = Status::Ok();
    } else {
      NewRecords held;
      std::vector<bool> out(records.size(), false);
      uint64_t seq = AllocSeqs(batch, fresh);
      for (size_t i = 0; i < records.size(); ++i) {
        Prior& p = priors[i];
        if (p.existing) continue;
        MessageRecord& rec = records[i];
        rec.seq = seq++;
        WriteNew(batch, rec, p.replaced);
        if (core::StatusAt(rec, now) == MsgStatus::kReady) fx.Ready(rec);
        held.Add(t, rec);
        out[i] = true;
      }
      answer.Set(std::move(out));
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

}  // namespace chronoq::engine
