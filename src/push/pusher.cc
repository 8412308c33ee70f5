// Pusher: admission per target, the queues, the immediate answers and shutdown. The transports
// (transport.h) do the I/O.

#include "push/pusher.h"

#include <fmt/format.h>
#include <pthread.h>

#include <algorithm>
#include <atomic>
#include <deque>
#include <thread>
#include <unordered_map>
#include <unordered_set>

#include "base/check.h"
#include "base/log.h"
#include "base/mutex.h"
#include "push/transport.h"

namespace chronoq::push {
namespace {

using Clock = std::chrono::steady_clock;

// True while the thread is inside Pusher::Push: an outcome that a transport reports there (a
// call that failed before any I/O) is moved to the answer thread, as the contract promises.
thread_local bool t_in_push = false;

std::chrono::microseconds Since(Clock::time_point t) {
  return std::chrono::duration_cast<std::chrono::microseconds>(Clock::now() - t);
}

}  // namespace

// One attempt from Push to its outcome. Shared by the Pusher and the transport's completion.
struct Record {
  std::string key;
  PushCall call;  // moved into the transport at start
  UniqueFunction<void(PushOutcome)> done;
  Clock::time_point enqueued;
  Clock::time_point started;
  std::atomic<bool> finished{false};  // the first outcome wins
};
using RecordPtr = std::shared_ptr<Record>;

// Why `call` must not start at `now` (its lease ends before its timeout and the reserve for its
// outcome would); empty when it may start.
std::string LeaseTooShort(const PushCall& call, TimePoint now) {
  if (call.lease_end == kTimeMax ||
      SaturatingAdd(SaturatingAdd(now, call.timeout), call.outcome_reserve) <= call.lease_end) {
    return {};
  }
  const int64_t left = (call.lease_end - now).count();
  if (left <= 0) return fmt::format("push not attempted: its lease ended {} ms ago", -left);
  return fmt::format(
      "push not attempted: its lease ends in {} ms, too soon for the call's timeout of {} ms and "
      "{} ms to write its outcome",
      left, call.timeout.count(), call.outcome_reserve.count());
}

PushOutcome LeaseShortOutcome(std::string sentence) {
  PushOutcome out;
  out.busy = true;
  out.lease_short = true;
  out.error = std::move(sentence);
  return out;
}

struct Pusher::Impl {
  explicit Impl(PusherOptions opts);
  ~Impl();

  void Push(PushCall call, UniqueFunction<void(PushOutcome)> done) CQ_EXCLUDES(mu_);
  void Start(RecordPtr rec);
  void Finish(const RecordPtr& rec, PushOutcome outcome) CQ_EXCLUDES(mu_);
  void Answer(UniqueFunction<void(PushOutcome)> done, PushOutcome outcome) CQ_EXCLUDES(amu_);
  void AnswerLoop() CQ_EXCLUDES(amu_);
  void Shutdown() CQ_EXCLUDES(mu_, amu_);
  internal::Transport* TransportFor(Kind kind);

  struct Target {
    int in_flight = 0;
    std::deque<RecordPtr> queue;
  };

  // Immutable after construction.
  const PusherOptions options_;
  const base::Clock* const clock_;  // options_.clock, else the system clock
  std::unique_ptr<internal::Transport> http_;
  std::unique_ptr<internal::Transport> grpc_;
  std::unique_ptr<internal::Transport> kafka_;

  mutable base::Mutex mu_;
  base::CondVar idle_cv_;  // signalled when running_ becomes empty
  std::unordered_map<std::string, Target> targets_ CQ_GUARDED_BY(mu_);
  // Invariant: running_.size() == sum of targets_[*].in_flight.
  std::unordered_set<RecordPtr> running_ CQ_GUARDED_BY(mu_);
  bool stopping_ CQ_GUARDED_BY(mu_) = false;
  bool stopped_ CQ_GUARDED_BY(mu_) = false;

