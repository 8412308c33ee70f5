// Engine: the embedded QueueBackend (DESIGN.md section 5, docs/storage-format.md). Durable state
// lives in a MessageStore (RocksDB by default, or the in-memory KV); the engine keeps per topic
// the near messages in memory (Topic) and a histogram of the far ones, and applies the pure state
// machine of core/ to every change: one atomic batch per operation, committed in order.
//
// Operation. Topics are spread over shards by name; each shard has one lock (a spinning
// base::AdaptiveMutex: critical sections are short), and operations run on the caller's thread. An
// operation computes its changes, commits the batch, then updates the in-memory state. When the
// store makes writes durable later (group commit), the answer waits for durability while later
// operations already see the change; if such a commit fails, every pending write fails and the
// engine rebuilds its memory from the store. Each topic has at most one Scheduler timer, set to the
// next time something happens to it (a trigger time or ack deadline arrives, a ttl runs out, far
// messages come near and must be loaded, the topic turns inactive); one more timer purges ended
// messages at the end of their retention. Nothing scans periodically. When messages become
// consumable the ReadyListener hears of it.
//
// Lifecycle: construct, Recover() once, use; stop the Scheduler before destroying the Engine
// (timers hold a pointer to it). The store, clock and scheduler must outlive it. What time does to
// messages (triggers, ack timeouts, expirations, retry exhaustions) goes to the EventSink.
//
// Push lane (docs/push.md, engine/topic.h): a record's `push` flag puts it in the levels 10..19
// of its topic. Pull takes from the pull lane only, TakePush from the push lane only, with the
// callback's lease as ack timeout; everything else (counts, timers, the far tier, recovery,
// listMsg, purge, dead letters) treats both lanes alike. The listener hears OnReady for the pull
// lane and OnPushReady for the push lane, never one for the other's work.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <optional>
#include <set>
#include <span>
#include <string>
#include <thread>
#include <unordered_map>
#include <vector>

#include "backend/queue_backend.h"
#include "base/clock.h"
#include "base/mutex.h"
#include "base/scheduler.h"
#include "base/thread_annotations.h"
#include "engine/answer.h"
#include "engine/list_cursor.h"
#include "engine/topic.h"
#include "storage/message_store.h"

