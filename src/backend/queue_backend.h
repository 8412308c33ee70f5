// QueueBackend: the storage-facing interface below the service layer (service/queue_service.h).
// Implemented by the embedded engine (engine/engine.h, over a MessageStore) and by the Redis
// backend (redis/redis_backend.h), siblings that both depend on this header-only module and on
// nothing of each other. Every backend must pass the contract suite in tests/contract/.
//
// Operation. Calls are asynchronous: each takes a completion callback that is invoked exactly
// once, possibly before the call returns (inline) and possibly on another thread. Callbacks must
// not call back into the backend synchronously with assumptions about locks; they may call it.
// Arguments are already validated by the service (core/validation.h, core/limits.h): a backend
// checks nothing a request could get wrong. Values a request left out (a send's ttl and maxRetry,
// a pull's ack timeout) are absent here: the backend resolves them from the topic's
// configuration (core/topic_config.h), atomically with the operation, because on a shared store
// the stored layer may change through another node at any moment.
//
// Errors shared by all operations: kIOError / kUnavailable / kInternal when storage fails (the
// operation then changed nothing).
//
// Thread-safety: all methods may be called from any thread concurrently.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "backend/events.h"
#include "base/result.h"
#include "base/unique_function.h"
#include "core/history.h"
#include "core/message.h"
#include "core/state_machine.h"
#include "core/topic_config.h"
#include "core/topic_info.h"

namespace chronoq::backend {

template <typename T>
using Callback = UniqueFunction<void(T)>;

// The answer to a send.
struct Sent {
  core::Message message;
  bool existing = false;  // an in-life message with that msgId was answered; nothing was stored
};

struct PullRequest {
  std::string topic;
  int32_t batch = 1;                    // >= 1
  std::optional<Millis> ack_timeout{};  // > 0; absent: the topic's
};

// redriveMsg (API-EXTENSIONS.md section 4).
struct RedriveRequest {
  std::string topic;                  // the dead-letter topic
  std::optional<std::string> msg_id;  // absent: up to `limit` dead letters
  int32_t limit = 100;                // >= 1
  Millis delay{0};                    // <= 0: consumable at once in the source topic
};

// One id of an ackMsgBatch (or an ackMsg with a reason, or the outcome of a push attempt).
struct AckItem {
  std::string msg_id;
  bool ack = true;     // false: nack
  std::string reason;  // nack only: kept as the message's last_error when not empty
  // Push attempts (docs/push.md). release (with ack false): the delivery is undone without
  // counting it (core EventKind::kRelease, back-off core::kReleaseBackoff). attempt > 0: the item
  // applies only while the message is in that attempt (core::CheckAttempt), else kInvalidState.
  bool release = false;
  int64_t attempt = 0;
};

// What TakePush answers: due push-lane messages, each leased.
struct PushTake {
  std::vector<core::Message> messages;           // with payloads, CONSUMING
  std::optional<core::Callback> topic_callback;  // the topic's effective callback at the take
};

// updateMsg: the fields to change (absent ones stay).
struct UpdateRequest {
  std::string topic;
  std::string msg_id;
  core::MessageUpdate update;  // at least one field set (the service checks)
};

// listMsg (API-EXTENSIONS.md section 3). Orders: WAITING by trigger time (visible_at), READY in
// the order a pull would deliver them (priority descending, then visible_at, then seq: a peek),
// CONSUMING by ack deadline, ended statuses by end time; ties by seq. Without a status, the walk
// lists WAITING, then READY, then CONSUMING.
struct ListRequest {
  std::string topic;
  std::optional<core::MsgStatus> status;  // absent: 1, 2 and 3
  int32_t limit = 100;                    // 1..1000
  std::string cursor;                     // empty: the first page; else a ListPage::next_cursor
};

struct ListPage {
  std::vector<core::Message> messages;  // with payloads
  // Where the next page starts (printable ASCII, opaque to clients); empty on the last page.
  // Cursors are positions in the listed order, not snapshots: a message that stays in the listed
  // status is listed exactly once on a walk, whatever is sent or consumed meanwhile.
  std::string next_cursor;
};

// Told when messages of a topic may have become consumable: sent ready, nacked, trigger time
// reached, ack deadline passed. Used to wake parked long polls. Called without backend locks
// held, on any thread; must be cheap and must not block.
class ReadyListener {
 public:
  virtual ~ReadyListener() = default;
  // Pull lane.
  virtual void OnReady(std::string_view topic) = 0;
  // Push lane (docs/push.md): push-lane messages of `topic` may be due (sent ready, trigger time
  // reached, retry interval or lease over, topic resumed). A backend shared by several nodes
  // tells every node, whichever node made them due; every backend tells it at start (or when
  // the listener is set) for each topic whose push lane holds messages.
  virtual void OnPushReady(std::string_view /*topic*/) {}
};

// What an online backup wrote (QueueBackend::Backup).
struct BackupInfo {
  std::string dir;    // where the copy is
  int64_t bytes = 0;  // its size
  int64_t files = 0;
  Millis took{0};  // how long the copy took
};

class QueueBackend {
 public:
  virtual ~QueueBackend() = default;

