// listMsg in the embedded engine (API-EXTENSIONS.md section 3; the orders in backend::ListRequest).
// Each status is read where it is ordered already, so a page costs O(limit) whatever the backlog:
// - WAITING and CONSUMING from the store's visibility index (kind 0 after now: waiting, by the
//   time each becomes consumable; kind 1 after now: delivered, by ack deadline plus the retry
//   interval of the delivery), seeking to the cursor. The store holds every in-life message, near
//   and far, and what an answer already acknowledged. WAITING also lists the deliveries waiting
//   out their retry interval (kind 1, ack deadline passed), from memory, where every delivery is
//   held: merged by the same (visible_at, seq), the time they become consumable.
// - READY from memory, a peek in pull order: every consumable message is near (held by the
//   Topic) once the topic is advanced to now.
// - ended statuses from the store's `ended` index (per topic and status, by end time), from the
//   cursor or from the start of retention, whichever is later.
// Payloads come by batched point reads. Before reading, the topic is advanced to now (what time
// ended is written), so that the store agrees with the statuses the page reports.
#include <algorithm>
#include <iterator>

#include "core/state_machine.h"
#include "engine/engine.h"

namespace chronoq::engine {

using core::MessageRecord;
using core::MsgStatus;

namespace {

// The walk without status: WAITING, then READY, then CONSUMING.
std::optional<MsgStatus> NextInWalk(MsgStatus s) {
  switch (s) {
    case MsgStatus::kWaiting:
      return MsgStatus::kReady;
    case MsgStatus::kReady:
      return MsgStatus::kConsuming;
    default:
      return std::nullopt;
  }
}

}  // namespace

// Builds one page; lives for one List call.
class Engine::Lister {
 public:
  Lister(Engine* engine, const backend::ListRequest& req) : e_(engine), req_(req) {}

  Result<backend::ListPage> Page() {
    ListCursor c;
    if (req_.cursor.empty()) {
      c.walk = !req_.status.has_value();
      c.status = req_.status.value_or(MsgStatus::kWaiting);
    } else {
      CQ_ASSIGN_OR_RETURN(c, DecodeListCursor(req_.topic, req_.status, req_.cursor));
    }
    now_ = e_->AdvanceForList(req_.topic);
    const size_t limit = static_cast<size_t>(std::max(1, req_.limit));
    backend::ListPage page;
    for (;;) {
      const size_t room = limit - std::min(limit, page.messages.size());
      CQ_ASSIGN_OR_RETURN(bool more, ListStatus(c, room, &page.messages));
      if (more) {
        page.next_cursor = EncodeListCursor(req_.topic, c);
        break;
      }
      std::optional<MsgStatus> next = c.walk ? NextInWalk(c.status) : std::nullopt;
      if (!next) break;
      c = ListCursor{};
      c.walk = true;
      c.status = *next;
    }
    return page;
  }

 private:
  // Appends up to `room` messages of c.status after `c` to `out` and moves `c` to the last one.
  // Returns whether messages remain after it (with room 0: whether any does).
  Result<bool> ListStatus(ListCursor& c, size_t room, std::vector<core::Message>* out) {
    switch (c.status) {
      case MsgStatus::kWaiting:
        return Waiting(c, room, out);
      case MsgStatus::kConsuming:
        return Consuming(c, room, out);
      case MsgStatus::kReady:
        return Ready(c, room, out);
      default:
        return Ended(c, room, out);
    }
  }

  // Where a page of WAITING or CONSUMING messages starts: after the cursor, and after now
  // (entries visible at or before now are READY, or ended by time).
  IndexKey StartOf(const ListCursor& c) const {
    IndexKey from{SaturatingAdd(now_, Millis(1)), 0};
    if (!c.at_start && IndexKey{c.t, c.seq + 1} > from) from = IndexKey{c.t, c.seq + 1};
    return from;
  }

  // Up to `max` records of the store's visibility index `kind` in `status`, from `from` on, in
  // (visible_at, seq) order.
  Result<std::vector<MessageRecord>> FromVis(storage::VisKind kind, MsgStatus status, IndexKey from,
                                             size_t max) {
    std::vector<MessageRecord> recs;
    CQ_RETURN_IF_ERROR(
        e_->store_->ScanVis(req_.topic, kind, from.t, from.seq, kTimeMax, [&](MessageRecord&& r) {
          if (core::StatusAt(r, now_) == status) recs.push_back(std::move(r));
          return recs.size() < max;
        }));
    return recs;
  }

