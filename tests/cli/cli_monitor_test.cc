// `chronoq topics|topic|monitor` against a real server: tables for people, the server's answer
// with --json.
#include <sstream>

#include "tests/cli/cli_util.h"

namespace chronoq::it {
namespace {

TEST_F(CliTest, TopicsListsCountsPerTopic) {
  std::string t = Topic();
  SendOk(t, "m", 0, {{"msgId", "ready"}});
  SendOk(t, "m", 0, {{"msgId", "consuming"}});
  SendOk(t, "m", 5 * kMinute, {{"msgId", "waiting-1"}});
  SendOk(t, "m", 2 * kHour, {{"msgId", "waiting-2"}});
  PullOk(t);

  std::string out = CliOk({"topics"});
  EXPECT_TRUE(Contains(out, "TOPIC")) << out;
  EXPECT_TRUE(Contains(out, "WAITING  READY  CONSUMING\n")) << out;
  bool found = false;
  for (size_t pos = 0, end; (end = out.find('\n', pos)) != std::string::npos; pos = end + 1) {
    std::string line = out.substr(pos, end - pos);
    if (line.rfind(t + " ", 0) != 0) continue;
    found = true;
    std::istringstream cells(line.substr(t.size()));
    int64_t waiting = -1, ready = -1, consuming = -1;
    cells >> waiting >> ready >> consuming;
    EXPECT_EQ(waiting, 2) << line;
    EXPECT_EQ(ready, 1) << line;
    EXPECT_EQ(consuming, 1) << line;
  }
  EXPECT_TRUE(found) << t << " not in\n" << out;

  json::object doc = CliJson({"topics"});
  EXPECT_EQ(Int(doc["code"]), 200);
  ASSERT_TRUE(doc["data"].is_array());
  bool listed = false;
  for (const auto& info : doc["data"].as_array()) {
    if (Str(info.at("topic")) != t) continue;
    listed = true;
    EXPECT_EQ(Int(info.at("waitingQueueSize")), 2);
  }
  EXPECT_TRUE(listed) << json::serialize(doc);
}

TEST_F(CliTest, TopicShowsCountsAndBuckets) {
  std::string t = Topic();
  SendOk(t, "m", 30'000, {{"msgId", "a"}});
  SendOk(t, "m", 2 * kHour, {{"msgId", "b"}});
  SendOk(t, "m", 2 * kHour, {{"msgId", "c"}});
  std::string out = CliOk({"topic", "--topic=" + t});
  EXPECT_TRUE(Contains(out, "topic      " + t + "\n")) << out;
  EXPECT_TRUE(Contains(out, "waiting    3\nready      0\nconsuming  0\n")) << out;
  EXPECT_TRUE(Contains(out, "< 1min               1\n")) << out;
  EXPECT_TRUE(Contains(out, "1h - 6h              2\n")) << out;
  EXPECT_TRUE(Contains(out, ">= 30d               0\n")) << out;

  json::object doc = CliJson({"topic", "--topic=" + t});
  json::object data = doc["data"].as_object();
  EXPECT_EQ(Str(data["topic"]), t);
  EXPECT_EQ(Int(data["waitingQueueSize"]), 3);
  EXPECT_EQ(Int(data["waitingQueueInfo"].as_object()["sizeOf1hourTo6hour"]), 2);

  // An unknown topic is all zero, not an error.
  EXPECT_TRUE(Contains(CliOk({"topic", "--topic=" + Topic("unknown")}), "waiting    0\n"));
}

TEST_F(CliTest, MonitorShowsTheLastInterval) {
  // Intervals (60 s by default) are aligned to the epoch; the monitor shows the last completed one.
  constexpr int64_t kInterval = 60'000;
  std::string t = Topic();
  Advance(kInterval - Now() % kInterval);
  SendOk(t, "m", 0, {{"msgId", "a"}});
  SendOk(t, "m", 0, {{"msgId", "b"}});
  PullOk(t, 1);
  Advance(kInterval - Now() % kInterval);  // the interval with these requests has completed
  std::string out = CliOk({"monitor"});
  EXPECT_TRUE(Contains(out, "SEND  PULL")) << out;
  size_t row = out.find(t + " ");
  ASSERT_NE(row, std::string::npos) << out;
  std::istringstream cells(out.substr(row + t.size(), out.find('\n', row) - row - t.size()));
  int64_t sends = -1, pulls = -1;
  cells >> sends >> pulls;
  EXPECT_EQ(sends, 2) << out;
  EXPECT_EQ(pulls, 1) << out;

  json::object doc = CliJson({"monitor"});
  EXPECT_EQ(Int(doc["code"]), 200);
  ASSERT_TRUE(doc["data"].is_object());
  EXPECT_TRUE(doc["data"].as_object()["requestStatsList"].is_array()) << json::serialize(doc);
}

}  // namespace
}  // namespace chronoq::it