  // Stores a new message, or answers the in-life message with the same topic+msgId (idempotent
  // send; nothing stored; `existing` set). A retained ended message with that id is replaced. An
  // empty msg_id means "generate one". Answers the message with its status at the time of the
  // send. A topic with a capacity that already holds that many in-life messages refuses a new
  // one: kResourceExhausted with core::TopicFull's sentence (an idempotent re-send is answered).
  virtual void Send(core::NewMessage m, Callback<Result<Sent>> done) = 0;

  // Delivers up to req.batch READY messages, highest priority first and within a priority in
  // visibility order (oldest first), each now CONSUMING until now + ack_timeout, with the topic's
  // retry interval. Messages found ended on the way are finalized and skipped. Unknown or paused
  // topic: empty list.
  virtual void Pull(PullRequest req, Callback<Result<std::vector<core::Message>>> done) = 0;

  // The push lane's Pull (docs/push.md): up to `max` (>= 1) READY push-lane messages of `topic`,
  // in Pull's order, each now CONSUMING with core::PushLease(record, topic config, lease_margin)
  // as its ack timeout and core::RetryIntervalOf as its retry interval. Pull never returns
  // push-lane messages; TakePush never returns pull-lane ones. Unknown or paused topic: empty.
  virtual void TakePush(std::string topic, int32_t max, Millis lease_margin,
                        Callback<Result<PushTake>> done) = 0;

  // Stores a batch of messages of one topic (all msgs[i].topic equal, ids distinct, non-empty)
  // in one atomic durable write: each is stored or answered like Send (an in-life msgId is
  // answered with `existing`, nothing stored for it; once the topic's capacity is reached, the
  // remaining new items are refused with Send's kResourceExhausted); a failed write stores none.
  // Answers in input order.
  virtual void SendBatch(std::vector<core::NewMessage> msgs,
                         Callback<Result<std::vector<Result<Sent>>>> done) = 0;

  // ack=true: CONSUMING (or READY after an ack timeout) -> CONSUME_OK.
  // ack=false: CONSUMING -> READY after the retry interval (core::RetryIntervalOf: a push-lane
  // message's own callback may set it), or RETRY_EXHAUST on its last delivery.
  // Errors: kNotFound (no such message), kInvalidState (not in a state the operation applies
  // to); nothing changes.
  virtual void Ack(std::string topic, std::string msg_id, bool ack, Callback<Status> done) = 0;

  // Acks and nacks several messages of one topic (ids distinct), each by Ack's rules, in one
  // atomic write; a nack's reason becomes the message's last_error. Answers one Status per item,
  // in input order (kNotFound / kInvalidState for an item change nothing for it); a failed write
  // fails the whole call and changes nothing.
  virtual void AckBatch(std::string topic, std::vector<AckItem> items,
                        Callback<Result<std::vector<Status>>> done) = 0;

  // updateMsg: core::ApplyUpdate on a WAITING or READY message, atomic against pulls (a message
  // is updated or delivered, never both). A message that becomes consumable wakes the listener.
  // Answers the updated message (with payload). Errors: kNotFound, kInvalidState.
  virtual void Update(UpdateRequest req, Callback<Result<core::Message>> done) = 0;

