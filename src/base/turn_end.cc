#include "base/turn_end.h"

#include <utility>

#include "base/check.h"

namespace chronoq::base {
namespace {

thread_local UniqueFunction<void(UniqueFunction<void()>)> t_poster;

}  // namespace

void SetTurnEndPoster(UniqueFunction<void(UniqueFunction<void()>)> poster) {
  t_poster = std::move(poster);
}

bool HasTurnEnd() { return static_cast<bool>(t_poster); }

void RunAtTurnEnd(UniqueFunction<void()> fn) {
  CQ_CHECK(HasTurnEnd(), "no event loop on this thread takes work for its turn's end");
  t_poster(std::move(fn));
}

}  // namespace chronoq::base
