// LongPollWaiters: parked longPollingMsg requests, per topic, first come first served
// (API.md section 4). It listens to the backend's ReadyListener: when a topic may have
// consumable messages it pulls on behalf of the first parked request of that topic, answers it
// with what it got, and goes on with the next while messages keep coming; the first request that
// gets nothing stays parked at the head. The requests at the head are served together by one
// pull (their batches added up, the messages handed out in their order), so a burst drained for
// N waiting consumers costs one store write per N batches. One drain runs per topic at a time, so
// one message goes to one request. Before taking messages for a request it checks that the client
// is still connected. Timeouts are Scheduler timers (fake-clock friendly); nothing polls.
//
// Concurrency: all methods are thread-safe. Pulls run on the thread that woke the topic (an
// HTTP thread after a send or nack, the scheduler thread at a trigger time); `done` callbacks run
// there too, never under the internal lock.
//
// Safety net: every kRecheckEvery, each topic with parked requests is handed to the backend's
// Recheck (a no-op but on backends whose news can be lost, docs/redis.md), unless the topic had
// news (OnReady: a publication, a wake) within the last kRecheckEvery: the drain that news
// started read the topic's state after it, so a busy topic costs no script every 5 s; a quiet
// one is rechecked (a lost publication costs a parked request at most 2 x kRecheckEvery).
//
// Lifecycle: Shutdown() answers every parked request with an empty list and makes later Park()
// answer at once. Stop the Scheduler and detach from the backend before destroying.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <list>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "backend/queue_backend.h"
#include "base/clock.h"
#include "base/mutex.h"
#include "base/scheduler.h"
#include "base/thread_annotations.h"

namespace chronoq::service {

// One parked request, its values checked and defaults applied (by the QueueService).
struct PollSpec {
  std::string topic;
  int32_t batch = 1;
  std::optional<Millis> ack_timeout{};  // absent: the topic's
  Millis timeout{10'000};               // how long to stay parked
};

using LongPollDone = UniqueFunction<void(Result<std::vector<core::Message>>)>;

class LongPollWaiters final : public backend::ReadyListener {
 public:
  struct Waiter;

  // At most `max_parked` requests are parked at once, and `max_parked_per_topic` per topic; a
  // request beyond is answered at once with what one pull finds (usually nothing), so that
  // clients keep polling at their own pace and the server's connections stay bounded.
  LongPollWaiters(backend::QueueBackend* backend, const base::Clock* clock,
                  base::Scheduler* scheduler, size_t max_parked = SIZE_MAX,
                  size_t max_parked_per_topic = SIZE_MAX);
  ~LongPollWaiters() override;

  // Parks a request; `done` is called exactly once: with messages, with an empty list when the
  // timeout passes or on shutdown, or with the backend's error. `alive` tells whether the client
  // is still connected (nullptr: assume it is).
  std::shared_ptr<Waiter> Park(PollSpec req, std::function<bool()> alive, LongPollDone done)
      CQ_EXCLUDES(mu_);
  // The client went away: the request is answered (empty) if it is still parked.
  void Cancel(const std::shared_ptr<Waiter>& w) CQ_EXCLUDES(mu_);

  void OnReady(std::string_view topic) override CQ_EXCLUDES(mu_);
  void Shutdown() CQ_EXCLUDES(mu_);

  static constexpr Millis kRecheckEvery{5'000};
  // The parked requests at a topic's head are served by one pull of up to this many messages in
  // all (their batches added up; the first request whatever its batch): one store write for all.
  static constexpr size_t kMaxPullPerDrain = 1000;

  // Requests parked or being served.
  size_t parked() const { return parked_.load(); }
  // Topics whose parked requests are being served (a pull in flight) right now.
  size_t draining() const CQ_EXCLUDES(mu_);

 private:
  struct TopicQueue {
    std::list<std::shared_ptr<Waiter>> waiters;  // parked, not being served
    size_t count = 0;                            // parked or being served
    bool draining = false;
    bool rekick = false;        // woken during the drain: try again before stopping
    TimePoint news = kTimeMin;  // the last OnReady (Recheck skips a topic with recent news)
  };

  // `news`: called for the backend's news (OnReady), which the safety net counts.
  void Kick(const std::string& topic, bool news = false) CQ_EXCLUDES(mu_);
  void Drain(const std::string& topic) CQ_EXCLUDES(mu_);
  // Requests claimed by a drain for one pull, in their queue order.
  using Claimed = std::vector<std::shared_ptr<Waiter>>;
  // Handles the pull made for `claimed`; true when the drain should go on with the next requests.
  bool OnPulled(const std::string& topic, const Claimed& claimed,
                Result<std::vector<core::Message>> result) CQ_EXCLUDES(mu_);
  // Timeout (cancel_timer=false) or client gone (true).
  void Expire(const std::shared_ptr<Waiter>& w, bool cancel_timer) CQ_EXCLUDES(mu_);
  // Calls w's `done` unless it has run (it is moved out). Never under mu_: it may call back in.
  void Finish(const std::shared_ptr<Waiter>& w, Result<std::vector<core::Message>> result)
      CQ_EXCLUDES(mu_);
  // Marks `w` done and returns its timer. REQUIRES: mu_.
  base::TimerId MarkDone(Waiter& w) CQ_REQUIRES(mu_);
  void EraseIfIdle(const std::string& topic) CQ_REQUIRES(mu_);
  // Arms the safety net's timer unless it is armed. REQUIRES: mu_.
  void ArmRecheck() CQ_REQUIRES(mu_);
  void Recheck() CQ_EXCLUDES(mu_);

  backend::QueueBackend* const backend_;
  const base::Clock* const clock_;
  base::Scheduler* const scheduler_;
  const size_t max_parked_;
  const size_t max_parked_per_topic_;
  std::atomic<size_t> parked_{0};

  mutable base::Mutex mu_;
  std::unordered_map<std::string, TopicQueue> topics_ CQ_GUARDED_BY(mu_);
  bool shutdown_ CQ_GUARDED_BY(mu_) = false;
  base::TimerId recheck_timer_ CQ_GUARDED_BY(mu_) = 0;
};

// Identifies a parked request (to cancel it); null when the request was answered at once.
using LongPollTicket = std::shared_ptr<LongPollWaiters::Waiter>;

}  // namespace chronoq::service