  // Pending messages before their time and deliveries waiting out their retry interval, merged
  // by the time each becomes consumable.
  Result<bool> Waiting(ListCursor& c, size_t room, std::vector<core::Message>* out) {
    const IndexKey from = StartOf(c);
    CQ_ASSIGN_OR_RETURN(std::vector<MessageRecord> pending,
                        FromVis(storage::VisKind::kPending, MsgStatus::kWaiting, from, room + 1));
    std::vector<MessageRecord> retrying = e_->RetryWaiting(req_.topic, from, room + 1, now_);
    std::vector<MessageRecord> recs;
    recs.reserve(pending.size() + retrying.size());
    std::merge(std::make_move_iterator(pending.begin()), std::make_move_iterator(pending.end()),
               std::make_move_iterator(retrying.begin()), std::make_move_iterator(retrying.end()),
               std::back_inserter(recs), [](const MessageRecord& a, const MessageRecord& b) {
                 return IndexKey{a.visible_at, a.seq} < IndexKey{b.visible_at, b.seq};
               });
    const bool more = recs.size() > room;
    if (more) recs.resize(room);
    return Emit(c, std::move(recs), more, out);
  }

  // Deliveries before their ack deadline (those past it wait out their retry interval: WAITING).
  Result<bool> Consuming(ListCursor& c, size_t room, std::vector<core::Message>* out) {
    CQ_ASSIGN_OR_RETURN(
        std::vector<MessageRecord> recs,
        FromVis(storage::VisKind::kDelivered, MsgStatus::kConsuming, StartOf(c), room + 1));
    const bool more = recs.size() > room;
    if (more) recs.resize(room);
    return Emit(c, std::move(recs), more, out);
  }

  Result<bool> Ready(ListCursor& c, size_t room, std::vector<core::Message>* out) {
    std::vector<MessageRecord> recs = e_->PeekReady(req_.topic, c, room + 1, now_);
    const bool more = recs.size() > room;
    if (more) recs.resize(room);
    return Emit(c, std::move(recs), more, out);
  }

  Result<bool> Ended(ListCursor& c, size_t room, std::vector<core::Message>* out) {
    // Retained while now < ended_at + retention: the index before that is waiting for the purge.
    IndexKey from{SaturatingAdd(now_, Millis(1) - e_->options_.retention), 0};
    if (!c.at_start && IndexKey{c.t, c.seq + 1} > from) from = IndexKey{c.t, c.seq + 1};
    std::vector<MessageRecord> recs;
    bool more = false;
    bool exhausted = false;
    // Entries are checked against their records (a stale one, whose record is gone or belongs to
    // a newer message, is passed over): read in chunks until room + 1 are found or none remain.
    while (!more && !exhausted) {
      std::vector<std::pair<IndexKey, std::string>> chunk;
      const size_t want = room + 1 - recs.size();
      CQ_RETURN_IF_ERROR(e_->store_->ScanEnded(
          req_.topic, c.status, from.t, from.seq, [&](TimePoint t, uint64_t seq, std::string id) {
            chunk.emplace_back(IndexKey{t, seq}, std::move(id));
            return chunk.size() < want;
          }));
      exhausted = chunk.size() < want;
      if (chunk.empty()) break;
      from = IndexKey{chunk.back().first.t, chunk.back().first.seq + 1};
      std::vector<std::string> ids;
      ids.reserve(chunk.size());
      for (const auto& entry : chunk) ids.push_back(entry.second);
      CQ_ASSIGN_OR_RETURN(std::vector<std::optional<MessageRecord>> found,
                          e_->store_->GetRecords(req_.topic, ids));
      for (size_t i = 0; i < chunk.size(); ++i) {
        std::optional<MessageRecord>& r = found[i];
        if (!r || r->seq != chunk[i].first.seq || r->phase != core::Phase::kEnded ||
            r->end_status != c.status) {
          continue;
        }
        if (recs.size() == room) {
          more = true;
          break;
        }
        recs.push_back(std::move(*r));
      }
    }
    return Emit(c, std::move(recs), more, out);
  }

