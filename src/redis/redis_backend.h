// RedisBackend: the QueueBackend on Redis (docs/redis.md). All message state lives in Redis and
// every operation is one Lua script on the keys of one topic; this node keeps only timers that
// tell its ReadyListener when a topic's messages become consumable.
//
// Standalone, Sentinel and Cluster deployments (through the CommandSink), several nodes on one
// Redis: sends and nacks are published so that long polls parked on any node wake up; writes
// may wait for replicas (--redis-wait-replicas).
//
// Push lane (docs/push.md, redis_push.cc): push-lane messages are the same sorted sets at levels
// 10..19. Every node watches every topic listed in the namespace's push set (the topics that may
// have push work) like a topic with parked long polls: a timer at its next change and the
// publications of the other nodes, and tells its listener OnPushReady when push work is due.
//
// Thread-safety: all methods from any thread; callbacks run on the Redis event loop thread or,
// for ready notifications at trigger times, on the scheduler's thread.
#pragma once

#include <array>
#include <atomic>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "backend/queue_backend.h"
#include "base/clock.h"
#include "base/mutex.h"
#include "base/scheduler.h"
#include "redis/coalescer.h"
#include "redis/command_sink.h"
#include "redis/connection.h"

namespace chronoq::redis {

struct RedisBackendOptions {
  std::string ns = "default";        // --namespace: isolates servers sharing one Redis
  bool publish = false;              // publish sends and nacks for the other nodes' long polls
  int wait_replicas = 0;             // --redis-wait-replicas: WAIT for this many after writes
  Millis wait_timeout{500};          // how long a write waits for them (< command timeout)
  Millis retention{300'000};         // end-life-msg-expire-millis
  Millis topic_inactive{1'800'000};  // topic-inactive-millis
  // Message history (core/history.h): this node's name in the entries it writes (node-id) and
  // the entries kept per message (history-max-entries).
  std::string node = "chronoq";
  int64_t history_max_entries = 32;
  // --redis-format: how this node writes records (lua_common.h; every format is read): 1 a hash
  // (nodes before issue 20), 2 a MessagePack array of strings, 3 the same with integers.
  int record_format = 2;
};

class RedisBackend final : public backend::QueueBackend {
 public:
  // The EventSink (SetEventSink) hears of the triggers, ack timeouts, expirations and retry
  // exhaustions this node's scripts observe (with several nodes, each reports what its own
  // scripts saw).
  RedisBackend(RedisBackendOptions options, CommandSink* redis, const base::Clock* clock,
               base::Scheduler* scheduler);
  ~RedisBackend() override;

