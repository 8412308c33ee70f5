#include "engine/far_times.h"

#include <algorithm>
#include <iterator>

#include "base/check.h"

namespace chronoq::engine {

namespace {

constexpr uint64_t kSpan = uint64_t{1} << 32;  // a run's offsets are below this

// x - base as an offset clamped to [0, kSpan]: where x falls among a run's offsets.
uint64_t OffsetOf(int64_t x, int64_t base) {
  if (x <= base) return 0;
  return std::min(static_cast<uint64_t>(x) - static_cast<uint64_t>(base), kSpan);
}

using Offsets = std::vector<uint32_t>;

// The first offset >= off (off may be kSpan: the end).
Offsets::const_iterator LowerBound(const Offsets& v, uint64_t off) {
  return std::lower_bound(v.begin(), v.end(), off,
                          [](uint32_t a, uint64_t b) { return uint64_t{a} < b; });
}

// Capacity for `need` offsets: grown by a quarter at a time, so that a run wastes little.
void Reserve(Offsets& v, size_t need) {
  if (need <= v.capacity()) return;
  v.reserve(std::max({need, v.size() + v.size() / 4, size_t{16}}));
}

}  // namespace

FarTimes::Runs::iterator FarTimes::RunOf(int64_t t) {
  auto it = runs_.upper_bound(t);
  return it == runs_.begin() ? runs_.end() : std::prev(it);
}

FarTimes::Runs::const_iterator FarTimes::RunOf(int64_t t) const {
  auto it = runs_.upper_bound(t);
  return it == runs_.begin() ? runs_.end() : std::prev(it);
}

void FarTimes::Add(TimePoint t, int64_t n) {
  CQ_CHECK(n > 0, "adding {} far messages", n);
  const int64_t tm = ToEpochMs(t);
  auto it = RunOf(tm);
  if (it == runs_.end() && !runs_.empty()) {
    // Before every run: the first run takes it (rebased) when it has room, else a new run.
    auto first = runs_.begin();
    const uint64_t shift = static_cast<uint64_t>(first->first) - static_cast<uint64_t>(tm);
    if (first->second.size() < kRunCap && shift + first->second.back() < kSpan) {
      auto node = runs_.extract(first);
      for (uint32_t& off : node.mapped()) off += static_cast<uint32_t>(shift);
      node.key() = tm;
      it = runs_.insert(std::move(node)).position;
    }
  } else if (it != runs_.end() && OffsetOf(tm, it->first) >= kSpan) {
    it = runs_.end();  // too far from the run before: a run of its own
  }
  if (it == runs_.end()) it = runs_.emplace(tm, Offsets()).first;
  Offsets& v = it->second;
  const auto off = static_cast<uint32_t>(OffsetOf(tm, it->first));
  const size_t pos = static_cast<size_t>(std::upper_bound(v.begin(), v.end(), off) - v.begin());
  const bool appended = pos == v.size();
  Reserve(v, v.size() + static_cast<size_t>(n));
  v.insert(v.begin() + static_cast<std::ptrdiff_t>(pos), static_cast<size_t>(n), off);
  size_ += n;
  SplitIfNeeded(it, appended);
}

void FarTimes::SplitIfNeeded(Runs::iterator run, bool appended) {
  Offsets& v = run->second;
  if (v.size() <= kRunCap) return;
  // After an append, before the appended time's entries (the left run stays full); else in
  // halves. Equal times never part.
  const uint32_t at = appended ? v.back() : v[v.size() / 2];
  auto cut = std::lower_bound(v.begin(), v.end(), at);
  if (cut == v.begin()) cut = std::upper_bound(v.begin(), v.end(), at);
  if (cut == v.end()) return;  // one time only: it cannot split
  const uint32_t shift = *cut;
  Offsets right(cut, v.end());
  for (uint32_t& off : right) off -= shift;
  v.erase(cut, v.end());
  v.shrink_to_fit();
  auto right_run =
      runs_.emplace_hint(std::next(run), run->first + int64_t{shift}, std::move(right));
  SplitIfNeeded(run, false);
  SplitIfNeeded(right_run, false);
}

bool FarTimes::Remove(TimePoint t, int64_t n) {
  CQ_CHECK(n > 0, "removing {} far messages", n);
  const int64_t tm = ToEpochMs(t);
  auto it = RunOf(tm);
  if (it == runs_.end()) return false;
  const uint64_t off = OffsetOf(tm, it->first);
  if (off >= kSpan) return false;
  Offsets& v = it->second;
  auto [lo, hi] = std::equal_range(v.begin(), v.end(), static_cast<uint32_t>(off));
  if (hi - lo < n) return false;
  v.erase(hi - n, hi);  // the last ones: an equal-time run loses its tail, nothing moves
  size_ -= n;
  if (v.empty()) {
    runs_.erase(it);
    return true;
  }
  if (v.capacity() > 2 * v.size() + 16) v.shrink_to_fit();
  MergeIfSparse(it);
  return true;
}

void FarTimes::MergeIfSparse(Runs::iterator run) {
  if (run->second.size() >= kRunCap / 4) return;
  // Merges `right` into `left` when they fit together; returns whether it did.
  auto merge = [this](Runs::iterator left, Runs::iterator right) {
    Offsets& l = left->second;
    const Offsets& r = right->second;
    const uint64_t shift = static_cast<uint64_t>(right->first) - static_cast<uint64_t>(left->first);
    if (l.size() + r.size() > kRunCap || shift + r.back() >= kSpan) return false;
    l.reserve(l.size() + r.size());
    for (uint32_t off : r) l.push_back(static_cast<uint32_t>(shift + off));
    runs_.erase(right);
    return true;
  };
  auto next = std::next(run);
  if (next != runs_.end() && merge(run, next)) return;
  if (run != runs_.begin()) merge(std::prev(run), run);
}

TimePoint FarTimes::First() const {
  if (runs_.empty()) return kTimeMax;
  const auto& [base, v] = *runs_.begin();
  return FromEpochMs(base + int64_t{v.front()});
}

TimePoint FarTimes::Last() const {
  if (runs_.empty()) return kTimeMin;
  const auto& [base, v] = *runs_.rbegin();
  return FromEpochMs(base + int64_t{v.back()});
}

TimePoint FarTimes::FirstAfter(TimePoint t) const {
  const int64_t tm = ToEpochMs(t);
  auto it = RunOf(tm);
  if (it == runs_.end()) return First();
  const Offsets& v = it->second;
  const uint64_t off = OffsetOf(tm, it->first);
  auto found = std::upper_bound(v.begin(), v.end(), off,
                                [](uint64_t a, uint32_t b) { return a < uint64_t{b}; });
  if (found != v.end()) return FromEpochMs(it->first + int64_t{*found});
  if (++it == runs_.end()) return kTimeMax;
  return FromEpochMs(it->first + int64_t{it->second.front()});
}

int64_t FarTimes::CountIn(TimePoint lo, TimePoint hi) const {
  int64_t n = 0;
  ForEachRun(lo, hi, [&](int64_t, const Offsets&, size_t from, size_t to) {
    n += static_cast<int64_t>(to - from);
  });
  return n;
}

void FarTimes::ForEach(TimePoint lo, TimePoint hi,
                       const std::function<void(TimePoint, int64_t)>& fn) const {
  ForEachRun(lo, hi, [&](int64_t base, const Offsets& v, size_t from, size_t to) {
    while (from < to) {
      const uint32_t off = v[from];
      size_t end = from + 1;
      while (end < to && v[end] == off) ++end;
      fn(FromEpochMs(base + int64_t{off}), static_cast<int64_t>(end - from));
      from = end;
    }
  });
}

void FarTimes::ForEachRun(
    TimePoint lo, TimePoint hi,
    const std::function<void(int64_t, const Offsets&, size_t, size_t)>& fn) const {
  const int64_t l = ToEpochMs(lo);
  const int64_t h = ToEpochMs(hi);
  if (l >= h || runs_.empty()) return;
  auto it = RunOf(l);
  if (it == runs_.end()) it = runs_.begin();
  for (; it != runs_.end() && it->first < h; ++it) {
    const auto& [base, v] = *it;
    const auto from = LowerBound(v, OffsetOf(l, base)) - v.begin();
    const auto to = LowerBound(v, OffsetOf(h, base)) - v.begin();
    if (from < to) fn(base, v, static_cast<size_t>(from), static_cast<size_t>(to));
  }
}

size_t FarTimes::offset_bytes() const {
  size_t bytes = 0;
  for (const auto& [base, v] : runs_) bytes += v.capacity() * sizeof(uint32_t);
  return bytes;
}

}  // namespace chronoq::engine
