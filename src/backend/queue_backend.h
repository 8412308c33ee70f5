// QueueBackend: the storage-facing interface below the service layer (service/queue_service.h).
// Implemented by the embedded engine (engine/engine.h, over a MessageStore) and by the Redis
// backend (redis/redis_backend.h), siblings that both depend on this header-only module and on
// nothing of each other. Every backend must pass the contract suite in tests/contract/.
//
// Operation. Calls are asynchronous: each takes a completion callback that is invoked exactly
// once, possibly before the call returns (inline) and possibly on another thread. Callbacks must
// not call back into the backend synchronously with assumptions about locks; they may call it.
// Arguments are already validated and have server and topic defaults applied by the service
// (core/validation.h, core/limits.h): a backend checks nothing a request could get wrong.
//
// Errors shared by all operations: kIOError / kUnavailable / kInternal when storage fails (the
// operation then changed nothing).
//
// Thread-safety: all methods may be called from any thread concurrently.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "backend/events.h"
#include "base/result.h"
#include "base/unique_function.h"
#include "core/message.h"
#include "core/state_machine.h"
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
  int32_t batch = 1;           // >= 1
  Millis ack_timeout{30'000};  // > 0
};

// Told when messages of a topic may have become consumable: sent ready, nacked, trigger time
// reached, ack deadline passed. Used to wake parked long polls. Called without backend locks
// held, on any thread; must be cheap and must not block.
class ReadyListener {
 public:
  virtual ~ReadyListener() = default;
  virtual void OnReady(std::string_view topic) = 0;
};

class QueueBackend {
 public:
  virtual ~QueueBackend() = default;

  // Stores a new message, or answers the in-life message with the same topic+msgId (idempotent
  // send; nothing stored; `existing` set). A retained ended message with that id is replaced. An
  // empty msg_id means "generate one". Answers the message with its status at the time of the
  // send.
  virtual void Send(core::NewMessage m, Callback<Result<Sent>> done) = 0;

  // Delivers up to req.batch READY messages, in visibility order (oldest first), each now
  // CONSUMING until now + ack_timeout. Messages found ended on the way are finalized and skipped.
  // Unknown topic: empty list.
  virtual void Pull(PullRequest req, Callback<Result<std::vector<core::Message>>> done) = 0;

  // ack=true: CONSUMING (or READY after an ack timeout) -> CONSUME_OK.
  // ack=false: CONSUMING -> READY now, or RETRY_EXHAUST on its last delivery.
  // Errors: kNotFound (no such message), kInvalidState (not in a state the operation applies
  // to); nothing changes.
  virtual void Ack(std::string topic, std::string msg_id, bool ack, Callback<Status> done) = 0;

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
};

}  // namespace chronoq::backend