  void Send(core::NewMessage m, backend::Callback<Result<backend::Sent>> done) override;
  void Pull(backend::PullRequest req,
            backend::Callback<Result<std::vector<core::Message>>> done) override;
  void TakePush(std::string topic, int32_t max, Millis lease_margin,
                backend::Callback<Result<backend::PushTake>> done) override;
  void Ack(std::string topic, std::string msg_id, bool ack,
           backend::Callback<Status> done) override;
  void Delete(std::string topic, std::string msg_id, bool release,
              backend::Callback<Status> done) override;
  void Get(std::string topic, std::string msg_id,
           backend::Callback<Result<core::Message>> done) override;
  void GetTopicInfo(std::string topic, backend::Callback<Result<core::TopicInfo>> done) override;
  void ListTopics(backend::Callback<Result<std::vector<core::TopicInfo>>> done) override;
  void SendBatch(std::vector<core::NewMessage> msgs,
                 backend::Callback<Result<std::vector<Result<backend::Sent>>>> done) override;
  void AckBatch(std::string topic, std::vector<backend::AckItem> items,
                backend::Callback<Result<std::vector<Status>>> done) override;
  void Update(backend::UpdateRequest req, backend::Callback<Result<core::Message>> done) override;
  void Touch(std::string topic, std::string msg_id, std::optional<Millis> ack_timeout,
             backend::Callback<Result<core::Message>> done) override;
  void Count(std::string topic, std::string msg_id, int64_t count,
             backend::Callback<Result<core::Message>> done) override;
  // redis_import.cc
  void Import(std::vector<core::MessageRecord> records,
              backend::Callback<Result<std::vector<bool>>> done) override;
  // redis_history.cc: the list 'h:<msgId>' the scripts keep (lua_common.h, CQ_LUA_HISTORY).
  void GetHistory(std::string topic, std::string msg_id,
                  backend::Callback<Result<std::vector<core::HistoryEntry>>> done) override;
  void List(backend::ListRequest req, backend::Callback<Result<backend::ListPage>> done) override;
  void SetReadyListener(backend::ReadyListener* listener) override;
  void SetEventSink(backend::EventSink* sink) override { sink_.store(sink); }
  // redis_topics.cc
  void SetTopicDefaults(const core::TopicDefaults* defaults) override {
    topic_defaults_.store(defaults);
  }
  void SetTopicConfig(std::string topic, core::TopicConfig change,
                      backend::Callback<Result<core::TopicConfig>> done) override;
  void GetTopicConfig(std::string topic,
                      backend::Callback<Result<core::TopicConfig>> done) override;
  void DeleteTopicConfig(std::string topic, backend::Callback<Status> done) override;
  void Purge(std::string topic, std::optional<core::MsgStatus> status,
             backend::Callback<Result<int64_t>> done) override;
  void Redrive(backend::RedriveRequest req, backend::Callback<Result<int64_t>> done) override;
  void WatchTopic(const std::string& topic) override CQ_EXCLUDES(mu_);
  // True for a watched topic when this node's latest script on it found nothing consumable, no
  // news came since (sends, nacks, publications, wake-ups) and that was less than a second ago
  // (a bound on what a node that died before its wake-up could hide).
  bool KnownIdle(const std::string& topic) override CQ_EXCLUDES(mu_);
  // Pub/sub is at most once (a reset Cluster bus link drops publications): runs the wake
  // script, which notifies the listener if the topic has consumable messages.
  void Recheck(const std::string& topic) override { CheckTopic(topic, nullptr); }
  // Refused: the messages live in Redis, which is backed up by its own means (docs/operations.md).
  void Backup(std::string, backend::Callback<Result<backend::BackupInfo>> done) override {
    done(InvalidArgument(
        "this server stores its messages in Redis (storage=redis): back up Redis itself (its RDB "
        "snapshots or AOF, e.g. BGSAVE); chronoq backup copies the embedded store only"));
  }

  // The channel every node publishes sends and nacks on, and subscribes to (subscriber.h).
  std::string ReadyChannel() const;
  // A publication of another node (or this one) on ReadyChannel():
  // "<flags digit>\n<next time of change, ms, or empty>\n<topic>", flags being kPub* bits.
  void OnPublished(std::string_view payload) CQ_EXCLUDES(mu_);
  enum PubFlags : int {
    kPubPullReady = 1,  // a pull-lane message is consumable now (nodes before issue 16: "1")
    kPubPushReady = 2,  // push work is due now
    kPubPushLane = 4,   // the topic has a push lane: every node watches it
  };
  // The subscription was (re)established (also at start): publications may have been missed
  // meanwhile, and nodes that died may have left dead letters in outboxes (RecoverOutboxes);
  // the push set is read again (RefreshPushTopics).
  void OnResubscribed() CQ_EXCLUDES(mu_);
  // The sorted set of topics that may have push work, scored by when a node last listed them
  // (another slot than the topics': written apart, before the script that needs it).
  std::string PushKey() const;
  // Moves on the outbox entries over two seconds old of every known topic (getTopicInfoList's).
  void RecoverOutboxes() CQ_EXCLUDES(mu_);

