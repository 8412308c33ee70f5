// FarTimes against a naive model (a map from millisecond to count) under random adds and
// removes: dense bursts (runs that split, equal times that cannot), ascending and descending
// sends, times spread over years (runs limited to 2^32 ms), negative times; after every step
// every query is compared with the model's answer.
#include "engine/far_times.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <iterator>
#include <map>
#include <random>
#include <utility>
#include <vector>

namespace chronoq::engine {
namespace {

constexpr int64_t kT0 = 1'700'000'000'000;
constexpr int64_t kDay = 86'400'000;

class Model {
 public:
  void Add(int64_t t, int64_t n) {
    far_.Add(FromEpochMs(t), n);
    counts_[t] += n;
    total_ += n;
  }
  bool Remove(int64_t t, int64_t n) {
    auto it = counts_.find(t);
    const bool there = it != counts_.end() && it->second >= n;
    EXPECT_EQ(far_.Remove(FromEpochMs(t), n), there) << "remove " << n << " at " << t;
    if (there) {
      if ((it->second -= n) == 0) counts_.erase(it);
      total_ -= n;
    }
    return there;
  }

  // Every query, against the model, at and around a few probe times.
  void Check(std::mt19937_64& rng) {
    ASSERT_EQ(far_.size(), total_);
    ASSERT_EQ(far_.empty(), total_ == 0);
    ASSERT_EQ(far_.First(), counts_.empty() ? kTimeMax : FromEpochMs(counts_.begin()->first));
    ASSERT_EQ(far_.Last(), counts_.empty() ? kTimeMin : FromEpochMs(counts_.rbegin()->first));
    std::vector<int64_t> probes = {kT0, INT64_MIN + 1, INT64_MAX - 1};
    for (int i = 0; i < 4 && !counts_.empty(); ++i) {
      auto it = std::next(counts_.begin(), static_cast<std::ptrdiff_t>(rng() % counts_.size()));
      probes.push_back(it->first);
      probes.push_back(it->first - 1);
      probes.push_back(it->first + 1);
    }
    for (int64_t p : probes) {
      auto after = counts_.upper_bound(p);
      ASSERT_EQ(far_.FirstAfter(FromEpochMs(p)),
                after == counts_.end() ? kTimeMax : FromEpochMs(after->first))
          << "first after " << p;
    }
    for (size_t i = 0; i < probes.size(); ++i) {
      for (size_t j = 0; j < probes.size(); ++j) {
        const int64_t lo = probes[i];
        const int64_t hi = probes[j];
        int64_t want = 0;
        std::vector<std::pair<TimePoint, int64_t>> want_groups;
        if (lo < hi) {
          for (auto it = counts_.lower_bound(lo); it != counts_.end() && it->first < hi; ++it) {
            want += it->second;
            want_groups.emplace_back(FromEpochMs(it->first), it->second);
          }
        }
        ASSERT_EQ(far_.CountIn(FromEpochMs(lo), FromEpochMs(hi)), want) << lo << ".." << hi;
        std::vector<std::pair<TimePoint, int64_t>> groups;
        far_.ForEach(FromEpochMs(lo), FromEpochMs(hi),
                     [&](TimePoint t, int64_t n) { groups.emplace_back(t, n); });
        ASSERT_EQ(groups, want_groups) << lo << ".." << hi;
      }
    }
  }

  const FarTimes& far() const { return far_; }
  const std::map<int64_t, int64_t>& counts() const { return counts_; }