  // touchMsg: a CONSUMING message's ack deadline becomes now + ack_timeout (> 0; absent: the
  // topic's). Answers the message. Errors: kNotFound, kInvalidState.
  virtual void Touch(std::string topic, std::string msg_id, std::optional<Millis> ack_timeout,
                     Callback<Result<core::Message>> done) = 0;

  // countMsg: a WAITING message's count grows by `count` (>= 1); reaching its count trigger makes
  // it consumable now (and wakes the listener). Answers the message. Errors: kNotFound,
  // kInvalidState.
  virtual void Count(std::string topic, std::string msg_id, int64_t count,
                     Callback<Result<core::Message>> done) = 0;

  // listMsg: one page. Cost grows with req.limit, never with the topic's backlog. Errors:
  // kInvalidArgument for a cursor this backend did not make ("cursor is not valid ...").
  virtual void List(ListRequest req, Callback<Result<ListPage>> done) = 0;

  // In-life message -> DELETE. With release, the record is forgotten at once; otherwise it stays
  // readable for the retention period. Errors: kNotFound, kInvalidState (already ended).
  virtual void Delete(std::string topic, std::string msg_id, bool release,
                      Callback<Status> done) = 0;

  // The message with its status now, in life or ended and retained. Errors: kNotFound.
  virtual void Get(std::string topic, std::string msg_id, Callback<Result<core::Message>> done) = 0;

  // Counts of one topic, true now. Unknown topic: all zero.
  virtual void GetTopicInfo(std::string topic, Callback<Result<core::TopicInfo>> done) = 0;

  // Counts of every known topic (known from its first send until idle and empty for the
  // inactivity period), sorted by topic name.
  virtual void ListTopics(Callback<Result<std::vector<core::TopicInfo>>> done) = 0;

  // --- Topic configuration and dead letters (API-EXTENSIONS.md section 4, core/topic_config.h)
  //
  // Dead letters: when a message of a topic whose effective deadLetterTopic is not empty ends as
  // EXPIRE or RETRY_EXHAUST (by time, or by the nack of its last delivery), the write that ends
  // it also stores core::DeadLetterOf in the dead-letter topic, whatever that topic's capacity;
  // a message with that msgId in life there is answered like an idempotent send (nothing
  // stored). On a store that cannot write two topics atomically (Redis Cluster: another slot),
  // the end writes an outbox entry in the source topic atomically and moves it on at once;
  // whichever node finds an outbox entry later (a node died in between) finishes the move,
  // so a dead letter is never lost nor doubled (docs/redis.md).

  // The node-local layers the backend resolves stored configurations over. Set by the service
  // before any other call. REQUIRES: `defaults` outlives the backend.
  virtual void SetTopicDefaults(const core::TopicDefaults* defaults) = 0;
  // Merges the fields set in `change` into the topic's stored configuration, durably (on a shared
  // store, every node sees it from its next operation on), and answers the stored layer after
  // the change. A topic that stops being paused wakes the listener.
  virtual void SetTopicConfig(std::string topic, core::TopicConfig change,
                              Callback<Result<core::TopicConfig>> done) = 0;
  // The topic's stored layer (all fields unset when it has none).
  virtual void GetTopicConfig(std::string topic, Callback<Result<core::TopicConfig>> done) = 0;
  // Removes the stored layer: the node-local layers apply again (a paused topic resumes).
  virtual void DeleteTopicConfig(std::string topic, Callback<Status> done) = 0;
  // purgeTopic: every in-life message of the topic (only those in `status`, 1..3, when given)
  // -> DELETE, in atomic writes of a bounded number of messages, letting other requests run in
  // between. Answers how many were deleted.
  virtual void Purge(std::string topic, std::optional<core::MsgStatus> status,
                     Callback<Result<int64_t>> done) = 0;
  // redriveMsg: each READY dead letter of req.topic (the one with req.msg_id, or up to req.limit
  // in pull order) becomes core::RedriveOf in its source topic and ends in req.topic as DELETE
  // (released at once), in one atomic write per message. The source topic's capacity applies:
  // a full source stops the walk (a named msgId gets kResourceExhausted). Answers how many were
  // moved. Errors for a named msgId: kNotFound, kInvalidState (not a READY dead letter, or its
  // source holds an in-life message with that msgId).
  virtual void Redrive(RedriveRequest req, Callback<Result<int64_t>> done) = 0;

