// PushScheduler: delivers due push-lane messages to their callbacks (docs/push.md). It takes due
// messages of a topic from the storage's push lane, each leased (CONSUMING) for its callback's
// timeout plus a margin, hands each to the transport, and ends each attempt by its outcome: ack
// on success, nack with the error as reason on failure (the message waits out its retry interval
// and is due again; its last attempt ends it as RETRY_EXHAUST, a dead letter when configured),
// release when the target was busy (not an attempt). A node that dies mid-push leaves the lease
// to run out: the message is due again on any node (at least once, never lost).
//
// The storage side (PushLane) and the transports (PushTransport) are interfaces, so this class
// is the same over the embedded engine, memory and Redis, and testable with fakes.
//
// Operation. Wake(topic) is the only trigger: the backend calls it (through the service) when
// push work of a topic may be due (a send, a trigger time, a lease's end), and the app once per
// known topic at start. Between wakes the scheduler does nothing: no polling. At most
// `max_in_flight` pushes run at once over all topics; a topic whose take was cut short by that
// limit is taken again as pushes finish. One take and one outcome write per topic at a time;
// outcomes that arrive meanwhile go into the next write. State is kept per topic only while
// something of it is under way (a take, pushes, a write): memory follows the topics being
// pushed now, not every topic ever pushed to (per-order topics), purged or deleted ones included.
//
// Thread-safety: every method may be called from any thread; the lane's and the transport's
// callbacks may run inline or on their own threads.
#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "backend/queue_backend.h"
#include "base/mutex.h"
#include "base/thread_annotations.h"
#include "base/unique_function.h"
#include "core/callback.h"
#include "core/message.h"

namespace chronoq::service {

// One attempt of one message: the message (leased; record.retry counts this attempt) and the
// callback it goes to (its own, else its topic's at the time of the take).
struct PushJob {
  core::Message message;
  std::optional<core::Callback> callback;  // absent: neither the message nor its topic has one
};

enum class PushVerdict {
  kAck,      // pushed: the message is done (CONSUME_OK)
  kNack,     // failed: reason kept as lastError; due again after the retry interval
  kRelease,  // not tried (target busy): pending again without counting an attempt
};

struct PushResult {
  std::string msg_id;
  int64_t attempt = 0;  // the attempt it ends (the record's retry when taken)
  PushVerdict verdict = PushVerdict::kAck;
  std::string reason;  // kNack: the error sentence
};

// The storage side: the push lane of each topic.
class PushLane {
 public:
  virtual ~PushLane() = default;
  // Up to `max` (>= 1) due messages of the topic's push lane, in pull order, each now CONSUMING
  // until now + its callback's timeout + `margin`. Paused or unknown topic: an empty list.
  virtual void TakeDue(std::string topic, int32_t max, Millis margin,
                       backend::Callback<Result<std::vector<PushJob>>> done) = 0;
  // Ends attempts in one atomic write. A result for a message no longer in that attempt (its
  // lease ran out and another attempt took it, or it was deleted) changes nothing.
  virtual void Finish(std::string topic, std::vector<PushResult> results,
                      backend::Callback<Status> done) = 0;
};

struct PushOutcome {
  bool ok = false;
  bool busy = false;  // not attempted (the target's bounded queue was full): released
  std::string error;  // when !ok: "HTTP 500 Internal Server Error: ...", "timed out after 5000 ms"
  // Not attempted because the lease would have run out before the call's timeout (implies
  // busy): released, whoever takes the message next pushes it.
  bool lease_short = false;
};

// The transports: one attempt to one target.
class PushTransport {
 public:
  virtual ~PushTransport() = default;
  // Calls `job.callback` (set) with the message. `done` runs exactly once, inline or on any
  // thread, at the latest at the callback's timeout.
  virtual void Push(const PushJob& job, UniqueFunction<void(PushOutcome)> done) = 0;
};

// What the scheduler reports about each attempt, for metrics (service/push_metrics.h).
class PushObserver {
 public:
  virtual ~PushObserver() = default;
  // An attempt starts: `job` as taken (job.message.record.retry is its number).
  virtual void OnStart(const PushJob& job) = 0;
  // It ended after `elapsed` (from OnStart) with `outcome`.
  virtual void OnOutcome(const PushJob& job, const PushOutcome& outcome,
                         std::chrono::nanoseconds elapsed) = 0;
};

struct PushOptions {
  int32_t max_in_flight = 1024;  // pushes at once, over every topic
  int32_t take_batch = 100;      // most messages one take asks for
  // A lease is the callback's timeout plus this. The transport keeps part of it for writing the
  // outcome (push::kOutcomeReserve, 1 s, in the app's transport); the rest is how long a call
  // may wait to start (a starved node, a target at its in-flight limit) before it is released.
  Millis lease_margin{2'000};
};

class PushScheduler {
 public:
  // REQUIRES: lane, transport and observer (may be null) outlive the scheduler; the transport
  // does not call back after it is destroyed (Shutdown, then stop the transport, then destroy).
  PushScheduler(PushLane* lane, PushTransport* transport, PushOptions options,
                PushObserver* observer = nullptr);
  ~PushScheduler();  // Shutdown(0)
  PushScheduler(const PushScheduler&) = delete;
  PushScheduler& operator=(const PushScheduler&) = delete;