  // Calls `done` once every command sent so far has been answered, and the commands their
  // answers led to (a reading of the push set, then a check of each topic) too (tests).
  void Flush(UniqueFunction<void()> done) CQ_EXCLUDES(mu_);

 public:
  enum ScriptId {
    kSendScript,
    kPullScript,
    kAckScript,
    kDeleteScript,
    kGetScript,
    kInfoScript,
    kWakeScript,
    kUpdateScript,
    kTouchScript,
    kCountScript,
    kListScript,
    kConfigSetScript,
    kConfigGetScript,
    kConfigDeleteScript,
    kPurgeScript,
    kOutboxReadScript,
    kOutboxDoneScript,
    kDeadLetterInScript,
    kRedriveOutScript,
    kRedriveInScript,
    kRedriveDoneScript,
    kImportScript,
    kHistoryScript,
    kScriptCount
  };

 private:
  // Runs a script on the topic's keys (EVALSHA; EVAL when the server does not have it); takes
  // the statistics out of the reply before `done` sees it.
  void Eval(ScriptId id, const std::string& topic, std::vector<std::string> args,
            RedisConnection::Done done) CQ_EXCLUDES(mu_);
  std::string Prefix(const std::string& topic) const;
  void FlushRound(UniqueFunction<void()> done, int round) CQ_EXCLUDES(mu_);
  // A command whose answer nobody reads (a publication, a write to the sweep set, the release of
  // markers), counted in inflight_ all the same: Flush and the destructor return only once it is
  // answered, so whoever flushed and then reads Redis, over any connection, sees it. (Sent from
  // an answer's callback, it is behind the PING of the round of Flush in progress.)
  void CountedCommand(const std::string& key, std::vector<std::string> cmd) CQ_EXCLUDES(mu_);
  std::string TopicsKey() const;
  // Records the topic's activity in the topics key (getTopicInfoList); `then` once answered.
  // Counted in inflight_ until `then` has run.
  void RegisterTopic(const std::string& topic, TimePoint now, UniqueFunction<void()> then)
      CQ_EXCLUDES(mu_);
  // The same for sends, pulls and acks (`add`: a send, which lists a new topic; else only a
  // listed topic's activity is raised): skipped when this node listed the topic less than
  // kTopicListedFor ago (nothing takes a topic off the key), so a busy topic costs one ZADD
  // per interval, not one per operation. `then` (may be empty) once answered or skipped.
  void TouchTopic(const std::string& topic, TimePoint now, bool add, UniqueFunction<void()> then)
      CQ_EXCLUDES(mu_);
  static constexpr Millis kTopicListedFor{1000};
  // redis_send.cc. Sends and acks are coalesced per topic (group commit, coalescer.h): one
  // script for the requests that arrive while kInFlightPerTopic of the topic's run. A
  // sendMsgBatch or ackMsgBatch is never split.
  struct SendPart {
    std::vector<std::string> items;  // 9 (11) script arguments per message (scripts.cc kSend)
    std::vector<core::MessageRecord> recs;
    size_t payload_bytes = 0;
    backend::Callback<Result<std::vector<Result<backend::Sent>>>> done;
  };
  struct AckPart {
    std::vector<std::string> args;  // 4 script arguments per item (scripts.cc kAck)
    std::vector<backend::AckItem> items;
    backend::Callback<Result<std::vector<Status>>> done;
  };
  struct SendSize {  // Coalescer's view of a part
    SendPart part;
    size_t items() const { return part.recs.size(); }
    size_t bytes() const { return part.payload_bytes; }
    std::vector<std::string>& args() { return part.items; }
    const std::vector<std::string>& args() const { return part.items; }
  };
  struct AckSize {
    AckPart part;
    size_t items() const { return part.items.size(); }
    size_t bytes() const { return 0; }
    std::vector<std::string>& args() { return part.args; }
    const std::vector<std::string>& args() const { return part.args; }
  };
  static constexpr int kInFlightPerTopic = 2;
  template <typename Size>
  using AnswerMerged = void (RedisBackend::*)(const std::string& topic, std::vector<Size> parts,
                                              TimePoint now, Result<RedisReply> r);
  // Runs `parts` (a SendSize or AckSize each, taken from `queue`) merged in one script `id`; when
  // it answers, the next merged run of the topic starts and `answer` answers these.
  template <typename Size>
  void RunMerged(ScriptId id, Coalescer<Size>* queue, AnswerMerged<Size> answer,
                 const std::string& topic, std::vector<Size> parts);
  void QueueSend(const std::string& topic, SendPart part);
  // Answers every part of a merged send from the script's reply (run at `now`).
  void AnswerSends(const std::string& topic, std::vector<SendSize> parts, TimePoint now,
                   Result<RedisReply> r);
  void QueueAck(const std::string& topic, AckPart part);
  void AnswerAcks(const std::string& topic, std::vector<AckSize> parts, TimePoint now,
                  Result<RedisReply> r);
  // Answers an updated, touched or counted message. `changed_visibility`: it may have become
  // consumable or got a new trigger time, which this node's timers, its listener and the other
  // nodes (a publication) hear of.
  void Answer(const std::string& topic, core::MessageRecord rec, TimePoint now,
              bool changed_visibility, backend::Callback<Result<core::Message>> done);
  // Keeps one timer per topic at the next time something in it may change by itself.
  void ArmWake(const std::string& topic, const std::string& next_ms) CQ_EXCLUDES(mu_);
  void Wake(const std::string& topic) CQ_EXCLUDES(mu_);
  // Runs the wake script for `topic` now, or right after the one in flight (at most one per
  // topic is: when the node is behind, one script covers everything due meanwhile); `then` (may
  // be empty) once a script sent after this call answered. `timer`: asked by this node's
  // wake-up (publishes deadlines that passed, which other nodes do not know).
  // `announce`: tell the listener OnPushReady if the push lane holds anything (start).
  void CheckTopic(const std::string& topic, UniqueFunction<void()> then, bool timer = false,
                  bool announce = false) CQ_EXCLUDES(mu_);
  void RunCheck(const std::string& topic, std::vector<UniqueFunction<void()>> thens, bool timer,
                bool announce) CQ_EXCLUDES(mu_);
  // What may have made something of `topic` consumable: it is not known idle any more.
  void News(const std::string& topic) CQ_EXCLUDES(mu_);
  // How many news came so far; a script's "nothing consumable" counts only if none came since
  // it was sent (MarkIdle).
  uint64_t NewsSeen() CQ_EXCLUDES(mu_);
  void MarkIdle(const std::string& topic, uint64_t seen) CQ_EXCLUDES(mu_);
  void Publish(const std::string& topic, int flags, const std::string& next_ms) CQ_EXCLUDES(mu_);
  // With wait_replicas: `done` gets the script's reply once WAIT says enough replicas have it
  // (or an error saying how many did).
  RedisConnection::Done AfterReplicas(const std::string& topic, RedisConnection::Done done);
  // The same for a write to `key` (routes the WAIT to the key's master).
  RedisConnection::Done AfterReplicasOf(std::string key, RedisConnection::Done done);
  void NotifyReady(const std::string& topic);
  // redis_push.cc. Tells the listener that push work of `topic` may be due.
  void NotifyPush(const std::string& topic);
  // Lists `topic` in the push set (unless this node did in the last minute), then `then` (with
  // the error when the listing failed: the caller must not write push work then).
  void EnsurePushListed(const std::string& topic, bool force, UniqueFunction<void(Status)> then)
      CQ_EXCLUDES(mu_);
  // Reads the push set and checks each topic (learning its next change, telling the listener of
  // due work; `announce`: of any push work held, as at start).
  void RefreshPushTopics(bool announce) CQ_EXCLUDES(mu_);
  // A check found the push lane of a watched topic empty and no callback: the topic leaves the
  // push set if no node listed it for kPushUnlistAfter (tried at most once a minute per topic).
  void MaybeUnlist(const std::string& topic) CQ_EXCLUDES(mu_);
  // Whether this node watches `topic`'s push lane; `add`: it does from now on.
  bool PushWatched(const std::string& topic, bool add = false) CQ_EXCLUDES(mu_);
  // redis_sweep.cc: the namespace's sweep set of layout-4 topics with ended records to delete.
  std::string SweepKey() const;
  // A script of `topic` answered that its oldest ended record runs out at `at_ms`: listed in the
  // sweep set (ZADD LT; skipped when this node listed it less than kSweepEvery ago, not later).
  void NoteSweep(const std::string& topic, int64_t at_ms) CQ_EXCLUDES(mu_);
  // Rounds kSweepEvery apart from the node's start (or its first NoteSweep, or any answer of a
  // layout-4 topic), while the sweep set holds topics: each sweeps up to kSweepBatch topics whose
  // time came (the wake script with the sweep flag), then rescores or removes them. A round that
  // finds the set empty arms no next one (no Redis call a second on a node of a namespace
  // without layout-4 topics).
  void ArmSweep() CQ_EXCLUDES(mu_);
  void Sweep() CQ_EXCLUDES(mu_);
  void SweepTopic(const std::string& topic, TimePoint now) CQ_EXCLUDES(mu_);
  void SweepDone() CQ_EXCLUDES(mu_);  // the reading or a topic's sweep answered
  static constexpr Millis kSweepEvery{1000};
  static constexpr int kSweepBatch = 100;
  // Takes the statistics every script puts first in its reply, and records them.
  // Answers how many dead letters the script put in the topic's outbox, and how many entries
  // the outbox holds.
  std::pair<int64_t, int64_t> TakeStats(const std::string& topic, RedisReply& r);
  void Report(const std::string& topic, const backend::TopicEvents& e);
  // redis_topics.cc: purge in bounded script calls, each from the `position` where the previous
  // one stopped ("" at the start), `deleted` so far.
  void PurgeStep(std::string topic, std::optional<core::MsgStatus> status, std::string position,
                 int64_t deleted, backend::Callback<Result<int64_t>> done);
  // A topic that stopped being paused: long polls on every node pull again.
  void Resumed(const std::string& topic);
  // redis_dead_letters.cc. Moves on the entries of `topic`'s outbox (dead letters to their
  // dead-letter topics; with !fresh only entries written over two seconds ago, also redrives a
  // node left unfinished). At most one flush per topic runs on a node; a fresh one asked
  // meanwhile runs after it. `then` (may be empty) once a flush that read the outbox after this
  // call finished (whether or not every move succeeded: failed ones stay in the outbox).
  void FlushOutbox(const std::string& topic, bool fresh, UniqueFunction<void()> then = nullptr)
      CQ_EXCLUDES(mu_);
  void RunFlush(const std::string& topic, bool fresh) CQ_EXCLUDES(mu_);
  // The outbox entries of `tokens` ("<from topic>\n<outbox member>") are gone: the markers
  // `topic` keeps of them (its inbox) may go a minute from now.
  void ReleaseMarkers(const std::string& topic, std::vector<std::string> tokens) CQ_EXCLUDES(mu_);
  // Step 2 of a redrive: the source topic takes the messages of `taken` (kRedriveOut's entries,
  // from `at` on), then the dead-letter topic drops or restores each. `done` gets the answers
  // of the source ({'NEW'}, {'DONE'}, {'EXISTS'}, {'FULL', n, capacity}) in order.
  struct RedriveItem {
    std::string member, msg_id, payload, priority, source;
    std::string callback;  // the message's own, as the scripts keep it ('' for none)
  };
  void RedriveMove(const std::string& topic, std::vector<RedriveItem> items, Millis delay,
                   backend::Callback<Result<std::vector<RedisReply>>> done);