  // Moves the cursor to the last of `recs` (listed in c.status's order), appends them with their
  // payloads and passes `more` on.
  Result<bool> Emit(ListCursor& c, std::vector<MessageRecord> recs, bool more,
                    std::vector<core::Message>* out) {
    if (!recs.empty()) {
      const MessageRecord& last = recs.back();
      c.at_start = false;
      c.level = c.status == MsgStatus::kReady ? Topic::Level(last) : 0;
      c.t = core::InLife(c.status) ? last.visible_at : last.ended_at;
      c.seq = last.seq;
    }
    CQ_RETURN_IF_ERROR(AddPayloads(std::move(recs), out));
    return more;
  }

  // Reads the payloads and appends the messages with their status now. A message whose payload
  // is gone (released or purged since it was read) is left out.
  Status AddPayloads(std::vector<MessageRecord> recs, std::vector<core::Message>* out) {
    if (recs.empty()) return Status::Ok();
    std::vector<std::string> ids;
    ids.reserve(recs.size());
    for (const MessageRecord& r : recs) ids.push_back(r.msg_id);
    CQ_ASSIGN_OR_RETURN(std::vector<std::optional<std::string>> payloads,
                        e_->store_->GetPayloads(req_.topic, ids));
    for (size_t i = 0; i < recs.size(); ++i) {
      if (!payloads[i]) continue;
      MessageRecord& r = recs[i];
      r.topic = req_.topic;
      r.payload = std::move(*payloads[i]);
      const MsgStatus status = core::StatusAt(r, now_);
      out->push_back(core::Message{std::move(r), status});
    }
    return Status::Ok();
  }

  Engine* const e_;
  const backend::ListRequest& req_;
  TimePoint now_{};
};

void Engine::List(backend::ListRequest req, Callback<Result<backend::ListPage>> done) {
  done(Lister(this, req).Page());
}

TimePoint Engine::AdvanceForList(const std::string& topic) {
  Shard& shard = ShardFor(topic);
  Effects fx{topic, {}, 0, false};
  TimePoint now;
  {
    base::MutexLock lock(shard.mu);
    Slot* slot = Find(shard, topic);
    if (slot == nullptr) {
      now = clock_->Now();
    } else {
      Batch batch = store_->NewBatch();
      now = Advance(*slot, fx, batch);
      std::optional<Status> ignored;
      CommitFor(
          slot, std::move(batch), [](Status) {}, &ignored);
      Reschedule(*slot);
    }
  }
  Report(fx);
  return now;
}

std::vector<MessageRecord> Engine::RetryWaiting(const std::string& topic, IndexKey from, size_t max,
                                                TimePoint now) {
  Shard& shard = ShardFor(topic);
  base::MutexLock lock(shard.mu);
  Slot* slot = Find(shard, topic);
  if (slot == nullptr) return {};
  const Topic& t = *slot->topic;
  std::vector<MessageRecord> out;
  for (const MessageRecord* r : t.RetryWaiting(now, from, max)) out.push_back(t.Copy(*r));
  return out;
}

std::vector<MessageRecord> Engine::PeekReady(const std::string& topic, const ListCursor& after,
                                             size_t max, TimePoint now) {
  Shard& shard = ShardFor(topic);
  base::MutexLock lock(shard.mu);
  Slot* slot = Find(shard, topic);
  if (slot == nullptr) return {};
  const Topic& t = *slot->topic;
  std::optional<PullPosition> from;
  if (!after.at_start) from = PullPosition{after.level, IndexKey{after.t, after.seq}};
  std::vector<MessageRecord> out;
  // Both lanes: the push lane's READY messages first (levels 19..10), then the pull lane's.
  for (const MessageRecord* r : t.PeekReady(now, from, max, Lane::kBoth)) {
    // (Advanced to now first: a record due and not READY has ended by time since.)
    if (core::StatusAt(*r, now) == MsgStatus::kReady) out.push_back(t.Copy(*r));
  }
  return out;
}

}  // namespace chronoq::engine