  // Push work of `topic` may be due: takes it (now, or when a take or room frees up).
  void Wake(std::string_view topic) CQ_EXCLUDES(mu_);

  // Stops taking, then waits up to `wait` for the pushes in flight to end, then (without a
  // bound) for the takes and outcome writes under way, which are storage calls. Failures of
  // pushes still in flight afterwards are dropped (most are attempts the transport cut short as
  // it stopped): those messages are pushed again at the end of their leases; successes and
  // releases are still written.
  void Shutdown(Millis wait) CQ_EXCLUDES(mu_);
  bool stopping() const CQ_EXCLUDES(mu_) {
    base::MutexLock lock(mu_);
    return shutdown_;
  }

  struct Stats {
    // Pushes started and not ended, plus room reserved by takes still answering.
    int64_t in_flight = 0;
    int64_t acked = 0;
    int64_t nacked = 0;
    int64_t released = 0;
    int64_t lease_short = 0;    // of the released: not started, their leases were too short
    int64_t finish_errors = 0;  // outcome writes the lane refused (the leases run out instead)
    int64_t dropped = 0;        // outcomes that came after Shutdown gave up waiting
  };
  Stats stats() const CQ_EXCLUDES(mu_);

  // Topics the scheduler keeps state for: those with a take, pushes or an outcome write under
  // way. A topic's state goes when the last of them ends (a wake brings it back), so topics
  // pushed to once (per-order topics) cost nothing afterwards.
  size_t topics() const CQ_EXCLUDES(mu_);

 private:
  struct TopicState {
    bool taking = false;              // a TakeDue is outstanding
    bool again = false;               // woken while taking, or starved of room: take again
    bool finishing = false;           // a Finish is outstanding
    int64_t pushing = 0;              // pushes started and not completed
    std::vector<PushResult> results;  // outcomes waiting for the next Finish
  };
  using Topics = std::map<std::string, TopicState, std::less<>>;

  void OnTaken(const std::string& topic, int32_t asked, Result<std::vector<PushJob>> res)
      CQ_EXCLUDES(mu_);
  void Complete(const std::string& topic, PushResult result) CQ_EXCLUDES(mu_);
  void StartFinish(const std::string& topic) CQ_EXCLUDES(mu_);
  void OnFinished(const std::string& topic, const Status& s) CQ_EXCLUDES(mu_);
  // Topics starved of room, now that some is free; clears their flag.
  std::vector<std::string> TakeStarved() CQ_REQUIRES(mu_);
  // Forgets a topic with nothing under way (its next Wake starts afresh).
  void EraseIfIdle(Topics::iterator it) CQ_REQUIRES(mu_);

  void StartPush(const std::string& topic, PushJob job);

  PushLane* const lane_;
  PushTransport* const transport_;
  const PushOptions options_;
  PushObserver* const observer_;

  mutable base::Mutex mu_;
  base::CondVar idle_;                // signalled when in_flight_ and every finishing flag drop
  Topics topics_ CQ_GUARDED_BY(mu_);  // topics with something under way (EraseIfIdle)
  std::set<std::string> starved_ CQ_GUARDED_BY(mu_);
  int64_t in_flight_ CQ_GUARDED_BY(mu_) = 0;  // reserved by takes plus pushes running
  int64_t finishing_ CQ_GUARDED_BY(mu_) = 0;  // Finish calls outstanding
  bool shutdown_ CQ_GUARDED_BY(mu_) = false;
  bool abandoned_ CQ_GUARDED_BY(mu_) = false;  // Shutdown's wait is over: failures are dropped
  int64_t taking_ CQ_GUARDED_BY(mu_) = 0;      // TakeDue calls outstanding
  Stats stats_ CQ_GUARDED_BY(mu_);
};

}  // namespace chronoq::service
