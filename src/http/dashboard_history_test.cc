// The dashboard's history (dashboard_history.h), fed samples by hand: rates from counter
// differences, depth, lateness p99, the bounded ring, and which topics keep a series.
#include "http/dashboard_history.h"

#include <gtest/gtest.h>

#include <boost/json.hpp>
#include <string>

#include "http/json_writer.h"

namespace chronoq::http {
namespace {

using metrics::QueueEvent;

constexpr int64_t kT0 = 1'700'000'000'000;

metrics::TopicCounts Counts(std::string topic, uint64_t sends, uint64_t deliveries,
                            uint64_t dead = 0) {
  metrics::TopicCounts c;
  c.topic = std::move(topic);
  c.counts[static_cast<int>(QueueEvent::kSend)] = sends;
  c.counts[static_cast<int>(QueueEvent::kDelivery)] = deliveries;
  c.counts[static_cast<int>(QueueEvent::kDeadLetter)] = dead;
  return c;
}

core::TopicInfo Depth(std::string topic, int64_t waiting, int64_t ready = 0) {
  core::TopicInfo t;
  t.topic = std::move(topic);
  t.waiting = waiting;
  t.ready = ready;
  return t;
}

metrics::HistogramData Lateness(std::vector<uint64_t> counts) {
  metrics::HistogramData d;
  d.bounds_seconds = {0.005, 0.01, 0.1};
  d.counts = std::move(counts);
  for (uint64_t c : d.counts) d.count += c;
  return d;
}

HistorySample Sample(int64_t seconds, std::vector<core::TopicInfo> topics,
                     std::vector<metrics::TopicCounts> counts) {
  HistorySample s;
  s.at = FromEpochMs(kT0 + seconds * 1000);
  s.topics = std::move(topics);
  s.counts = std::move(counts);
  s.lateness = Lateness({0, 0, 0, 0});
  return s;
}

boost::json::object History(const DashboardHistory& h, std::string_view topic) {
  JsonWriter w;
  w.BeginObject();
  h.WriteHistory(w, topic);
  w.EndObject();
  return boost::json::parse(w.Take()).as_object();
}

TEST(DashboardHistoryTest, RatesAreCounterDifferencesOverTheInterval) {
  DashboardHistory h;
  h.Add(Sample(0, {Depth("a", 3)}, {Counts("a", 10, 0), Counts("_other", 5, 0)}));
  h.Add(Sample(5, {Depth("a", 4, 1)}, {Counts("a", 20, 5), Counts("_other", 10, 0)}));
  boost::json::object j = History(h, "a");
  ASSERT_EQ(j["times"].as_array().size(), 2u);
  EXPECT_EQ(j["times"].as_array()[1].as_int64(), kT0 + 5000);
  const boost::json::object& total = j["total"].as_object();
  EXPECT_TRUE(total.at("sends").as_array()[0].is_null());                      // no previous sample
  EXPECT_DOUBLE_EQ(total.at("sends").as_array()[1].to_number<double>(), 3.0);  // (10 + 5) / 5 s
  EXPECT_DOUBLE_EQ(total.at("deliveries").as_array()[1].to_number<double>(), 1.0);
  EXPECT_EQ(total.at("waiting").as_array()[1].to_number<double>(), 4);
  EXPECT_EQ(total.at("ready").as_array()[1].to_number<double>(), 1);
  EXPECT_EQ(total.at("topics").as_array()[1].to_number<double>(), 1);
  EXPECT_TRUE(j["tracked"].as_bool());
  const boost::json::object& a = j["series"].as_object();
  EXPECT_DOUBLE_EQ(a.at("sends").as_array()[1].to_number<double>(), 2.0);
  EXPECT_EQ(a.at("waiting").as_array()[1].to_number<double>(), 4);
}

TEST(DashboardHistoryTest, AnnotateGivesLastRatesAndUnknownForFoldedTopics) {
  DashboardHistory h;
  h.Add(Sample(0, {Depth("a", 1), Depth("folded", 1)}, {Counts("a", 0, 0)}));
  h.Add(Sample(10, {Depth("a", 1), Depth("folded", 1)}, {Counts("a", 50, 20, 3)}));
  std::vector<TopicRow> rows(2);
  rows[0].topic = "a";
  rows[1].topic = "folded";
  h.Annotate(rows);
  EXPECT_DOUBLE_EQ(rows[0].sends, 5.0);
  EXPECT_DOUBLE_EQ(rows[0].deliveries, 2.0);
  EXPECT_EQ(rows[0].dead_letters_total, 3);
  EXPECT_TRUE(std::isnan(rows[1].sends));  // no label of its own: rates unknown
  EXPECT_EQ(rows[1].dead_letters_total, -1);
}

TEST(DashboardHistoryTest, LatenessP99InterpolatesInsideItsBucket) {
  const metrics::HistogramData none = Lateness({0, 0, 0, 0});
  EXPECT_TRUE(std::isnan(DashboardHistory::P99Millis(none, none)));
  // 100 observations: 98 under 5 ms, 2 in (10 ms, 100 ms]: the 99th is halfway into that bucket.
  EXPECT_NEAR(DashboardHistory::P99Millis(none, Lateness({98, 0, 2, 0})), 55.0, 1e-9);
  // Only the difference counts.
  EXPECT_NEAR(DashboardHistory::P99Millis(Lateness({98, 0, 2, 0}), Lateness({198, 0, 2, 0})), 4.95,
              1e-9);
  // Beyond the last bound: its lower bound.
  EXPECT_NEAR(DashboardHistory::P99Millis(none, Lateness({0, 0, 0, 7})), 100.0, 1e-9);
}

TEST(DashboardHistoryTest, TheRingKeepsTheLastPointsOnly) {
  HistoryOptions o;
  o.points = 3;
  DashboardHistory h(o);
  for (int i = 0; i < 5; ++i) h.Add(Sample(i * 5, {Depth("a", i)}, {Counts("a", 0, 0)}));
  EXPECT_EQ(h.samples(), 3u);
  boost::json::object j = History(h, "");
  const boost::json::array& times = j["times"].as_array();
  ASSERT_EQ(times.size(), 3u);
  EXPECT_EQ(times[0].as_int64(), kT0 + 10'000);
  EXPECT_EQ(times[2].as_int64(), kT0 + 20'000);
  EXPECT_EQ(j["total"].as_object().at("waiting").as_array()[2].to_number<double>(), 4);
  EXPECT_TRUE(j["series"].is_null());  // no topic asked
}

TEST(DashboardHistoryTest, SeriesAreBoundedToTheBusiestAndTheViewed) {
  HistoryOptions o;
  o.max_topic_series = 4;
  DashboardHistory h(o);
  // 10,000 topics, each with a message; t17 and t42 busy.
  std::vector<core::TopicInfo> topics;
  std::vector<metrics::TopicCounts> zero, busy;
  for (int i = 0; i < 10'000; ++i) {
    topics.push_back(Depth("t" + std::to_string(i), 1));
    zero.push_back(Counts("t" + std::to_string(i), 0, 0));
    busy.push_back(Counts("t" + std::to_string(i), i == 17 || i == 42 ? 100 : 0, 0));
  }
  h.Viewed("t9999", FromEpochMs(kT0));
  h.Add(Sample(0, topics, zero));
  h.Add(Sample(5, topics, busy));
  EXPECT_EQ(h.tracked_topics(), 4u);
  EXPECT_TRUE(History(h, "t17")["tracked"].as_bool());
  EXPECT_TRUE(History(h, "t42")["tracked"].as_bool());
  EXPECT_TRUE(History(h, "t9999")["tracked"].as_bool());  // viewed
  EXPECT_FALSE(History(h, "t5000")["tracked"].as_bool());
  EXPECT_EQ(h.Activity("t17", 60).size(), 2u);
  EXPECT_TRUE(h.Activity("t5000", 60).empty());
}

TEST(DashboardHistoryTest, AViewedTopicLosesItsSeriesAfterViewedFor) {
  HistoryOptions o;
  o.max_topic_series = 2;
  o.viewed_for = Millis(60'000);
  DashboardHistory h(o);
  h.Viewed("quiet", FromEpochMs(kT0));
  h.Add(Sample(0, {}, {}));
  EXPECT_EQ(h.tracked_topics(), 1u);  // viewed: tracked though it has nothing
  h.Add(Sample(61, {}, {}));
  EXPECT_EQ(h.tracked_topics(), 0u);
}

}  // namespace
}  // namespace chronoq::http