  const RedisBackendOptions options_;
  // What every script call adds to the node-local layers: message history (HistoryArgs), then
  // the record format it writes (a line of its own, lua_common.h's FMT).
  const std::string history_args_;
  CommandSink* const conn_;
  const base::Clock* const clock_;
  base::Scheduler* const scheduler_;
  std::atomic<backend::ReadyListener*> listener_{nullptr};
  std::atomic<backend::EventSink*> sink_{nullptr};
  std::atomic<const core::TopicDefaults*> topic_defaults_{nullptr};
  // The topic's node-local configuration (file tables over server defaults).
  core::EffectiveTopicConfig LocalConfigOf(const std::string& topic) const;

  base::Mutex mu_;
  base::CondVar idle_;  // signalled when inflight_ drops to 0 (the destructor waits for it)
  int inflight_ CQ_GUARDED_BY(mu_) = 0;  // scripts sent and not yet answered
  // Scripts sent with SCRIPT LOAD once (later calls rely on EVALSHA, with EVAL on NOSCRIPT).
  std::array<bool, kScriptCount> loaded_ CQ_GUARDED_BY(mu_) = {};
  struct Wakeup {
    TimePoint at;
    base::TimerId timer = 0;
  };
  std::map<std::string, Wakeup> wakeups_ CQ_GUARDED_BY(mu_);
  struct Check {         // a wake script in flight for a topic
    bool again = false;  // asked again meanwhile
    bool again_timer = false;
    bool again_announce = false;
    std::vector<UniqueFunction<void()>> thens;  // of the calls that asked again
  };
  std::map<std::string, Check> checks_ CQ_GUARDED_BY(mu_);
  // Topics with long polls parked here, and when one was last parked; forgotten after a while.
  std::map<std::string, TimePoint> watched_ CQ_GUARDED_BY(mu_);
  bool closing_ CQ_GUARDED_BY(mu_) = false;
  uint64_t news_ CQ_GUARDED_BY(mu_) = 0;
  // Topics whose outbox this node is moving on.
  struct OutboxFlush {
    bool again = false;                                // a fresh flush was asked meanwhile
    std::vector<UniqueFunction<void()>> waiters;       // told when this run ends
    std::vector<UniqueFunction<void()>> next_waiters;  // told when the run after it ends
  };
  std::map<std::string, OutboxFlush> flushing_ CQ_GUARDED_BY(mu_);
  // Topics known idle (KnownIdle), and since when.
  std::map<std::string, TimePoint> known_idle_ CQ_GUARDED_BY(mu_);
  // Push lane: the topics this node watches (listed in the push set), when this node last
  // listed a topic itself, and when it last tried to take one off the set.
  std::set<std::string> push_watched_ CQ_GUARDED_BY(mu_);
  std::map<std::string, TimePoint> push_listed_ CQ_GUARDED_BY(mu_);
  std::map<std::string, TimePoint> unlist_tried_ CQ_GUARDED_BY(mu_);
  // When this node last listed each topic in the topics key (TouchTopic).
  std::map<std::string, TimePoint> topic_listed_ CQ_GUARDED_BY(mu_);
  // When this node last listed each topic in the sweep set (NoteSweep), and with what time.
  struct SweepNoted {
    TimePoint when;
    int64_t at = 0;
  };
  std::map<std::string, SweepNoted> sweep_noted_ CQ_GUARDED_BY(mu_);
  base::TimerId sweep_timer_ CQ_GUARDED_BY(mu_) = 0;
  uint64_t sweep_arms_ CQ_GUARDED_BY(mu_) = 0;  // ArmSweep calls: a round began before one?
  int sweeps_left_ CQ_GUARDED_BY(mu_) = 0;      // of the round running (its reading included)
  Coalescer<SendSize> sends_{kInFlightPerTopic, 256, 1 << 20};
  Coalescer<AckSize> acks_{kInFlightPerTopic, 1000, 1 << 20};
};

}  // namespace chronoq::redis