  // importMsgBatch (docs/api-extensions.md "Export and import"): stores messages of one topic
  // (all records[i].topic equal, ids distinct and non-empty) with the full state they carry:
  // payload, produce/trigger/expire times, maxRetry, priority, deliveries (retry), count trigger
  // and count, lastError, callback and push lane, dead-letter origin, and the phase with its
  // visible_at (kPending: when it is or became consumable; kDelivered: the ack deadline plus
  // retry_interval, as core::MessageRecord defines them). The backend assigns the seq; kEnded
  // records are not given (the service refuses them). A msgId in life in the topic is left as it
  // is (false: skipped); a retained ended one is replaced (true: imported), as a send does. The
  // topic's capacity does not apply (an import restores what a topic held). One atomic write;
  // answers in input order; a failed write stores none.
  virtual void Import(std::vector<core::MessageRecord> records,
                      Callback<Result<std::vector<bool>>> done) {
    (void)records;
    done(Status(Errc::kInternal, "this storage cannot import messages"));
  }

  // Registers the listener (nullptr to clear). REQUIRES: the listener outlives the backend or
  // is cleared first.
  virtual void SetReadyListener(ReadyListener* listener) = 0;

  // Registers the sink that hears what time did to messages (nullptr to clear: not counted).
  // REQUIRES: the sink outlives the backend or is cleared first.
  virtual void SetEventSink(EventSink* sink) = 0;

  // A long poll is parked for `topic` on this node. A backend shared by several nodes makes sure
  // from now on that the listener hears when the topic's messages become consumable, whichever
  // node changed them. Cheap; may be called for every parked request.
  virtual void WatchTopic(const std::string& /*topic*/) {}

  // True when the backend knows, without asking its store, that nothing of a watched `topic` is
  // consumable now, and that the listener will hear when that changes. A long poll then parks
  // without pulling first. False when unsure (the default).
  virtual bool KnownIdle(const std::string& /*topic*/) { return false; }

  // Long polls have been parked on `topic` for a while. A backend whose news of other nodes'
  // changes can be lost on the way (Redis pub/sub: a Cluster bus link that resets drops
  // publications silently) looks at the topic now and tells the listener if anything is
  // consumable, so that a lost publication costs a parked request seconds, not its whole
  // timeout. Called every few seconds per topic with parked requests (LongPollWaiters). A
  // backend whose news cannot be lost does nothing (the default).
  virtual void Recheck(const std::string& /*topic*/) {}

  // Online backup (docs/operations.md): a consistent copy of the backend's store in `dir` (an
  // absolute path on the server's machine that does not exist yet), taken while requests go on.
  // A server started on the copy has every message whose operation was answered before the call.
  // One backup at a time. Errors: kInvalidArgument (a backend whose data lives elsewhere, a bad
  // `dir`, with a sentence naming it), kConflict (a backup is running), kIOError.
  // getMsgHistory (core/history.h): the recorded transitions of a message of a topic whose
  // effective configuration has history on, oldest first (at most the backend's bound; an empty
  // list for a message sent while history was off). Errors: kInvalidArgument (the topic's history
  // is off, or the backend does not record histories), kNotFound (no such message, or past its
  // retention).
  virtual void GetHistory(std::string topic, std::string msg_id,
                          Callback<Result<std::vector<core::HistoryEntry>>> done) {
    (void)topic;
    (void)msg_id;
    done(InvalidArgument("this server's storage does not record message history"));
  }

  virtual void Backup(std::string dir, Callback<Result<BackupInfo>> done) {
    (void)dir;
    done(InvalidArgument("this server's storage cannot be backed up by chronoq"));
  }
};

}  // namespace chronoq::backend
