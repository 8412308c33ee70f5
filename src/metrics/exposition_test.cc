#include "metrics/exposition.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "metrics/instruments.h"

namespace chronoq::metrics {
namespace {

TEST(ExpositionTest, EscapesLabelValues) {
  EXPECT_EQ(EscapeLabelValue("plain"), "plain");
  EXPECT_EQ(EscapeLabelValue("a\\b"), "a\\\\b");
  EXPECT_EQ(EscapeLabelValue("say \"hi\""), "say \\\"hi\\\"");
  EXPECT_EQ(EscapeLabelValue("two\nlines"), "two\\nlines");
  EXPECT_EQ(EscapeLabelValue("ünïcode ✓"), "ünïcode ✓");
}

TEST(ExpositionTest, EscapesHelpButNotQuotes) {
  EXPECT_EQ(EscapeHelp("a \"b\" \\ c\nd"), "a \"b\" \\\\ c\\nd");
}

TEST(ExpositionTest, FormatsValues) {
  EXPECT_EQ(FormatValue(0), "0");
  EXPECT_EQ(FormatValue(42), "42");
  EXPECT_EQ(FormatValue(-3), "-3");
  EXPECT_EQ(FormatValue(0.25), "0.25");
  EXPECT_EQ(FormatValue(std::numeric_limits<double>::infinity()), "+Inf");
  EXPECT_EQ(FormatValue(-std::numeric_limits<double>::infinity()), "-Inf");
  EXPECT_EQ(FormatValue(std::nan("")), "NaN");
}

TEST(ExpositionTest, WritesFamiliesAndSamples) {
  TextWriter w;
  w.Family("cq_x_total", "Things\nthat happened", MetricType::kCounter);
  w.Sample("cq_x_total", {}, 3);
  w.Sample("cq_x_total", {{"topic", "a\"b"}, {"state", "ready"}}, 1);
  EXPECT_EQ(w.text(),
            "# HELP cq_x_total Things\\nthat happened\n"
            "# TYPE cq_x_total counter\n"
            "cq_x_total 3\n"
            "cq_x_total{topic=\"a\\\"b\",state=\"ready\"} 1\n");
}

TEST(ExpositionTest, WritesCumulativeHistogramBuckets) {
  DurationHistogram h({0.01, 0.1, 1});
  h.ObserveMillis(5);     // <= 0.01
  h.ObserveMillis(10);    // <= 0.01 (le is inclusive)
  h.ObserveMillis(50);    // <= 0.1
  h.ObserveMillis(5000);  // +Inf
  h.ObserveMillis(-7);    // counts as 0
  TextWriter w;
  const Label labels[] = {{"route", "/x"}};
  w.Histogram("cq_h_seconds", labels, h.Read());
  EXPECT_EQ(w.text(),
            "cq_h_seconds_bucket{route=\"/x\",le=\"0.01\"} 3\n"
            "cq_h_seconds_bucket{route=\"/x\",le=\"0.1\"} 4\n"
            "cq_h_seconds_bucket{route=\"/x\",le=\"1\"} 4\n"
            "cq_h_seconds_bucket{route=\"/x\",le=\"+Inf\"} 5\n"
            "cq_h_seconds_sum{route=\"/x\"} 5.065\n"
            "cq_h_seconds_count{route=\"/x\"} 5\n");
}

}  // namespace
}  // namespace chronoq::metrics