  // The answer thread: outcomes decided without I/O (busy, invalid, shut down) and those a
  // transport reported inside Push.
  base::Mutex amu_;
  base::CondVar acv_;
  std::deque<std::pair<UniqueFunction<void(PushOutcome)>, PushOutcome>> answers_
      CQ_GUARDED_BY(amu_);
  bool answering_ CQ_GUARDED_BY(amu_) = false;  // a done of answers_ is running
  base::CondVar drained_cv_;                    // answers_ empty and none running
  bool answer_stop_ CQ_GUARDED_BY(amu_) = false;
  std::thread answer_thread_;
};

Pusher::Impl::Impl(PusherOptions opts)
    : options_(std::move(opts)),
      clock_(options_.clock != nullptr ? options_.clock : base::SystemClock::Get()) {
  http_ = internal::NewHttpTransport(options_);
  grpc_ = internal::NewGrpcTransport(options_);
  kafka_ = internal::NewKafkaTransport(options_);
  answer_thread_ = std::thread([this] {
    pthread_setname_np(pthread_self(), "cq-push-answer");
    AnswerLoop();
  });
}

internal::Transport* Pusher::Impl::TransportFor(Kind kind) {
  switch (kind) {
    case Kind::kHttp:
      return http_.get();
    case Kind::kGrpc:
      return grpc_.get();
    case Kind::kKafka:
      return kafka_.get();
  }
  return http_.get();
}

void Pusher::Impl::Push(PushCall call, UniqueFunction<void(PushOutcome)> done) {
  if (Status st = ValidatePushCall(call); !st.ok()) {
    PushOutcome out;
    out.error = st.message();
    out.code = call.kind == Kind::kGrpc ? -1 : 0;
    Answer(std::move(done), std::move(out));
    return;
  }
  // A node that took the message long ago (starved between the take and now) must not start an
  // attempt its lease would not cover: the message goes back and whoever takes it next pushes.
  if (std::string late = LeaseTooShort(call, clock_->Now()); !late.empty()) {
    Answer(std::move(done), LeaseShortOutcome(std::move(late)));
    return;
  }
  auto rec = std::make_shared<Record>();
  rec->key = TargetKey(call);
  rec->call = std::move(call);
  rec->done = std::move(done);
  rec->enqueued = Clock::now();
  PushOutcome refused;
  {
    base::MutexLock lock(mu_);
    if (stopping_) {
      refused.busy = true;
      refused.error = "push not attempted: the pusher is shutting down";
    } else {
      Target& t = targets_[rec->key];
      if (t.in_flight < options_.max_in_flight_per_target) {
        ++t.in_flight;
        running_.insert(rec);
      } else if (static_cast<int>(t.queue.size()) < options_.max_queued_per_target) {
        t.queue.push_back(std::move(rec));
        return;
      } else {
        refused.busy = true;
        refused.error = fmt::format("target {} busy: {} pushes in flight, {} queued", rec->key,
                                    t.in_flight, t.queue.size());
      }
    }
  }
  if (refused.busy) {
    Answer(std::move(rec->done), std::move(refused));
    return;
  }
  t_in_push = true;
  Start(std::move(rec));
  t_in_push = false;
}

// REQUIRES: rec is in running_ (counted in its target's in_flight).
void Pusher::Impl::Start(RecordPtr rec) {
  rec->started = Clock::now();
  PushCall call = std::move(rec->call);
  internal::Transport* transport = TransportFor(call.kind);
  transport->Start(std::move(call),
                   [this, rec](PushOutcome outcome) { Finish(rec, std::move(outcome)); });
}

void Pusher::Impl::Finish(const RecordPtr& rec, PushOutcome outcome) {
  if (rec->finished.exchange(true)) return;
  outcome.latency = Since(rec->started);
  outcome.queued =
      std::chrono::duration_cast<std::chrono::microseconds>(rec->started - rec->enqueued);
  RecordPtr next;
  std::vector<std::pair<RecordPtr, std::string>> expired;
  {
    base::MutexLock lock(mu_);
    running_.erase(rec);
    auto it = targets_.find(rec->key);
    CQ_CHECK(it != targets_.end(), "push target {} lost its entry", rec->key);
    Target& t = it->second;
    --t.in_flight;
    // Calls that waited until their lease no longer covers their timeout are answered busy,
    // without an attempt.
    const TimePoint now = clock_->Now();
    while (!t.queue.empty() && !stopping_) {
      std::string late = LeaseTooShort(t.queue.front()->call, now);
      if (late.empty()) break;
      expired.emplace_back(std::move(t.queue.front()), std::move(late));
      t.queue.pop_front();
    }
    if (!t.queue.empty() && !stopping_) {
      next = std::move(t.queue.front());
      t.queue.pop_front();
      ++t.in_flight;
      running_.insert(next);
    } else if (t.in_flight == 0 && t.queue.empty()) {
      targets_.erase(it);
    }
    if (running_.empty()) idle_cv_.SignalAll();
  }
  for (auto& [r, late] : expired) {
    Answer(std::move(r->done),
           LeaseShortOutcome(fmt::format(
               "{} (waited {} ms in the queue of target {})", late,
               std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - r->enqueued)
                   .count(),
               r->key)));
  }
  if (next) Start(std::move(next));
  if (t_in_push) {
    Answer(std::move(rec->done), std::move(outcome));
  } else {
    rec->done(std::move(outcome));
  }
}

