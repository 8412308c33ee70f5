// MessageStore: the engine's view of durable state, on top of a KvStore (docs/storage-format.md).
// A send writes a message's metadata and payload as one value (`sent`); its changes write its
// metadata alone (`records`, which then takes precedence), so they never rewrite payloads;
// every in-life message has one visibility entry ordered by (visible_at, seq) per topic; waiting
// messages beyond the engine's memory horizon are summarised per trigger millisecond (hist); ended
// messages are indexed by purge time (retention) and, for listing, per topic and end status by end
// time (ended); both entries are written and deleted together.
//
// Thread-safety: as the KvStore (all methods thread-safe). A Batch is used by one thread.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/result.h"
#include "core/message.h"
#include "storage/codec.h"
#include "storage/kv.h"

namespace chronoq::storage {

class MessageStore {
 public:
  // Typed writes, encoded at once; committed together by MessageStore::Commit.
  class Batch {
   public:
    explicit Batch(const MessageStore* store) : s_(store) {}
    // The record's metadata (every field but its payload).
    void PutRecord(const core::MessageRecord& r);
    // A new payload for an existing message, with its metadata (see PutNew).
    void PutPayload(const core::MessageRecord& r);
    // A new message: its metadata and payload in one `sent` value, and its visibility entry.
    // REQUIRES: no `records` entry under its msgId (DeleteRecordMeta a replaced one's first).
    void PutNew(const core::MessageRecord& r);
    // Removes metadata and payload.
    void DeleteRecord(std::string_view topic, std::string_view msg_id);
    // Removes the `records` entry alone (a new message takes an ended message's msgId).
    void DeleteRecordMeta(std::string_view topic, std::string_view msg_id);
    // Moves a message's visibility entry: removes `before`'s (when given and in life) and adds
    // `after`'s (when given and in life).
    void MoveVis(const core::MessageRecord* before, const core::MessageRecord* after);
    // PutRecord(after) and MoveVis(before, &after), the metadata encoded once; no PutRecord when
    // `after` is delivered (its vis entry holds its metadata; see GetRecord).
    void PutRecordMoveVis(const core::MessageRecord* before, const core::MessageRecord& after);
    // Adds delta waiting messages with this trigger time to the topic's histogram.
    void HistAdd(std::string_view topic, TimePoint trigger, int64_t delta);
    // An ended record's retention entry (purged at purge_at) and its entry in the topic's list of
    // ended messages of its status. REQUIRES: ended.phase == kEnded.
    void PutEnded(const core::MessageRecord& ended, TimePoint purge_at);
    // Removes both entries of PutEnded(ended, purge_at) (a purge, or a new message taking the id).
    void DeleteEnded(const core::MessageRecord& ended, TimePoint purge_at);
    // Removes a retention entry alone (its record is gone or belongs to a newer message, whose
    // writes removed the old ended entry).
    void DeleteRetentionEntry(TimePoint purge_at, uint64_t seq);
    void PutMeta(std::string_view name, std::string value);
    void DeleteMeta(std::string_view name);

    bool empty() const { return kv_.empty(); }
    size_t size() const { return kv_.size(); }
    // Room for n writes (see KvBatch::Reserve).
    void Reserve(size_t n) { kv_.Reserve(n); }
    // See KvBatch::set_deferrable: the committer never blocks its thread on the outcome.
    void SetDeferrable() { kv_.set_deferrable(true); }
    // The batch to commit, with one histogram addition per key (see CoalesceCounters).
    KvBatch Take() {
      if (hist_adds_ > 1 || (hist_adds_ == 1 && kv_.ops()[last_hist_].delta == 0)) {
        CoalesceCounters();
      }
      last_hist_ = SIZE_MAX;
      return std::move(kv_);
    }

   private:
    // Additions commute, so the additions to one counter become one (dropped when they cancel
    // out): a batch of sends due in the same millisecond writes one merge operand, not one each.
    void CoalesceCounters();

    const MessageStore* s_;
    KvBatch kv_;
    size_t hist_adds_ = 0;  // counter additions in kv_
    // The last counter addition (its position in kv_, topic and time), which the next one to
    // the same counter adds to: the sends of one batch mostly fall in the same millisecond.
    size_t last_hist_ = SIZE_MAX;
    std::string last_hist_topic_;
    TimePoint last_hist_time_;
  };