 private:
  FarTimes far_;
  std::map<int64_t, int64_t> counts_;
  int64_t total_ = 0;
};

class FarTimesModelTest : public ::testing::TestWithParam<uint32_t> {};

TEST_P(FarTimesModelTest, MatchesANaiveMapAfterEveryStep) {
  std::mt19937_64 rng(GetParam());
  auto pick = [&](int64_t n) { return static_cast<int64_t>(rng() % static_cast<uint64_t>(n)); };
  Model m;
  // Each seed mixes its own spreads: a burst window, a day, years (past 2^32 ms per run).
  const int64_t spreads[] = {50, 5'000, kDay, 3 * 365 * kDay};
  int64_t ascending = kT0;
  int64_t descending = kT0 + 100 * kDay;
  for (int step = 0; step < 6'000; ++step) {
    const int64_t op = pick(100);
    if (op < 45) {
      const int64_t spread = spreads[pick(4)];
      const int64_t n = pick(10) == 0 ? 1 + pick(700) : 1;  // sometimes many at one time
      m.Add(kT0 - spread / 4 + pick(spread), n);
    } else if (op < 60) {
      ascending += pick(3);
      m.Add(ascending, 1);
    } else if (op < 65) {
      descending -= pick(3);
      m.Add(descending, 1);
    } else if (op < 67) {
      m.Add(pick(2) == 0 ? INT64_MIN + 2 + pick(5) : INT64_MAX - 2 - pick(5), 1);
    } else if (op < 90 && !m.counts().empty()) {
      // Remove some of an existing time (the first one often: loading drains from the front).
      auto it = pick(3) == 0 ? m.counts().begin()
                             : std::next(m.counts().begin(),
                                         static_cast<std::ptrdiff_t>(rng() % m.counts().size()));
      const int64_t n = 1 + pick(it->second);
      m.Remove(it->first, n);
    } else if (op < 95) {
      m.Remove(kT0 + pick(kDay), 1 + pick(2));  // usually not there: refused, nothing changes
    } else if (!m.counts().empty()) {
      auto it = m.counts().begin();
      m.Remove(it->first, it->second + 1);  // one more than there: refused
    }
    if (step % 25 == 0 || step > 5'950) {
      m.Check(rng);
      if (HasFatalFailure()) return;
    }
  }
  // Drain everything in time order, as loading does.
  while (!m.counts().empty()) {
    auto it = m.counts().begin();
    ASSERT_TRUE(m.Remove(it->first, it->second));
  }
  m.Check(rng);
  EXPECT_EQ(m.far().runs(), 0u);
}

INSTANTIATE_TEST_SUITE_P(Seeds, FarTimesModelTest, ::testing::Range<uint32_t>(1, 9));

TEST(FarTimesTest, AscendingTimesFillTheirRunsAtFourBytesEach) {
  FarTimes far;
  for (int64_t i = 0; i < 100'000; ++i) far.Add(FromEpochMs(kT0 + i / 2), 1);
  EXPECT_EQ(far.size(), 100'000);
  // Full runs: ceil(100,000 / 512) of them, each at most a quarter over its entries.
  EXPECT_EQ(far.runs(), (100'000 + FarTimes::kRunCap - 1) / FarTimes::kRunCap);
  EXPECT_LE(far.offset_bytes(), 100'000 * 4 * 5 / 4);
}

TEST(FarTimesTest, RandomTimesOverAMonthCostAboutFourBytesEach) {
  FarTimes far;
  std::mt19937_64 rng(7);
  for (int i = 0; i < 200'000; ++i)
    far.Add(FromEpochMs(kT0 + static_cast<int64_t>(rng() % (30 * kDay))), 1);
  // Runs split in halves: between half full and full, and a vector's slack.
  EXPECT_LE(far.offset_bytes(), 200'000 * 4 * 2 + 0u);
  EXPECT_LE(far.runs(), 200'000 * 2 / FarTimes::kRunCap + 1);
}

TEST(FarTimesTest, ManyMessagesAtOneMillisecondStayOneRun) {
  FarTimes far;
  far.Add(FromEpochMs(kT0), 5'000);
  far.Add(FromEpochMs(kT0), 1);
  EXPECT_EQ(far.runs(), 1u);  // equal times never part
  far.Add(FromEpochMs(kT0 + 1), 1);
  EXPECT_EQ(far.CountIn(FromEpochMs(kT0), FromEpochMs(kT0 + 1)), 5'001);
  EXPECT_FALSE(far.Remove(FromEpochMs(kT0), 5'002));
  EXPECT_TRUE(far.Remove(FromEpochMs(kT0), 5'001));
  EXPECT_EQ(far.First(), FromEpochMs(kT0 + 1));
}

TEST(FarTimesTest, TimesFartherApartThanARunSpanEachGetARun) {
  FarTimes far;
  const int64_t span = int64_t{1} << 32;
  far.Add(FromEpochMs(kT0), 1);
  far.Add(FromEpochMs(kT0 + span), 1);      // one past what a run's offset can say
  far.Add(FromEpochMs(kT0 + span - 1), 1);  // still the first run's
  EXPECT_EQ(far.runs(), 2u);
  EXPECT_EQ(far.FirstAfter(FromEpochMs(kT0 + span - 1)), FromEpochMs(kT0 + span));
  EXPECT_EQ(far.CountIn(FromEpochMs(kT0), FromEpochMs(kT0 + span)), 2);
}

}  // namespace
}  // namespace chronoq::engine
