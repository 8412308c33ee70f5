// Topics (API.md sections 4 and 6): registration in getTopicInfoList and disappearance after
// topic-inactive-millis; the nine half-open waitingQueueInfo buckets; getMonitorData per interval.
#include "tests/integration/it_util.h"

namespace chronoq::it {
namespace {

// ----------------------------------------------------------------------------------------------
// Topic registration

class TopicListTest : public ServerTest {
 protected:
  std::vector<std::string> Flags() const override {
    return {"--topic-inactive-millis=60000", "--end-life-msg-expire-millis=1000"};
  }
};

TEST_F(TopicListTest, ATopicIsKnownFromItsFirstSend) {
  std::string t = Topic();
  EXPECT_FALSE(Listed(t));
  // Reads do not create topics.
  EXPECT_TRUE(PullOk(t).empty());
  TopicInfo(t);
  ExpectAppCode(GetMsg(t, "x"), 404);
  EXPECT_FALSE(Listed(t));
  SendOk(t, "m", 5000);
  EXPECT_TRUE(Listed(t));
}

TEST_F(TopicListTest, AnIdleEmptyTopicDisappearsAfterTopicInactiveMillis) {
  std::string t = Topic();
  SendOk(t, "m", 0, {{"msgId", "a"}});
  ASSERT_EQ(PullOk(t).size(), 1u);
  ExpectAppCode(Ack(t, "a"), 200);
  Advance(59'999);
  EXPECT_TRUE(Listed(t));
  Advance(2);
  EXPECT_FALSE(Listed(t));
  json::object info = TopicInfo(t);
  EXPECT_EQ(Int(info["waitingQueueSize"]), 0);
  // Sending again brings it back.
  SendOk(t, "m", 0);
  EXPECT_TRUE(Listed(t));
}

TEST_F(TopicListTest, ATopicWithMessagesInLifeStaysKnown) {
  std::string waiting = Topic("waiting");
  std::string consuming = Topic("consuming");
  SendOk(waiting, "m", 10 * kMinute, {{"msgId", "w"}});
  SendOk(consuming, "m", 0, {{"msgId", "c"}});
  ASSERT_EQ(PullOk(consuming, 1, 10 * kMinute).size(), 1u);
  Advance(5 * kMinute);
  EXPECT_TRUE(Listed(waiting));
  EXPECT_TRUE(Listed(consuming));
  Advance(5 * kMinute);  // w is ready, c is ready again after its ack timeout
  std::vector<json::object> l = PullOk(waiting);
  ASSERT_EQ(l.size(), 1u);
  ExpectAppCode(Ack(waiting, "w"), 200);
  ASSERT_EQ(PullOk(consuming).size(), 1u);
  ExpectAppCode(Delete(consuming, "c"), 200);
  Advance(60'001);
  EXPECT_FALSE(Listed(waiting));
  EXPECT_FALSE(Listed(consuming));
}

TEST_F(TopicListTest, ListedEntriesCarryTheTopicCounts) {
  std::string t = Topic();
  SendOk(t, "m", 2 * kMinute);
  SendOk(t, "m", 0);
  SendOk(t, "m", 0);
  ASSERT_EQ(PullOk(t).size(), 1u);
  ApiResponse r = api().Monitor("getTopicInfoList");
  ASSERT_TRUE(r.at("data").is_array()) << r.Describe();
  for (const auto& e : r.at("data").as_array()) {
    if (Str(e.at("topic")) != t) continue;
    EXPECT_EQ(Int(e.at("waitingQueueSize")), 1);
    EXPECT_EQ(Int(e.at("readyQueueSize")), 1);
    EXPECT_EQ(Int(e.at("ackQueueSize")), 1);
    EXPECT_EQ(Int(e.at("waitingQueueInfo").at("sizeOf1minTo10min")), 1);
    EXPECT_EQ(e.as_object(), json::value(TopicInfo(t)).as_object());
    return;
  }
  ADD_FAILURE() << "topic not listed: " << r.Describe();
}

// ----------------------------------------------------------------------------------------------
// waitingQueueInfo buckets

class BucketsTest : public ServerTest {};

// Index of the bucket of a message triggering in `ms` (half-open [lo, hi)).
int BucketOf(int64_t ms) {
  const int64_t upper[] = {kMinute,   10 * kMinute, 30 * kMinute, kHour,
                           6 * kHour, kDay,         7 * kDay,     30 * kDay};
  for (int i = 0; i < 8; ++i) {
    if (ms < upper[i]) return i;
  }
  return 8;
}

TEST_F(BucketsTest, BucketsAreHalfOpenAndSumToTheWaitingSize) {
  std::string t = Topic();
  std::vector<int64_t> delays = {1};
  for (int64_t b :
       {kMinute, 10 * kMinute, 30 * kMinute, kHour, 6 * kHour, kDay, 7 * kDay, 30 * kDay}) {
    delays.push_back(b - 1);
    delays.push_back(b);
  }
  delays.push_back(int64_t{10} * 365 * kDay);
  const Form long_ttl = {{"ttlMillis", std::to_string(100 * kDay)}};  // ready ones stay ready
  for (int64_t d : delays) SendOk(t, "m", d, long_ttl);
  SendOk(t, "ready", 0, long_ttl);

  int64_t since_send = 0;
  for (int64_t elapsed : {int64_t{0}, int64_t{1}, kMinute, 7 * kDay}) {
    SCOPED_TRACE(elapsed);
    Advance(elapsed - since_send);
    since_send = elapsed;
    std::vector<int64_t> expected(9, 0);
    int64_t waiting = 0;
    int64_t ready = 1;
    for (int64_t d : delays) {
      int64_t left = d - since_send;
      if (left <= 0) {
        ++ready;
        continue;
      }
      ++waiting;
      ++expected[BucketOf(left)];
    }
    json::object info = TopicInfo(t);
    EXPECT_EQ(Int(info["waitingQueueSize"]), waiting);
    EXPECT_EQ(Int(info["readyQueueSize"]), ready);
    int64_t sum = 0;
    for (int i = 0; i < 9; ++i) {
      int64_t got = Int(info["waitingQueueInfo"].at(BucketNames()[i]));
      EXPECT_EQ(got, expected[i]) << BucketNames()[i];
      sum += got;
    }
    EXPECT_EQ(sum, waiting);
  }
}

TEST_F(BucketsTest, EveryBucketBoundaryExactly) {
  std::string t = Topic();
  // Exactly 2 per bucket: lo and hi - 1.
  SendOk(t, "m", 1);
  SendOk(t, "m", kMinute - 1);
  for (int64_t b : {kMinute, 10 * kMinute, 30 * kMinute, kHour, 6 * kHour, kDay, 7 * kDay}) {
    SendOk(t, "m", b);
  }
  for (int64_t b : {10 * kMinute, 30 * kMinute, kHour, 6 * kHour, kDay, 7 * kDay, 30 * kDay}) {
    SendOk(t, "m", b - 1);
  }
  SendOk(t, "m", 30 * kDay);
  SendOk(t, "m", 3650 * kDay);
  json::object info = TopicInfo(t);
  EXPECT_EQ(Int(info["waitingQueueSize"]), 18);
  for (const auto& name : BucketNames()) {
    EXPECT_EQ(Int(info["waitingQueueInfo"].at(name)), 2) << name;
  }
}

// ----------------------------------------------------------------------------------------------
// getMonitorData

constexpr int64_t kInterval = 10'000;

std::vector<std::string> MonitorFlags() { return {"--monitor-interval-seconds=10"}; }

class MonitorTest : public ServerTest {
 protected:
  std::vector<std::string> Flags() const override { return MonitorFlags(); }
  void SetUp() override {
    ServerTest::SetUp();
    // getMonitorData counts what one node did (API.md): on two nodes, make every request there.
    if (!HasFatalFailure()) api().OneNode();
  }

  // Moves the clock to the start of the next interval (intervals are aligned to the epoch) and
  // answers it.
  int64_t AlignToInterval() {
    int64_t now = Now();
    int64_t rem = now % kInterval;
    return rem == 0 ? now : Advance(kInterval - rem);
  }
  json::object Data() {
    ApiResponse r = api().Monitor("getMonitorData");
    EXPECT_EQ(r.code(), 200) << r.Describe();
    const json::value& d = r.at("data");
    return d.is_object() ? d.as_object() : json::object();
  }
  // The entry of `topic` in one of the lists, or null.
  static json::value Entry(json::object& data, const char* list, const std::string& topic) {
    if (!data[list].is_array()) return nullptr;
    for (const auto& e : data[list].as_array()) {
      if (e.is_object() && Str(e.as_object().at("topic")) == topic) return e;
    }
    return nullptr;
  }
};

TEST_F(MonitorTest, ListsAreEmptyBeforeTheFirstIntervalCompletes) {
  // A fresh server of its own: nothing of another test counted.
  ServerProcess fresh;
  std::vector<std::string> flags = {"--test-clock", "--log-level=warn"};
  for (const auto& f : MonitorFlags()) flags.push_back(f);
  Status s = fresh.Start(flags);
  ASSERT_TRUE(s.ok()) << s.message();
  ApiClient c(fresh.endpoint());
  ApiResponse r = c.Monitor("getMonitorData");
  EXPECT_EQ(r.http.body, R"({"code":200,"msg":"success","data":{"requestStatsList":[],)"
                         R"("pullMsgTimeGapStatsList":[],"readyQueueTimeGapStatsList":[]}})");
  // Something counted now shows only once its interval has completed.
  int64_t now = c.Now();
  ASSERT_EQ(c.Queue("sendMsg", {{"topic", "fresh"}, {"msg", "m"}, {"delayMillis", "0"}}).code(),
            200);
  r = c.Monitor("getMonitorData");
  EXPECT_TRUE(r.at("data").at("requestStatsList").as_array().empty()) << r.Describe();
  c.AdvanceClock(kInterval - now % kInterval);
  r = c.Monitor("getMonitorData");
  ASSERT_EQ(r.at("data").at("requestStatsList").as_array().size(), 1u) << r.Describe();
  EXPECT_EQ(Int(r.at("data").at("requestStatsList").at(0).at("sendMsg")), 1);
  EXPECT_EQ(fresh.Stop(SIGTERM), 0);
}

TEST_F(MonitorTest, CountsOfTheLastCompletedInterval) {
  std::string t = Topic();
  std::string idle = Topic("idle");
  int64_t start = AlignToInterval();
  // sendMsg x3 (one of them expires), triggerMsgReady x3.
  SendOk(t, "m", 1000, {{"msgId", "a"}});
  SendOk(t, "m", 1000, {{"msgId", "b"}});
  SendOk(t, "m", 100, {{"msgId", "e"}, {"ttlMillis", "100"}});
  Advance(1500);  // e expired at +200 (triggerMsgEndLife); a, b ready at +1000
  std::vector<json::object> l = PullOk(t, 1, 1000);  // a, gap 500
  ASSERT_EQ(l.size(), 1u);
  EXPECT_EQ(MsgId(l[0]), "a");
  Advance(500);
  l = PullOk(t, 1, 1000);  // b, gap 1000
  ASSERT_EQ(l.size(), 1u);
  EXPECT_EQ(MsgId(l[0]), "b");
  ExpectAppCode(Ack(t, "a"), 200);
  Advance(1000);  // b's ack timeout passes: triggerMsgTimeout
  ExpectAppCode(GetMsg(t, "a"), 200);
  ExpectAppCode(GetMsg(t, "nope"), 404);  // not counted
  ExpectAppCode(Delete(t, "b"), 200);
  // Nothing counted for `idle`: an empty pull and a 404.
  EXPECT_TRUE(PullOk(idle).empty());
  ExpectAppCode(GetMsg(idle, "x"), 404);
  ASSERT_LT(Now(), start + kInterval);

  // Still inside the interval: the previous interval's data shows, not this one's.
  json::object d = Data();
  EXPECT_TRUE(Entry(d, "requestStatsList", t).is_null());

  Advance(start + kInterval - Now());
  d = Data();
  json::value rs = Entry(d, "requestStatsList", t);
  ASSERT_TRUE(rs.is_object()) << json::serialize(d);
  EXPECT_EQ(Keys(rs), (std::vector<std::string>{"topic", "sendMsg", "pullMsg", "deleteMsg",
                                                "ackMsg", "getMsg", "triggerMsgReady",
                                                "triggerMsgEndLife", "triggerMsgTimeout"}));
  EXPECT_EQ(Int(rs.at("sendMsg")), 3);
  EXPECT_EQ(Int(rs.at("pullMsg")), 2);
  EXPECT_EQ(Int(rs.at("deleteMsg")), 1);
  EXPECT_EQ(Int(rs.at("ackMsg")), 1);
  EXPECT_EQ(Int(rs.at("getMsg")), 1);
  EXPECT_EQ(Int(rs.at("triggerMsgReady")), 3);
  EXPECT_EQ(Int(rs.at("triggerMsgEndLife")), 1);
  EXPECT_EQ(Int(rs.at("triggerMsgTimeout")), 1);

  json::value pg = Entry(d, "pullMsgTimeGapStatsList", t);
  ASSERT_TRUE(pg.is_object()) << json::serialize(d);
  EXPECT_EQ(Keys(pg), (std::vector<std::string>{"topic", "count", "avg", "max"}));
  EXPECT_EQ(Int(pg.at("count")), 2);
  EXPECT_TRUE(pg.at("avg").is_number());
  EXPECT_DOUBLE_EQ(pg.at("avg").to_number<double>(), 750.0);
  EXPECT_EQ(Int(pg.at("max")), 1000);

  json::value rg = Entry(d, "readyQueueTimeGapStatsList", t);
  ASSERT_TRUE(rg.is_object()) << json::serialize(d);
  EXPECT_EQ(Int(rg.at("count")), 3);
  EXPECT_DOUBLE_EQ(rg.at("avg").to_number<double>(), 0.0);  // the test clock is never late
  EXPECT_EQ(Int(rg.at("max")), 0);

  EXPECT_TRUE(Entry(d, "requestStatsList", idle).is_null()) << json::serialize(d);
  EXPECT_TRUE(Entry(d, "pullMsgTimeGapStatsList", idle).is_null());

  // The next interval counted nothing for the topic: it is gone from every list.
  Advance(kInterval);
  d = Data();
  EXPECT_TRUE(Entry(d, "requestStatsList", t).is_null()) << json::serialize(d);
  EXPECT_TRUE(Entry(d, "pullMsgTimeGapStatsList", t).is_null());
  EXPECT_TRUE(Entry(d, "readyQueueTimeGapStatsList", t).is_null());
}

TEST_F(MonitorTest, ExhaustedRetriesCountAsEndLife) {
  std::string t = Topic();
  int64_t start = AlignToInterval();
  SendOk(t, "m", 0, {{"msgId", "a"}, {"maxRetry", "0"}});
  ASSERT_EQ(PullOk(t, 1, 1000).size(), 1u);
  Advance(1000);  // the only delivery times out: status 6
  EXPECT_EQ(StatusOf(t, "a"), 6);
  Advance(start + kInterval - Now());
  json::object d = Data();
  json::value rs = Entry(d, "requestStatsList", t);
  ASSERT_TRUE(rs.is_object()) << json::serialize(d);
  EXPECT_EQ(Int(rs.at("triggerMsgEndLife")), 1);
  EXPECT_EQ(Int(rs.at("triggerMsgTimeout")), 1);
  EXPECT_EQ(Int(rs.at("pullMsg")), 1);
  EXPECT_EQ(Int(rs.at("getMsg")), 1);
}

TEST_F(MonitorTest, TriggerMsgReadyCountsMessagesNotTopics) {
  std::string t = Topic();
  int64_t start = AlignToInterval();
  for (int i = 0; i < 5; ++i) SendOk(t, "m", 100 + i);
  Advance(200);
  Advance(start + kInterval - Now());
  json::object d = Data();
  json::value rs = Entry(d, "requestStatsList", t);
  ASSERT_TRUE(rs.is_object()) << json::serialize(d);
  EXPECT_EQ(Int(rs.at("triggerMsgReady")), 5);
  EXPECT_EQ(Int(rs.at("sendMsg")), 5);
}

}  // namespace
}  // namespace chronoq::it