  MessageStore(KvStore* kv, std::string ns) : kv_(kv), ns_(std::move(ns)) {}

  const std::string& ns() const { return ns_; }
  KvStore* kv() { return kv_; }

  // The record topic/msg_id, with its payload when `with_payload`; nullopt when absent. For a
  // message in phase delivered (written by PutRecordMoveVis) this is the metadata of its state
  // before the delivery, never an ended one: the engine holds every delivered message in memory,
  // loaded from its vis entry (ScanVis), and reads it there.
  // Errors: kIOError, kCorruption.
  Result<std::optional<core::MessageRecord>> GetRecord(std::string_view topic,
                                                       std::string_view msg_id, bool with_payload);
  Result<std::optional<std::string>> GetPayload(std::string_view topic, std::string_view msg_id);
  // Several payloads (or records) of one topic in one batched read, in the order of `ids`.
  Result<std::vector<std::optional<std::string>>> GetPayloads(std::string_view topic,
                                                              const std::vector<std::string>& ids);
  Result<std::vector<std::optional<core::MessageRecord>>> GetRecords(
      std::string_view topic, const std::vector<std::string>& ids);

  // Visibility entries of one topic and kind with (t, seq) in [from, to) in order, until `fn`
  // returns false. Records come with topic and metadata, without payload.
  using RecordFn = std::function<bool(core::MessageRecord&&)>;
  Status ScanVis(std::string_view topic, VisKind kind, TimePoint from_t, uint64_t from_seq,
                 TimePoint to_t, const RecordFn& fn);
  // The histogram of a topic: (trigger time, waiting messages), in time order.
  Status ScanHist(std::string_view topic, const std::function<void(TimePoint, int64_t)>& fn);
  // Every topic with an in-life message (visibility entries), once each.
  Status ListTopics(const std::function<void(const std::string&)>& fn);
  // The topic's ended messages of one end status with (ended_at, seq) >= (from_t, from_seq), in
  // that order, until `fn` returns false.
  using EndedFn = std::function<bool(TimePoint ended_at, uint64_t seq, std::string msg_id)>;
  Status ScanEnded(std::string_view topic, core::MsgStatus status, TimePoint from_t,
                   uint64_t from_seq, const EndedFn& fn);
  // Retention entries with purge time <= until, from `after` on (exclusive; empty: the start),
  // until `fn` returns false.
  Status ScanRetention(
      const std::string& after_key, TimePoint until,
      const std::function<bool(const RetentionEntry&, const std::string& key)>& fn);

  Result<std::optional<std::string>> GetMeta(std::string_view name);

  // Message histories (core/history.h; `meta` entries under kHistoryMetaPrefix), written in the
  // batch of the change they record and deleted with the record.
  void PutHistory(Batch& batch, std::string_view topic, std::string_view msg_id,
                  std::string value) const;
  void DeleteHistory(Batch& batch, std::string_view topic, std::string_view msg_id) const;
  // The stored history value (core::EncodeHistory), or nullopt. Errors: kIOError.
  Result<std::optional<std::string>> GetHistory(std::string_view topic, std::string_view msg_id);

  // Stored topic configurations (setTopicConfig; `meta` entries, docs/storage-format.md).
  void PutTopicConfig(Batch& batch, std::string_view topic, const core::TopicConfig& c) const;
  void DeleteTopicConfig(Batch& batch, std::string_view topic) const;
  // Every stored configuration, in topic order. Errors: kIOError, kCorruption.
  Status ScanTopicConfigs(const std::function<void(std::string topic, core::TopicConfig c)>& fn);

  // See KvStore::WriteBacklog.
  bool WriteBacklog() { return kv_->WriteBacklog(); }

  Batch NewBatch() const { return Batch(this); }
  // See KvStore::Commit.
  std::optional<Status> Commit(Batch batch, UniqueFunction<void(Status)> done) {
    return kv_->Commit(batch.Take(), std::move(done));
  }

 private:
  std::string MetaKey(std::string_view name) const;
  KvStore* kv_;
  const std::string ns_;
};

}  // namespace chronoq::storage
