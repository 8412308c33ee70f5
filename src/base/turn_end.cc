#include "base/turn_end.h"

#include <utility>
#include <vector>

#include "base/check.h"

namespace chronoq::base {
namespace {

struct Turn {
  UniqueFunction<void(UniqueFunction<void()>)> poster;
  std::vector<UniqueFunction<void()>> pending;  // work for this turn's end
  bool posted = false;                          // a RunPending is queued in the loop
  bool soon = false;                            // EndTurnSoon since the last run
};
thread_local Turn t_turn;

void RunPending() {
  t_turn.soon = false;
  std::vector<UniqueFunction<void()>> now;
  now.swap(t_turn.pending);
  for (auto& fn : now) fn();
}

}  // namespace

void SetTurnEndPoster(UniqueFunction<void(UniqueFunction<void()>)> poster) {
  t_turn.poster = std::move(poster);
  t_turn.pending.clear();
  t_turn.posted = false;
  t_turn.soon = false;
}

bool HasTurnEnd() { return static_cast<bool>(t_turn.poster); }

void RunAtTurnEnd(UniqueFunction<void()> fn) {
  CQ_CHECK(HasTurnEnd(), "no event loop on this thread takes work for its turn's end");
  t_turn.pending.push_back(std::move(fn));
  if (t_turn.posted) return;
  t_turn.posted = true;
  t_turn.poster([] {
    t_turn.posted = false;
    RunPending();
  });
}

void EndTurnSoon() { t_turn.soon = true; }

void TurnSafePoint() {
  if (t_turn.soon) RunPending();
}

}  // namespace chronoq::base
