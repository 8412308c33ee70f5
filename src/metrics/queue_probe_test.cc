#include "metrics/queue_probe.h"

#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "metrics/registry.h"

namespace chronoq::metrics {
namespace {

std::string Render(QueueProbe& p, std::vector<TopicDepth> depths = {}) {
  TextWriter w;
  p.Render(w, depths);
  return w.Take();
}

bool Has(const std::string& text, const std::string& line) {
  return text.find(line + "\n") != std::string::npos;
}

TEST(QueueProbeTest, CountsEventsPerTopic) {
  QueueProbe p(10);
  p.Add("a", QueueEvent::kSend);
  p.Add("a", QueueEvent::kSend, 2);
  p.Add("b", QueueEvent::kDelivery, 4);
  p.Add("b", QueueEvent::kRetryExhaust, 0);  // nothing
  std::string text = Render(p);
  EXPECT_TRUE(Has(text, "cq_queue_sends_total{topic=\"a\"} 3")) << text;
  EXPECT_TRUE(Has(text, "cq_queue_sends_total{topic=\"b\"} 0")) << text;
  EXPECT_TRUE(Has(text, "cq_queue_deliveries_total{topic=\"b\"} 4")) << text;
  EXPECT_TRUE(Has(text, "cq_queue_sends_total{topic=\"_other\"} 0")) << text;
  EXPECT_TRUE(Has(text, "# TYPE cq_queue_retry_exhaustions_total counter")) << text;
}

// A thread's repeated topic skips the lookup (a per-thread memo of the last topic and probe):
// counts still land on their own topic and probe, also for a probe made where a destroyed one was.
TEST(QueueProbeTest, RepeatedAndAlternatingTopicsCountWhereTheyBelong) {
  for (int round = 0; round < 3; ++round) {
    auto p = std::make_unique<QueueProbe>(10);
    p->Add("a", QueueEvent::kSend);
    p->Add("a", QueueEvent::kSend);
    p->Add("b", QueueEvent::kSend);
    p->Add("a", QueueEvent::kSend);
    QueueProbe other(10);
    other.Add("a", QueueEvent::kSend);
    p->Add("a", QueueEvent::kSend);
    std::string text = Render(*p);
    EXPECT_TRUE(Has(text, "cq_queue_sends_total{topic=\"a\"} 4")) << round << text;
    EXPECT_TRUE(Has(text, "cq_queue_sends_total{topic=\"b\"} 1")) << round << text;
    EXPECT_TRUE(Has(Render(other), "cq_queue_sends_total{topic=\"a\"} 1")) << round;
  }
}

TEST(QueueProbeTest, FoldsTopicsBeyondTheCap) {
  QueueProbe p(2);
  p.Add("t1", QueueEvent::kAck);
  p.Add("t2", QueueEvent::kAck);
  p.Add("t3", QueueEvent::kAck);
  p.Add("t4", QueueEvent::kAck, 5);
  p.Add("t1", QueueEvent::kAck);  // still its own
  std::string text = Render(p, {{"t1", 1, 2, 3}, {"t3", 10, 0, 0}, {"t5", 5, 1, 0}});
  EXPECT_TRUE(Has(text, "cq_queue_acks_total{topic=\"t1\"} 2")) << text;
  EXPECT_TRUE(Has(text, "cq_queue_acks_total{topic=\"t2\"} 1")) << text;
  EXPECT_TRUE(Has(text, "cq_queue_acks_total{topic=\"_other\"} 6")) << text;
  EXPECT_EQ(text.find("topic=\"t3\""), std::string::npos) << text;
  EXPECT_EQ(text.find("topic=\"t4\""), std::string::npos) << text;
  // Depth folds the same way: t3 and t5 add up under _other.
  EXPECT_TRUE(Has(text, "cq_queue_messages{topic=\"t1\",state=\"consuming\"} 3")) << text;
  EXPECT_TRUE(Has(text, "cq_queue_messages{topic=\"_other\",state=\"waiting\"} 15")) << text;
  EXPECT_TRUE(Has(text, "cq_queue_messages{topic=\"_other\",state=\"ready\"} 1")) << text;
}

TEST(QueueProbeTest, ZeroCapFoldsEverything) {
  QueueProbe p(0);
  p.Add("x", QueueEvent::kSend);
  EXPECT_EQ(p.LabelFor("x"), kOtherTopic);
  EXPECT_TRUE(Has(Render(p), "cq_queue_sends_total{topic=\"_other\"} 1"));
}

TEST(QueueProbeTest, EscapesTopicLabels) {
  QueueProbe p(10);
  p.Add("we\"ird\\top\nic", QueueEvent::kDeletion);
  EXPECT_TRUE(Has(Render(p), "cq_queue_deletions_total{topic=\"we\\\"ird\\\\top\\nic\"} 1"));
}

TEST(QueueProbeTest, LatenessHistogramPerWay) {
  QueueProbe p(10);
  p.ObserveLateness(false, 3);
  p.ObserveLateness(true, 20'000);
  std::string text = Render(p);
  EXPECT_TRUE(Has(text, "cq_queue_trigger_lateness_seconds_bucket{via=\"pull\",le=\"0.005\"} 1"))
      << text;
  EXPECT_TRUE(Has(text, "cq_queue_trigger_lateness_seconds_count{via=\"long_poll\"} 1")) << text;
  EXPECT_TRUE(Has(text, "cq_queue_trigger_lateness_seconds_sum{via=\"long_poll\"} 20")) << text;
  EXPECT_TRUE(Has(text, "cq_queue_trigger_lateness_seconds_bucket{via=\"long_poll\",le=\"10\"} 0"))
      << text;
}

TEST(QueueProbeTest, ConcurrentCountsAreExactAndCapHolds) {
  QueueProbe p(50);
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&p] {
      for (int i = 0; i < 10'000; ++i) p.Add("topic" + std::to_string(i % 100), QueueEvent::kSend);
    });
  }
  for (std::thread& t : threads) t.join();
  std::string text = Render(p);
  int named = 0;
  uint64_t total = 0;
  size_t pos = 0;
  const std::string prefix = "cq_queue_sends_total{topic=\"";
  while ((pos = text.find(prefix, pos)) != std::string::npos) {
    size_t end = text.find('\n', pos);
    std::string line = text.substr(pos, end - pos);
    if (line.find("_other") == std::string::npos) ++named;
    total += std::stoull(line.substr(line.rfind(' ') + 1));
    pos = end;
  }
  EXPECT_EQ(named, 50);
  EXPECT_EQ(total, 40'000u);
}

TEST(RegistryTest, RendersCollectorsInOrderAndProcessFigures) {
  Registry r;
  r.Add([](TextWriter& w) { w.Sample("first", {}, 1); });
  r.Add([](TextWriter& w) { w.Sample("second", {}, 2); });
  r.Add(RenderProcess);
  TextWriter w;
  r.Render(w);
  const std::string& text = w.text();
  EXPECT_LT(text.find("first 1"), text.find("second 2"));
  for (const char* name : {"cq_process_uptime_seconds", "cq_process_resident_memory_bytes",
                           "cq_process_open_fds", "cq_process_start_time_seconds"}) {
    EXPECT_NE(text.find(std::string("# TYPE ") + name + " gauge"), std::string::npos) << name;
  }
  EXPECT_EQ(text.find("cq_process_resident_memory_bytes 0\n"), std::string::npos) << text;
  EXPECT_EQ(text.find("cq_process_open_fds 0\n"), std::string::npos) << text;
}

TEST(QueueProbeTest, ReadCountsGivesEveryLabelAndOtherLast) {
  QueueProbe p(1);
  p.Add("a", QueueEvent::kSend, 3);
  p.Add("b", QueueEvent::kDelivery, 2);  // beyond the cap: counted under _other
  std::vector<TopicCounts> counts = p.ReadCounts();
  ASSERT_EQ(counts.size(), 2u);
  EXPECT_EQ(counts[0].topic, "a");
  EXPECT_EQ(counts[0].counts[static_cast<int>(QueueEvent::kSend)], 3u);
  EXPECT_EQ(counts[1].topic, kOtherTopic);
  EXPECT_EQ(counts[1].counts[static_cast<int>(QueueEvent::kDelivery)], 2u);
}

TEST(QueueProbeTest, ReadLatenessAddsPullAndLongPoll) {
  QueueProbe p(1);
  p.ObserveLateness(false, 3);     // 5 ms bucket
  p.ObserveLateness(true, 3);      // 5 ms bucket
  p.ObserveLateness(true, 7'000);  // 10 s bucket
  HistogramData d = p.ReadLateness();
  EXPECT_EQ(d.count, 3u);
  EXPECT_EQ(d.counts[0], 2u);
  EXPECT_NEAR(d.sum_seconds, 7.006, 1e-9);
}

}  // namespace
}  // namespace chronoq::metrics
