#include "service/long_poll.h"

#include <algorithm>
#include <optional>

#include "base/check.h"

namespace chronoq::service {

using Messages = std::vector<core::Message>;

struct LongPollWaiters::Waiter {
  enum class State { kParked, kClaimed, kDone };
  PollSpec req;
  std::function<bool()> alive;
  LongPollDone done;
  // Guarded by the owner's mu_ (not annotated: the analysis cannot name another object's lock):
  State state = State::kParked;
  bool expired = false;  // timed out or cancelled while claimed by a drain
  base::TimerId timer = 0;
  std::list<std::shared_ptr<Waiter>>::iterator pos;  // valid while kParked
};

LongPollWaiters::LongPollWaiters(backend::QueueBackend* backend, const base::Clock* clock,
                                 base::Scheduler* scheduler, size_t max_parked,
                                 size_t max_parked_per_topic)
    : backend_(backend),
      clock_(clock),
      scheduler_(scheduler),
      max_parked_(max_parked),
      max_parked_per_topic_(max_parked_per_topic) {}

LongPollWaiters::~LongPollWaiters() { Shutdown(); }

base::TimerId LongPollWaiters::MarkDone(Waiter& w) {
  w.state = Waiter::State::kDone;
  parked_.fetch_sub(1);
  auto it = topics_.find(w.req.topic);
  if (it != topics_.end() && it->second.count > 0) --it->second.count;
  base::TimerId t = w.timer;
  w.timer = 0;
  return t;
}

void LongPollWaiters::EraseIfIdle(const std::string& topic) {
  auto it = topics_.find(topic);
  if (it != topics_.end() && it->second.waiters.empty() && !it->second.draining) topics_.erase(it);
}

void LongPollWaiters::Finish(const std::shared_ptr<Waiter>& w, Result<Messages> result) {
  LongPollDone done = std::move(w->done);
  if (done) done(std::move(result));
}

std::shared_ptr<LongPollWaiters::Waiter> LongPollWaiters::Park(PollSpec req,
                                                               std::function<bool()> alive,
                                                               LongPollDone done) {
  auto w = std::make_shared<Waiter>();
  w->req = std::move(req);
  w->alive = std::move(alive);
  w->done = std::move(done);
  std::string topic = w->req.topic;
  bool full = false;
  // Decided under the lock: once it is released, a drain on another thread may claim and answer
  // the parked request at any time, so its state must not be read here any more.
  bool parked = false;
  {
    base::MutexLock lock(mu_);
    auto it = topics_.find(topic);
    full = !shutdown_ && (parked_.load() >= max_parked_ ||
                          (it != topics_.end() && it->second.count >= max_parked_per_topic_));
    if (!shutdown_ && !full) {
      TopicQueue& q = topics_[topic];
      w->pos = q.waiters.insert(q.waiters.end(), w);
      ++q.count;
      parked_.fetch_add(1);
      TimePoint deadline = SaturatingAdd(clock_->Now(), w->req.timeout);
      w->timer = scheduler_->Schedule(deadline, [this, w] { Expire(w, /*cancel_timer=*/false); });
      ArmRecheck();
      parked = true;
    } else {
      w->state = Waiter::State::kDone;
    }
  }
  if (full) {  // answered at once with what one pull finds
    backend_->Pull(backend::PullRequest{topic, w->req.batch, w->req.ack_timeout},
                   [this, w](Result<Messages> r) { Finish(w, std::move(r)); });
    return w;
  }
  if (!parked) {
    Finish(w, Messages{});
    return w;
  }
  backend_->WatchTopic(topic);
  // Parked first, then asked: news of readiness after this point kicks the queue.
  if (!backend_->KnownIdle(topic)) Kick(topic);
  return w;
}

void LongPollWaiters::ArmRecheck() {
  if (recheck_timer_ != 0) return;
  recheck_timer_ =
      scheduler_->Schedule(SaturatingAdd(clock_->Now(), kRecheckEvery), [this] { Recheck(); });
}

void LongPollWaiters::Recheck() {
  std::vector<std::string> parked_on;
  {
    base::MutexLock lock(mu_);
    recheck_timer_ = 0;
    if (shutdown_) return;
    const TimePoint quiet_since = clock_->Now() - kRecheckEvery;
    for (const auto& [topic, q] : topics_) {
      if (!q.waiters.empty() && q.news <= quiet_since) parked_on.push_back(topic);
    }
    if (parked_.load() > 0) ArmRecheck();
  }
  for (const std::string& topic : parked_on) backend_->Recheck(topic);
}

size_t LongPollWaiters::draining() const {
  base::MutexLock lock(mu_);
  size_t n = 0;
  for (const auto& [topic, q] : topics_) n += q.draining ? 1 : 0;
  return n;
}

void LongPollWaiters::Cancel(const std::shared_ptr<Waiter>& w) { Expire(w, /*cancel_timer=*/true); }

void LongPollWaiters::Expire(const std::shared_ptr<Waiter>& w, bool cancel_timer) {
  base::TimerId timer = 0;
  {
    base::MutexLock lock(mu_);
    if (w->state == Waiter::State::kClaimed) {
      w->expired = true;  // the drain answers it
      return;
    }
    if (w->state != Waiter::State::kParked) return;
    auto it = topics_.find(w->req.topic);
    CQ_CHECK(it != topics_.end(), "parked waiter without a topic queue");
    it->second.waiters.erase(w->pos);
    timer = MarkDone(*w);
    EraseIfIdle(w->req.topic);
  }
  if (cancel_timer && timer != 0) scheduler_->Cancel(timer);
  Finish(w, Messages{});
}

void LongPollWaiters::OnReady(std::string_view topic) {
  if (parked_.load() == 0) return;
  Kick(std::string(topic), /*news=*/true);
}

void LongPollWaiters::Kick(const std::string& topic, bool news) {
  {
    base::MutexLock lock(mu_);
    auto it = topics_.find(topic);
    if (it == topics_.end()) return;
    if (news) it->second.news = clock_->Now();
    if (it->second.draining) {
      // Even when no request is parked: the one being served may get nothing from a pull that
      // began before this news, and must then be tried again.
      it->second.rekick = true;
      return;
    }
    if (it->second.waiters.empty()) return;
    it->second.draining = true;
  }
  Drain(topic);
}

void LongPollWaiters::Drain(const std::string& topic) {
  for (;;) {
    // The parked requests at the head, in their order, up to kMaxPullPerDrain messages in all,
    // are served by one pull (one store write for all of them), as long as they ask for the same
    // ack timeout (the first request is always served).
    Claimed claimed;
    std::vector<std::pair<std::shared_ptr<Waiter>, base::TimerId>> gone;
    size_t want = 0;
    {
      base::MutexLock lock(mu_);
      TopicQueue& q = topics_[topic];
      q.rekick = false;
      while (!q.waiters.empty()) {
        std::shared_ptr<Waiter> head = q.waiters.front();
        const size_t batch = static_cast<size_t>(std::max(1, head->req.batch));
        if (!claimed.empty() && (want + batch > kMaxPullPerDrain ||
                                 head->req.ack_timeout != claimed.front()->req.ack_timeout)) {
          break;
        }
        q.waiters.pop_front();
        if (head->alive && !head->alive()) {
          gone.emplace_back(head, MarkDone(*head));  // client left: take nothing for it
          continue;
        }
        head->state = Waiter::State::kClaimed;
        want += batch;
        claimed.push_back(std::move(head));
      }
      if (claimed.empty()) {
        q.draining = false;
        EraseIfIdle(topic);
      }
    }
    for (auto& [g, timer] : gone) {
      if (timer != 0) scheduler_->Cancel(timer);
      Finish(g, Messages{});
    }
    if (claimed.empty()) return;

    // The pull may complete inline or on another thread; whichever side comes second handles it,
    // so inline completions loop here instead of recursing.
    struct Step {
      std::atomic<int> state{0};  // 1: result stored, 2: caller returned
      std::optional<Result<Messages>> result;
    };
    auto step = std::make_shared<Step>();
    std::optional<Millis> ack_timeout = claimed.front()->req.ack_timeout;
    auto shared_claimed = std::make_shared<Claimed>(std::move(claimed));
    backend_->Pull(backend::PullRequest{topic, static_cast<int32_t>(want), ack_timeout},
                   [this, step, shared_claimed, topic](Result<Messages> r) {
                     step->result.emplace(std::move(r));
                     if (step->state.exchange(1) == 2) {
                       if (OnPulled(topic, *shared_claimed, std::move(*step->result))) {
                         Drain(topic);
                       }
                     }
                   });
    if (step->state.exchange(2) != 1) return;  // completes asynchronously
    if (!OnPulled(topic, *shared_claimed, std::move(*step->result))) return;
  }
}

bool LongPollWaiters::OnPulled(const std::string& topic, const Claimed& claimed,
                               Result<Messages> result) {
  // Who gets what: the messages in order, each request up to its batch; a backend error goes to
  // the first request alone (it stops the drain; the others wait for the next wake-up or their
  // timeout, as every parked request does).
  std::vector<Result<Messages>> answers;
  answers.reserve(claimed.size());
  bool full = result.has_value();
  if (!result.has_value()) {
    answers.emplace_back(std::move(result).error());
  } else if (claimed.size() == 1) {
    full = !result->empty() &&
           result->size() >= static_cast<size_t>(std::max(1, claimed.front()->req.batch));
    answers.push_back(std::move(result));
  } else {
    Messages& all = *result;
    size_t next = 0;
    for (const std::shared_ptr<Waiter>& w : claimed) {
      const size_t batch = static_cast<size_t>(std::max(1, w->req.batch));
      const size_t n = std::min(batch, all.size() - next);
      full = full && n == batch;
      Messages mine(std::make_move_iterator(all.begin() + static_cast<ptrdiff_t>(next)),
                    std::make_move_iterator(all.begin() + static_cast<ptrdiff_t>(next + n)));
      next += n;
      answers.emplace_back(std::move(mine));
    }
  }
  const bool got = answers.front().has_value() && !answers.front()->empty();
  // A request answered: with messages, or with the error; the others of a short pull got
  // nothing and go back to the head, in their order, unless their time is up.
  auto answered = [&](size_t i) {
    return i < answers.size() && (!answers[i].has_value() || !answers[i]->empty());
  };
  bool again;
  std::vector<std::pair<size_t, base::TimerId>> finish;  // index into claimed, timer
  {
    base::MutexLock lock(mu_);
    TopicQueue& q = topics_[topic];
    auto back = q.waiters.begin();  // where the next request put back goes
    for (size_t i = 0; i < claimed.size(); ++i) {
      Waiter& w = *claimed[i];
      if (answered(i)) {
        finish.emplace_back(i, MarkDone(w));
      } else if (w.expired || shutdown_) {
        finish.emplace_back(i, MarkDone(w));
      } else {
        w.state = Waiter::State::kParked;
        w.pos = q.waiters.insert(back, claimed[i]);
        back = std::next(w.pos);
      }
    }
    // A full pull may have left more behind. A short one took everything consumable at that
    // moment: the drain goes on only if news came meanwhile. A backend error stops it.
    again = full || (got && q.rekick && !q.waiters.empty()) ||
            (!got && answers.front().has_value() && q.rekick && !q.waiters.empty());
    if (!again) {
      q.draining = false;
      EraseIfIdle(topic);
    }
  }
  for (auto& [i, timer] : finish) {
    if (timer != 0) scheduler_->Cancel(timer);
    Finish(claimed[i], answered(i) ? std::move(answers[i]) : Result<Messages>(Messages{}));
  }
  return again;
}

void LongPollWaiters::Shutdown() {
  std::vector<std::pair<std::shared_ptr<Waiter>, base::TimerId>> all;
  base::TimerId recheck = 0;
  {
    base::MutexLock lock(mu_);
    shutdown_ = true;
    std::swap(recheck, recheck_timer_);
    for (auto it = topics_.begin(); it != topics_.end();) {
      for (auto& w : it->second.waiters) all.emplace_back(w, MarkDone(*w));
      it->second.waiters.clear();
      it = it->second.draining ? std::next(it) : topics_.erase(it);
    }
  }
  if (recheck != 0) scheduler_->Cancel(recheck);
  for (auto& [w, timer] : all) {
    if (timer != 0) scheduler_->Cancel(timer);
    Finish(w, Messages{});
  }
}

}  // namespace chronoq::service