void Pusher::Impl::Answer(UniqueFunction<void(PushOutcome)> done, PushOutcome outcome) {
  base::MutexLock lock(amu_);
  answers_.emplace_back(std::move(done), std::move(outcome));
  acv_.Signal();
}

void Pusher::Impl::AnswerLoop() {
  base::MutexLock lock(amu_);
  while (true) {
    while (answers_.empty() && !answer_stop_) acv_.Wait(amu_);
    if (answers_.empty()) return;  // stopping and drained
    auto [done, outcome] = std::move(answers_.front());
    answers_.pop_front();
    answering_ = true;
    lock.Unlock();
    done(std::move(outcome));
    lock.Lock();
    answering_ = false;
    if (answers_.empty()) drained_cv_.SignalAll();
  }
}

void Pusher::Impl::Shutdown() {
  std::deque<RecordPtr> queued;
  {
    base::MutexLock lock(mu_);
    if (stopped_) return;
    stopping_ = true;
    for (auto& [key, t] : targets_) {
      for (auto& r : t.queue) queued.push_back(std::move(r));
      t.queue.clear();
    }
  }
  for (auto& r : queued) {
    PushOutcome out;
    out.busy = true;
    out.error = "push not attempted: the pusher is shutting down";
    Answer(std::move(r->done), std::move(out));
  }
  std::vector<RecordPtr> left;
  {
    base::MutexLock lock(mu_);
    const auto deadline = Clock::now() + options_.shutdown_grace;
    while (!running_.empty()) {
      if (!idle_cv_.WaitUntil(mu_, deadline)) break;
    }
    left.assign(running_.begin(), running_.end());
  }
  if (!left.empty()) {
    CQ_LOG_WARN("cq.push", "shutdown: {} pushes still in flight after {} ms; ending them",
                left.size(), options_.shutdown_grace.count());
  }
  // No transport callback runs after these return.
  http_->Stop();
  grpc_->Stop();
  kafka_->Stop();
  for (auto& r : left) {
    PushOutcome out;
    out.error = "push in flight when the pusher shut down: outcome unknown";
    Finish(r, std::move(out));
  }
  {
    base::MutexLock lock(amu_);
    while (!answers_.empty() || answering_) drained_cv_.Wait(amu_);
  }
  base::MutexLock lock(mu_);
  stopped_ = true;
}

Pusher::Impl::~Impl() {
  {
    base::MutexLock lock(amu_);
    answer_stop_ = true;
    acv_.SignalAll();
  }
  answer_thread_.join();
}

Pusher::Pusher(PusherOptions options) : impl_(std::make_unique<Impl>(std::move(options))) {}

Pusher::~Pusher() { Shutdown(); }

void Pusher::Push(PushCall call, UniqueFunction<void(PushOutcome)> done) {
  impl_->Push(std::move(call), std::move(done));
}

int Pusher::InFlight(std::string_view target_key) const {
  base::MutexLock lock(impl_->mu_);
  auto it = impl_->targets_.find(std::string(target_key));
  return it == impl_->targets_.end() ? 0 : it->second.in_flight;
}

int Pusher::Queued(std::string_view target_key) const {
  base::MutexLock lock(impl_->mu_);
  auto it = impl_->targets_.find(std::string(target_key));
  return it == impl_->targets_.end() ? 0 : static_cast<int>(it->second.queue.size());
}

std::vector<TargetLoad> Pusher::Targets() const {
  std::vector<TargetLoad> out;
  base::MutexLock lock(impl_->mu_);
  for (const auto& [key, t] : impl_->targets_) {
    out.push_back({key, t.in_flight, static_cast<int>(t.queue.size())});
  }
  std::sort(out.begin(), out.end(),
            [](const TargetLoad& a, const TargetLoad& b) { return a.key < b.key; });
  return out;
}

void Pusher::Shutdown() { impl_->Shutdown(); }

}  // namespace chronoq::push
