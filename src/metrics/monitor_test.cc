#include "metrics/monitor.h"

#include <gtest/gtest.h>

#include <string>

namespace chronoq::metrics {
namespace {

constexpr int64_t kInterval = 60'000;
// The start of an interval (epoch-aligned).
const TimePoint kStart = FromEpochMs(int64_t{28'333'334} * kInterval);
TimePoint At(int64_t ms) { return kStart + Millis(ms); }

TEST(MonitorRecorderTest, EmptyBeforeFirstIntervalCompletes) {
  MonitorRecorder m{Millis(kInterval)};
  m.Add("t", MonitorCounter::kSendMsg, 3, At(0));
  MonitorSnapshot s = m.LastCompleted(At(kInterval - 1));
  EXPECT_TRUE(s.request_stats.empty());
  EXPECT_TRUE(s.pull_gaps.empty());
  EXPECT_TRUE(s.ready_gaps.empty());
}

TEST(MonitorRecorderTest, ShowsLastCompletedInterval) {
  MonitorRecorder m{Millis(kInterval)};
  m.Add("t", MonitorCounter::kSendMsg, 3, At(0));
  m.Add("t", MonitorCounter::kSendMsg, 2, At(kInterval - 1));
  m.Add("t", MonitorCounter::kPullMsg, 7, At(10));
  m.Add("t", MonitorCounter::kSendMsg, 100, At(kInterval));  // next interval
  MonitorSnapshot s = m.LastCompleted(At(kInterval));
  ASSERT_EQ(s.request_stats.size(), 1u);
  EXPECT_EQ(s.request_stats[0].topic, "t");
  EXPECT_EQ(s.request_stats[0].get(MonitorCounter::kSendMsg), 5);
  EXPECT_EQ(s.request_stats[0].get(MonitorCounter::kPullMsg), 7);
  EXPECT_EQ(s.request_stats[0].get(MonitorCounter::kAckMsg), 0);
  // Asking again within the same interval gives the same answer.
  EXPECT_EQ(m.LastCompleted(At(2 * kInterval - 1)).request_stats[0].get(MonitorCounter::kSendMsg),
            5);
  // One interval later, the 100 show.
  EXPECT_EQ(m.LastCompleted(At(2 * kInterval)).request_stats[0].get(MonitorCounter::kSendMsg), 100);
}

TEST(MonitorRecorderTest, QuietIntervalShowsNothing) {
  MonitorRecorder m{Millis(kInterval)};
  m.Add("t", MonitorCounter::kSendMsg, 1, At(0));
  // Two intervals later the last completed one saw nothing.
  EXPECT_TRUE(m.LastCompleted(At(2 * kInterval)).request_stats.empty());
}

TEST(MonitorRecorderTest, RotationIsLazyAcrossManyIntervals) {
  MonitorRecorder m{Millis(kInterval)};
  m.Add("t", MonitorCounter::kSendMsg, 1, At(0));
  m.Add("t", MonitorCounter::kSendMsg, 4, At(10 * kInterval + 5));
  MonitorSnapshot s = m.LastCompleted(At(11 * kInterval));
  ASSERT_EQ(s.request_stats.size(), 1u);
  EXPECT_EQ(s.request_stats[0].get(MonitorCounter::kSendMsg), 4);
}

TEST(MonitorRecorderTest, TopicsSortedAndOnlyThoseCounted) {
  MonitorRecorder m{Millis(kInterval)};
  m.Add("b", MonitorCounter::kAckMsg, 1, At(0));
  m.Add("a", MonitorCounter::kGetMsg, 1, At(0));
  m.Add("zero", MonitorCounter::kGetMsg, 0, At(0));  // nothing counted: does not appear
  m.AddReadyGap("gaponly", 1, 5, 5, At(0));
  MonitorSnapshot s = m.LastCompleted(At(kInterval));
  ASSERT_EQ(s.request_stats.size(), 2u);
  EXPECT_EQ(s.request_stats[0].topic, "a");
  EXPECT_EQ(s.request_stats[1].topic, "b");
  ASSERT_EQ(s.ready_gaps.size(), 1u);
  EXPECT_EQ(s.ready_gaps[0].topic, "gaponly");
}

TEST(MonitorRecorderTest, GapStatsAverageAndMax) {
  MonitorRecorder m{Millis(kInterval)};
  m.AddPullGap("t", 2, 30, 20, At(0));
  m.AddPullGap("t", 1, 5, 5, At(1));
  m.AddPullGap("t", 0, 0, 999, At(2));  // no samples: ignored
  m.AddReadyGap("t", 4, 0, 0, At(3));
  MonitorSnapshot s = m.LastCompleted(At(kInterval));
  ASSERT_EQ(s.pull_gaps.size(), 1u);
  EXPECT_EQ(s.pull_gaps[0].count, 3);
  EXPECT_DOUBLE_EQ(s.pull_gaps[0].avg, 35.0 / 3);
  EXPECT_EQ(s.pull_gaps[0].max, 20);
  ASSERT_EQ(s.ready_gaps.size(), 1u);
  EXPECT_EQ(s.ready_gaps[0].count, 4);
  EXPECT_DOUBLE_EQ(s.ready_gaps[0].avg, 0.0);
  EXPECT_TRUE(s.request_stats.empty());  // gaps alone are not request counts
}

TEST(MonitorRecorderTest, EveryCounterIsKeptApart) {
  MonitorRecorder m{Millis(kInterval)};
  for (int c = 0; c < kMonitorCounterCount; ++c) {
    m.Add("t", static_cast<MonitorCounter>(c), c + 1, At(0));
  }
  MonitorSnapshot s = m.LastCompleted(At(kInterval));
  ASSERT_EQ(s.request_stats.size(), 1u);
  for (int c = 0; c < kMonitorCounterCount; ++c) {
    EXPECT_EQ(s.request_stats[0].counts[c], c + 1) << c;
  }
}

TEST(MonitorRecorderTest, ClockGoingBackwardsDoesNotRotate) {
  MonitorRecorder m{Millis(kInterval)};
  m.Add("t", MonitorCounter::kSendMsg, 1, At(kInterval));
  m.Add("t", MonitorCounter::kSendMsg, 1, At(kInterval - 10));  // counted in the current one
  MonitorSnapshot s = m.LastCompleted(At(2 * kInterval));
  ASSERT_EQ(s.request_stats.size(), 1u);
  EXPECT_EQ(s.request_stats[0].get(MonitorCounter::kSendMsg), 2);
}

TEST(MonitorRecorderTest, IntervalsAreEpochAlignedAlsoBeforeEpoch) {
  MonitorRecorder m{Millis(1'000)};
  m.Add("t", MonitorCounter::kSendMsg, 1, FromEpochMs(-1));  // interval [-1000, 0)
  EXPECT_EQ(m.LastCompleted(FromEpochMs(0)).request_stats.size(), 1u);
  MonitorRecorder n{Millis(1'000)};
  n.Add("t", MonitorCounter::kSendMsg, 1, FromEpochMs(1'500));  // interval [1000, 2000)
  EXPECT_TRUE(n.LastCompleted(FromEpochMs(1'999)).request_stats.empty());
  EXPECT_EQ(n.LastCompleted(FromEpochMs(2'000)).request_stats.size(), 1u);
}

}  // namespace
}  // namespace chronoq::metrics
