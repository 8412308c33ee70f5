#include "service/push_scheduler.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <memory>
#include <utility>

#include "base/log.h"

namespace chronoq::service {
namespace {

constexpr std::string_view kLog = "push";

}  // namespace

PushScheduler::PushScheduler(PushLane* lane, PushTransport* transport, PushOptions options,
                             PushObserver* observer)
    : lane_(lane), transport_(transport), options_(options), observer_(observer) {}

PushScheduler::~PushScheduler() { Shutdown(Millis(0)); }

void PushScheduler::Wake(std::string_view topic) {
  int32_t asked = 0;
  std::string name;
  {
    base::MutexLock lock(mu_);
    if (shutdown_) return;
    auto it = topics_.find(topic);
    if (it == topics_.end()) it = topics_.emplace(std::string(topic), TopicState{}).first;
    TopicState& st = it->second;
    if (st.taking) {
      st.again = true;
      return;
    }
    int64_t room = options_.max_in_flight - in_flight_;
    if (room <= 0) {
      starved_.insert(it->first);  // woken again as room frees
      EraseIfIdle(it);
      return;
    }
    asked = static_cast<int32_t>(std::min<int64_t>(room, options_.take_batch));
    in_flight_ += asked;  // reserved until the take answers
    ++taking_;
    st.taking = true;
    st.again = false;
    name = it->first;
  }
  lane_->TakeDue(name, asked, options_.lease_margin,
                 [this, name, asked](Result<std::vector<PushJob>> res) {
                   OnTaken(name, asked, std::move(res));
                 });
}

void PushScheduler::OnTaken(const std::string& topic, int32_t asked,
                            Result<std::vector<PushJob>> res) {
  std::vector<PushJob> jobs;
  if (res.has_value()) {
    jobs = std::move(*res);
  } else {
    // Storage trouble: the next wake (a send, a timer, a lease's end) tries again.
    CQ_LOG_WARN(kLog, "taking due pushes of topic '{}' failed: {}", topic, res.error().ToString());
  }
  bool again = false;
  bool stopping = false;
  std::vector<std::string> starved;
  {
    base::MutexLock lock(mu_);
    in_flight_ -= asked - static_cast<int64_t>(jobs.size());
    auto it = topics_.find(topic);
    TopicState& st = it->second;
    st.taking = false;
    st.pushing += static_cast<int64_t>(jobs.size());
    if (--taking_ == 0) idle_.SignalAll();
    // A full take may have left more behind; a wake during the take may have brought more.
    again =
        !shutdown_ && res.has_value() && (static_cast<int32_t>(jobs.size()) == asked || st.again);
    st.again = false;
    if (static_cast<int32_t>(jobs.size()) < asked) starved = TakeStarved();
    if (in_flight_ == 0 && finishing_ == 0) idle_.SignalAll();
    stopping = shutdown_;
    EraseIfIdle(it);  // a take that found nothing (`again` wakes it afresh)
  }
  // (A take that answers during Shutdown hands its messages back below; Shutdown waits for it.)
  for (PushJob& job : jobs) {
    if (stopping) {  // taken as the server stops: hand back without an attempt
      Complete(topic,
               PushResult{
                   job.message.record.msg_id, job.message.record.retry, PushVerdict::kRelease, {}});
      continue;
    }
    StartPush(topic, std::move(job));
  }
  if (again) Wake(topic);
  for (const std::string& t : starved) Wake(t);
}

void PushScheduler::StartPush(const std::string& topic, PushJob job) {
  const core::MessageRecord& r = job.message.record;
  PushResult result{r.msg_id, r.retry, PushVerdict::kAck, {}};
  if (!job.callback) {
    result.verdict = PushVerdict::kNack;
    result.reason = fmt::format("topic '{}' has no callback", topic);
    return Complete(topic, std::move(result));
  }
  if (observer_ != nullptr) observer_->OnStart(job);
  const auto start = std::chrono::steady_clock::now();
  // The transport reads the job during Push only; the observer needs it afterwards.
  auto held = std::make_shared<PushJob>(std::move(job));
  transport_->Push(*held,
                   [this, topic, held, start, result = std::move(result)](PushOutcome out) mutable {
                     if (observer_ != nullptr) {
                       observer_->OnOutcome(*held, out, std::chrono::steady_clock::now() - start);
                     }
                     if (out.busy) {
                       result.verdict = PushVerdict::kRelease;
                       if (out.lease_short) {
                         base::MutexLock lock(mu_);
                         ++stats_.lease_short;
                       }
                     } else if (!out.ok) {
                       result.verdict = PushVerdict::kNack;
                       result.reason = std::move(out.error);
                     }
                     Complete(topic, std::move(result));
                   });
}

void PushScheduler::Complete(const std::string& topic, PushResult result) {
  bool start = false;
  std::vector<std::string> starved;
  {
    base::MutexLock lock(mu_);
    --in_flight_;
    auto it = topics_.find(topic);
    TopicState& st = it->second;
    --st.pushing;
    if (abandoned_ && result.verdict == PushVerdict::kNack) {
      // Shutdown gave up waiting: most likely an attempt the transport cut short, whose outcome
      // is unknown. Not counted as a failure: the lease decides (pushed again when it ends).
      ++stats_.dropped;
      EraseIfIdle(it);
      return;
    }
    switch (result.verdict) {
      case PushVerdict::kAck:
        ++stats_.acked;
        break;
      case PushVerdict::kNack:
        ++stats_.nacked;
        break;
      case PushVerdict::kRelease:
        ++stats_.released;
        break;
    }
    st.results.push_back(std::move(result));
    start = !st.finishing;
    if (start) {
      st.finishing = true;
      ++finishing_;
    }
    if (!shutdown_) starved = TakeStarved();
  }
  if (start) StartFinish(topic);
  for (const std::string& t : starved) Wake(t);
}

void PushScheduler::StartFinish(const std::string& topic) {
  std::vector<PushResult> results;
  {
    base::MutexLock lock(mu_);
    results.swap(topics_.find(topic)->second.results);
  }
  lane_->Finish(topic, std::move(results), [this, topic](Status s) { OnFinished(topic, s); });
}

void PushScheduler::OnFinished(const std::string& topic, const Status& s) {
  bool more = false;
  {
    base::MutexLock lock(mu_);
    if (!s.ok()) ++stats_.finish_errors;
    auto it = topics_.find(topic);
    TopicState& st = it->second;
    more = !st.results.empty();
    if (!more) {
      st.finishing = false;
      --finishing_;
      if (finishing_ == 0) idle_.SignalAll();  // Shutdown waits for the writes alone too
      EraseIfIdle(it);
    }
  }
  if (!s.ok()) {
    CQ_LOG_WARN(kLog,
                "writing push outcomes of topic '{}' failed: {} (retried at the end of "
                "their leases)",
                topic, s.ToString());
  }
  if (more) StartFinish(topic);
}

void PushScheduler::EraseIfIdle(Topics::iterator it) {
  const TopicState& st = it->second;
  if (!st.taking && !st.finishing && st.pushing == 0 && st.results.empty()) topics_.erase(it);
}

size_t PushScheduler::topics() const {
  base::MutexLock lock(mu_);
  return topics_.size();
}

std::vector<std::string> PushScheduler::TakeStarved() {
  std::vector<std::string> out(starved_.begin(), starved_.end());
  starved_.clear();
  return out;
}

void PushScheduler::Shutdown(Millis wait) {
  base::MutexLock lock(mu_);
  shutdown_ = true;
  starved_.clear();
  auto deadline = std::chrono::steady_clock::now() + wait;
  while (in_flight_ > 0 || finishing_ > 0) {
    if (!idle_.WaitUntil(mu_, deadline)) break;
  }
  abandoned_ = true;
  // Takes and outcome writes under way end in bounded time (storage calls); the lane must not
  // call back into a destroyed scheduler.
  while (finishing_ > 0 || taking_ > 0) idle_.Wait(mu_);
}

PushScheduler::Stats PushScheduler::stats() const {
  base::MutexLock lock(mu_);
  Stats stats = stats_;
  stats.in_flight = in_flight_;
  return stats;
}

}  // namespace chronoq::service