namespace chronoq::engine {

using backend::Callback;
using backend::PullRequest;
using backend::ReadyListener;

struct EngineOptions {
  Millis retention{300'000};         // end-life-msg-expire-millis
  Millis topic_inactive{1'800'000};  // topic-inactive-millis
  // Pending messages due later than now + horizon stay on disk, counted but not held in memory.
  Millis memory_horizon{60'000};
  // Far messages loaded per step, with their payloads (a step holds the shard lock: about 12 ms
  // per 1,024 at 1M waiting messages on this project's 2-core host; docs/benchmarks.md).
  size_t load_chunk = 1024;
  // purgeTopic (engine_topics.cc): messages deleted per shard-lock hold and per write, and the
  // pause after each chunk, as a multiple of the time the chunk took (1: the purge works at most
  // half of the time, leaving the committer and the cores to other topics in between).
  size_t purge_chunk = 100;
  double purge_pause = 1.0;
  int shards = 16;
  // Message history (core/history.h): the node name written in entries, and the entries kept per
  // message (oldest dropped first).
  std::string node = "chronoq";
  int64_t history_max_entries = 32;
};

class Engine final : public backend::QueueBackend {
 public:
  Engine(EngineOptions options, storage::MessageStore* store, const base::Clock* clock,
         base::Scheduler* scheduler);
  ~Engine() override;

  // Loads the in-memory state from the store: every topic's near messages and far histogram,
  // the sequence reservation, the retention timer. Reads only what is due within the memory
  // horizon, whatever the backlog. Call once, before use.
  Status Recover();

  void Send(core::NewMessage m, Callback<Result<backend::Sent>> done) override;
  void Pull(PullRequest req, Callback<Result<std::vector<core::Message>>> done) override;
  void TakePush(std::string topic, int32_t max, Millis lease_margin,
                Callback<Result<backend::PushTake>> done) override;
  void Ack(std::string topic, std::string msg_id, bool ack, Callback<Status> done) override;
  void Delete(std::string topic, std::string msg_id, bool release, Callback<Status> done) override;
  void Get(std::string topic, std::string msg_id, Callback<Result<core::Message>> done) override;
  void GetTopicInfo(std::string topic, Callback<Result<core::TopicInfo>> done) override;
  void ListTopics(Callback<Result<std::vector<core::TopicInfo>>> done) override;
  void SendBatch(std::vector<core::NewMessage> msgs,
                 Callback<Result<std::vector<Result<backend::Sent>>>> done) override;
  void AckBatch(std::string topic, std::vector<backend::AckItem> items,
                Callback<Result<std::vector<Status>>> done) override;
  void Update(backend::UpdateRequest req, Callback<Result<core::Message>> done) override;
  void Touch(std::string topic, std::string msg_id, std::optional<Millis> ack_timeout,
             Callback<Result<core::Message>> done) override;
  void Count(std::string topic, std::string msg_id, int64_t count,
             Callback<Result<core::Message>> done) override;
  void List(backend::ListRequest req, Callback<Result<backend::ListPage>> done) override;
  // engine_import.cc
  void Import(std::vector<core::MessageRecord> records,
              Callback<Result<std::vector<bool>>> done) override;
  // engine_topics.cc
  void SetTopicDefaults(const core::TopicDefaults* defaults) override {
    topic_defaults_.store(defaults);
    {
      base::MutexLock lock(config_mu_);
      NoteHistoryTopics();
    }
    config_version_.fetch_add(1, std::memory_order_acq_rel);
  }
  void SetTopicConfig(std::string topic, core::TopicConfig change,
                      Callback<Result<core::TopicConfig>> done) override;
  void GetTopicConfig(std::string topic, Callback<Result<core::TopicConfig>> done) override;
  void DeleteTopicConfig(std::string topic, Callback<Status> done) override;
  void Purge(std::string topic, std::optional<core::MsgStatus> status,
             Callback<Result<int64_t>> done) override;
  void Redrive(backend::RedriveRequest req, Callback<Result<int64_t>> done) override;
  bool KnownIdle(const std::string& topic) override;
  // engine_history.cc
  void GetHistory(std::string topic, std::string msg_id,
                  Callback<Result<std::vector<core::HistoryEntry>>> done) override;
  // engine_backup.cc: a checkpoint of the store (KvStore::Checkpoint) on a thread of its own.
  void Backup(std::string dir, Callback<Result<backend::BackupInfo>> done) override;
  // Also tells the new listener OnPushReady for every topic whose push lane holds messages.
  void SetReadyListener(ReadyListener* listener) override;
  void SetEventSink(backend::EventSink* sink) override { sink_.store(sink); }

  // Runs the retention purge now (tests).
  void TEST_Purge() { PurgeRetained(); }
  // How a topic's in-life messages are held: in memory (near) and on disk only (far) (tests).
  struct TierCounts {
    size_t near = 0;
    int64_t far = 0;
  };
  TierCounts TEST_Tiers(const std::string& topic);

 private:
  struct Slot {
    std::unique_ptr<Topic> topic;
    base::TimerId timer = 0;  // 0: none
    TimePoint timer_at = kTimeMax;
    TimePoint load_retry_at = kTimeMin;  // after a failed load: not before this
    // After a failed write: the timer not before this, so that a store refusing writes (a full
    // disk) is not retried in a loop by what time ends (ack timeouts, expiry).
    TimePoint write_retry_at = kTimeMin;
    // The topic's effective configuration as of config_version (0: not resolved yet): resolved
    // again by ConfigOf(Slot&) when a configuration change bumped Engine::config_version_.
    core::EffectiveTopicConfig config;
    uint64_t config_version = 0;
  };
  struct Shard {
    base::AdaptiveMutex mu;
    std::unordered_map<std::string, Slot> topics CQ_GUARDED_BY(mu);
  };
  // What an operation observed under the lock and reports after releasing it.
  // A dead letter written by an operation's batch, to be taken into the dead-letter topic's
  // memory once the batch is committed (engine_dead_letters.cc).
  struct DeadLetterKey {
    std::string topic;  // the dead-letter topic
    std::string msg_id;
    uint64_t seq = 0;    // of the dead letter: a stored record with another seq is not it
    std::string source;  // the topic it died in (counted there)
  };
  struct Effects {
    std::string topic;
    AdvanceResult advanced;                     // finalized records go into the operation's batch
    int64_t ended = 0;                          // ended by nack of the last delivery
    bool ready = false;                         // something of the pull lane became consumable
    std::vector<DeadLetterKey> dead_letters{};  // written into the operation's batch
    bool push_ready = false;                    // something of the push lane became consumable
    // Notes that `r` became consumable now (in its lane).
    void Ready(const core::MessageRecord& r) { (r.push ? push_ready : ready) = true; }
  };
  using Batch = storage::MessageStore::Batch;

  // --- engine.cc: operations
  // Pull (kPull, the ack timeout given or the topic's) and TakePush (kPush, each record's lease
  // with `lease_margin`): delivers up to `max` of the lane's due head. Answers the messages and
  // the topic's callback at the take.
  struct TakeRequest {
    std::string topic;
    size_t max = 1;
    Lane lane = Lane::kPull;
    std::optional<Millis> ack_timeout{};  // kPull
    Millis lease_margin{0};               // kPush
  };
  void Take(TakeRequest req, Callback<Result<backend::PushTake>> done);
  // OnPushReady for every topic whose push lane holds messages in memory (every push-lane
  // delivery and what is due within the memory horizon; far ones are told when they come due).
  // REQUIRES: no shard lock held.
  void AnnouncePushWork();
  Shard& ShardFor(std::string_view topic);
  // The position of the topic's shard in shards_: the order in which several shard locks are
  // taken (LockAllShards, Redrive).
  size_t ShardIndex(std::string_view topic) const;
  Slot* Find(Shard& shard, const std::string& topic) CQ_REQUIRES(shard.mu);
  // `created` (when given) tells whether the slot is new.
  Slot& FindOrCreate(Shard& shard, const std::string& topic, bool* created = nullptr)
      CQ_REQUIRES(shard.mu);
  // Commits `batch`. Returns true when the caller may apply its changes in memory (the write is
  // done, or queued for a group commit). `*outcome` is the result when known now (nullopt: the
  // store calls `on_durable` later). On a failure known now, the topic is rebuilt from the store
  // (memory may already hold changes the store refused) and false is returned.
  bool CommitFor(Slot* slot, Batch batch, UniqueFunction<void(Status)> on_durable,
                 std::optional<Status>* outcome);
  // Replaces the slot's topic by one loaded from the store.
  void RebuildTopic(Slot& slot);
  // Whether the store's histogram (hist) counts a message: every pending message, at its
  // visible_at, so that recovery can count the far ones without reading them. (Before issue 14
  // only never-delivered ones were counted, at their trigger time; for those the two agree. A
  // pending message that was delivered before could not be far then; an update can make it so.)
  static bool InHistogram(const core::MessageRecord& r) { return r.phase == core::Phase::kPending; }
  // Writes the change of one message: record, visibility entry, histogram, retention. A new
  // message (no `before`) is written with its payload (MessageStore::Batch::PutNew); a new
  // message taking an ended one's msgId deletes that one's record meta first (DeleteRecordMeta).
  // With history on for the topic, also the history entries of the change (RecordHistory).
  void WriteTransition(Batch& batch, const core::MessageRecord* before,
                       const core::MessageRecord& after,
                       core::HistoryCause cause = core::HistoryCause::kAuto);
  // --- engine_history.cc
  // Appends the entries of the change to the message's stored history, in `batch`, when the
  // topic's history is on. REQUIRES: any_history_.
  void RecordHistory(Batch& batch, const core::MessageRecord* before,
                     const core::MessageRecord& after, core::HistoryCause cause);
  // With a record deleted in `batch`: its history too (when some topic records histories).
  void DeleteHistory(Batch& batch, std::string_view topic, std::string_view msg_id) {
    if (any_history_.load(std::memory_order_relaxed)) store_->DeleteHistory(batch, topic, msg_id);
  }
  // Sets any_history_ from the stored and node-local layers.
  void NoteHistoryTopics() CQ_REQUIRES(config_mu_);
  // Reserves `n` consecutive sequence numbers (writing a reservation into `batch` when the
  // reserved block runs out) and returns the first.
  uint64_t AllocSeqs(Batch& batch, uint64_t n) CQ_EXCLUDES(seq_mu_);
  uint64_t AllocSeq(Batch& batch) CQ_EXCLUDES(seq_mu_) { return AllocSeqs(batch, 1); }
  TimePoint PurgeTime(const core::MessageRecord& ended) const;
  Status NotFoundError(const std::string& topic, const std::string& msg_id) const;
  // The stored record topic/msg_id when it is ended and still retained (reads see it); kNotFound
  // when absent or past retention. In-life far records are returned too.
  Result<core::MessageRecord> FindStored(const std::string& topic, const std::string& msg_id,
                                         TimePoint now, bool with_payload);
  bool Listed(const Topic& t, TimePoint now) const;

  // --- engine_topics.cc: topic configuration
  // The topic's effective configuration (its stored layer over the node-local ones).
  core::EffectiveTopicConfig ConfigOf(const std::string& topic) const CQ_EXCLUDES(config_mu_);
  // The same from the slot's cache, resolved again only after a configuration change: what the
  // hot paths (send, pull, ack) use, without config_mu_, a map lookup or string copies.
  // REQUIRES: the slot's shard lock held.
  const core::EffectiveTopicConfig& ConfigOf(Slot& slot) const CQ_EXCLUDES(config_mu_);
  // The topic's stored layer (all unset when none).
  core::TopicConfig StoredConfig(const std::string& topic) const CQ_EXCLUDES(config_mu_);
  // Replaces configs_ by what the store holds (Recover, Rebuild).
  Status LoadTopicConfigs() CQ_EXCLUDES(config_mu_);
  // Stores `after` as the topic's layer (an empty one is removed) and wakes the listener when
  // the topic stops being paused. Sets and finishes `answer`.
  void WriteTopicConfig(const std::string& topic, const core::TopicConfig& after,
                        Answer<Status>& answer) CQ_REQUIRES(config_write_mu_);
  // Before a purge's next chunk: waits (a real, bounded wait) while the store is behind with its
  // background work. REQUIRES: no lock held.
  void WaitForWriteBacklog();

  // --- engine_dead_letters.cc: dead letters and redrive
  // When `ended` (status 5 or 6, with its topic) ends in a topic with a dead-letter topic, writes
  // its dead letter into `batch` (the batch that ends it) and notes it in fx.dead_letters; nothing
  // when that topic holds the msgId in life (or a dead letter with it is on its way there).
  void AddDeadLetter(Batch& batch, const core::MessageRecord& ended, TimePoint now, Effects& fx)
      CQ_EXCLUDES(dead_letter_mu_);
  // Takes committed dead letters into their topics' memory (each under its own shard lock, with
  // no other lock held) and reports them; a dead letter whose write failed is not in the store
  // and is passed over. REQUIRES: no shard lock held.
  void DeliverDeadLetters(std::vector<DeadLetterKey> keys) CQ_EXCLUDES(dead_letter_mu_);
  // Redrives one READY dead letter of `topic` (one atomic write). Answers kNotFound,
  // kInvalidState, kResourceExhausted (the source is full) or the write's error.
  // (Both shard locks are taken in shard order, which the analysis cannot follow.)
  Status RedriveOne(const std::string& topic, const std::string& msg_id,
                    Millis delay) CQ_NO_THREAD_SAFETY_ANALYSIS;

  // --- engine_batch.cc: sends and acks
  // What a send finds under a msgId it was given: an in-life message (answered; nothing is
  // stored), or an ended one that the send replaces (its retention entry goes), or neither.
  struct Prior {
    std::optional<core::MessageRecord> existing;  // with payload
    std::optional<core::MessageRecord> replaced;
  };
  Result<Prior> FindPrior(const Topic& t, const Effects& fx, const std::string& msg_id);
  // Send's and SendBatch's work on the messages of one topic: `Out` collects the items' answers
  // into what `done` takes (engine_batch.cc), so that a send of one message is answered without
  // a vector or a wrapping callback.
  template <typename Out>
  void SendItems(std::span<core::NewMessage> msgs, Callback<typename Out::Answer> done);
  // What SendBatch and Import share. Writes a new record (seq set) into `batch`, replacing the
  // ended record `replaced` with its msgId when there is one.
  void WriteNew(Batch& batch, const core::MessageRecord& rec,
                const std::optional<core::MessageRecord>& replaced);
  // The new records of one write, taken into the topic's memory once the write is accepted:
  // near ones without payload, far ones (pending beyond the load cursor) only counted.
  class NewRecords {
   public:
    void Add(const Topic& t, const core::MessageRecord& rec);
    void TakeInto(Topic& t, TimePoint now);

   private:
    struct Held {
      explicit Held(bool f) : far(f) {}
      Held(bool f, const core::MessageRecord& r) : far(f), rec(r) {}  // copied in place
      Held(bool f, core::MessageRecord&& r) : far(f), rec(std::move(r)) {}
      bool far;
      core::MessageRecord rec;  // near: without payload; far: visible_at only
    };
    std::vector<Held> held_;
  };
  // After a write of new messages: a topic that came with it and is empty after a refused write
  // goes with it (unlisted, as before); otherwise its timer is set.
  void AfterNewWrite(Shard& shard, Slot& slot, bool created, bool refused) CQ_REQUIRES(shard.mu);

  // --- engine_manage.cc: changes of one message (Update, Touch, Count)
  // The new record of `before` (without payload unless the change sets one), or why not.
  using Change =
      UniqueFunction<Result<core::MessageRecord>(const core::MessageRecord& before, TimePoint now)>;
  // Applies `change` to topic/msg_id, near or far, atomically against pulls, in one write; answers
  // the message after it with its payload. `sets_payload`: the change's record carries the new
  // payload (written), else the stored one is read for the answer.
  void ChangeOne(std::string topic, std::string msg_id, bool sets_payload, Change change,
                 Callback<Result<core::Message>> done);
  // Moves a changed message in memory: between tiers when its visibility crossed the load cursor.
  static void ApplyChange(Topic& t, const core::MessageRecord& before, bool before_far,
                          core::MessageRecord after, TimePoint now);
  void Report(Effects& fx);
  void LogWriteFailure(const Status& s);

  // --- engine_time.cc: time passing
  // Loads what comes near, moves the topic to now (never backwards), and puts what ended on the
  // way into `batch`.
  TimePoint Advance(Slot& slot, Effects& fx, Batch& batch);
  Status LoadNear(Topic& t, TimePoint now, bool* more);
  void Reschedule(Slot& slot);
  void Tick(const std::string& topic);
  void NotePurgeTime(TimePoint purge_at) CQ_EXCLUDES(purge_mu_);
  // Forgets the purge cursor (the next purge walks the retention index from its start) and
  // purges at `at` unless a purge is due earlier; with only_if_earlier, does nothing unless it is.
  void RestartPurge(TimePoint at, bool only_if_earlier) CQ_EXCLUDES(purge_mu_);
  void PurgeRetained() CQ_EXCLUDES(purge_mu_);

  // --- engine_list.cc: listMsg (one page, built by a Lister)
  class Lister;
  // Advances the topic to now (writing what time ended, as a read like GetTopicInfo does), so
  // that the store and memory agree with the statuses at the returned time.
  TimePoint AdvanceForList(const std::string& topic);
  // Copies of up to `max` held READY messages of the topic in pull order, strictly after `after`
  // (at its start when after.at_start).
  std::vector<core::MessageRecord> PeekReady(const std::string& topic, const ListCursor& after,
                                             size_t max, TimePoint now);
  // Copies of up to `max` held deliveries of the topic waiting out their retry interval at `now`,
  // with (visible_at, seq) >= from, in that order (Topic::RetryWaiting).
  std::vector<core::MessageRecord> RetryWaiting(const std::string& topic, IndexKey from, size_t max,
                                                TimePoint now);

  // --- engine_recovery.cc
  // Loads one topic from the store into `slot` (no timer set), as of `now`.
  Status RecoverTopic(const std::string& name, TimePoint now, Slot* slot);
  void OnAsyncCommitFailure(Status s) CQ_EXCLUDES(rebuild_mu_);
  // Reloads every topic from the store with every shard locked.
  void Rebuild() CQ_EXCLUDES(rebuild_mu_);
  // Take and release every shard's lock, in shard order (the analysis cannot follow a loop of
  // locks: the code between asserts each shard's with AssertHeld).
  void LockAllShards() CQ_NO_THREAD_SAFETY_ANALYSIS;
  void UnlockAllShards() CQ_NO_THREAD_SAFETY_ANALYSIS;

  // Sequence numbers are reserved on disk this many at a time.
  static constexpr uint64_t kSeqBlock = 1'000'000;

  const EngineOptions options_;
  storage::MessageStore* const store_;
  const base::Clock* const clock_;
  base::Scheduler* const scheduler_;
  std::atomic<ReadyListener*> listener_{nullptr};
  std::atomic<backend::EventSink*> sink_{nullptr};
  std::atomic<const core::TopicDefaults*> topic_defaults_{nullptr};
  std::vector<std::unique_ptr<Shard>> shards_;

  // Sequence numbers: unique, increasing; reserved on disk a block ahead (see AllocSeq).
  base::Mutex seq_mu_;
  uint64_t next_seq_ CQ_GUARDED_BY(seq_mu_) = 1;
  uint64_t reserved_seq_ CQ_GUARDED_BY(seq_mu_) = 0;

  // Retention purge: one timer for the whole store.
  base::Mutex purge_mu_;
  base::TimerId purge_timer_ CQ_GUARDED_BY(purge_mu_) = 0;
  TimePoint purge_at_ CQ_GUARDED_BY(purge_mu_) = kTimeMax;
  std::string purge_cursor_ CQ_GUARDED_BY(purge_mu_);  // last purged retention key
  uint64_t purge_epoch_ CQ_GUARDED_BY(purge_mu_) = 0;  // counts cursor resets

  // Stored topic configurations (layer 1 of core/topic_config.h), a cache of the store's. Lock
  // order: config_write_mu_ before any shard lock; config_mu_ is a leaf (ConfigOf runs under
  // shard locks).
  base::Mutex config_write_mu_;  // serializes SetTopicConfig / DeleteTopicConfig
  mutable base::Mutex config_mu_;
  std::unordered_map<std::string, core::TopicConfig> configs_ CQ_GUARDED_BY(config_mu_);
  // Whether some topic may have history on (a stored or file layer sets it): when false, no
  // change looks for a history (the cost of history when nobody uses it: one relaxed load).
  std::atomic<bool> any_history_{false};
  // Bumped after every change of configs_ or of the node's layers: invalidates Slot::config.
  std::atomic<uint64_t> config_version_{1};

  // Dead letters written and not yet taken into their topic's memory, by (topic, msgId): a
  // second one with the same key meanwhile is dropped as already there. A leaf lock.
  base::Mutex dead_letter_mu_;
  std::set<std::pair<std::string, std::string>> dead_letters_in_flight_
      CQ_GUARDED_BY(dead_letter_mu_);

  // Failed writes logged by LogWriteFailure (at most one line a second).
  std::atomic<int64_t> last_failure_log_ms_{INT64_MIN / 2};  // steady clock
  std::atomic<uint64_t> failures_not_logged_{0};

  std::atomic<bool> rebuilding_{false};
  base::Mutex rebuild_mu_;
  base::TimerId rebuild_timer_ CQ_GUARDED_BY(rebuild_mu_) = 0;  // cancelled by the destructor

  // Online backup (engine_backup.cc): one at a time, on its own thread. Declared last: the
  // thread is joined before anything else of the engine goes away.
  base::Mutex backup_mu_;
  bool backup_running_ CQ_GUARDED_BY(backup_mu_) = false;
  std::thread backup_thread_ CQ_GUARDED_BY(backup_mu_);
  // Joins the backup thread (the destructor).
  void JoinBackup() CQ_EXCLUDES(backup_mu_);
};

}  // namespace chronoq::engine
