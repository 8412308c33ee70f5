// Two chronoq nodes on one Redis deployment (storage=redis): what one node does, the other sees.
// Each case runs on a standalone redis-server and on a 3-master Redis Cluster. Both nodes run
// test clocks, set to the same time, so trigger times mean the same on both.
#include <gtest/gtest.h>

#include <boost/json.hpp>
#include <latch>
#include <set>
#include <string>
#include <thread>

#include "tests/testutil/redis_servers.h"
#include "tests/testutil/server_harness.h"

namespace chronoq::testutil {
namespace {

namespace json = boost::json;

class TwoNodesTest : public ::testing::TestWithParam<bool> {  // param: on a cluster
 protected:
  void SetUp() override {
    Status s = GetParam() ? cluster_.Start() : redis_.Start();
    ASSERT_TRUE(s.ok()) << s.ToString();
    const std::string url = GetParam() ? cluster_.url() : redis_.url();
    const std::vector<std::string> flags = {"--storage=redis", "--redis-url=" + url,
                                            "--namespace=two-nodes", "--test-clock"};
    s = a_.Start(flags);
    ASSERT_TRUE(s.ok()) << s.ToString();
    s = b_.Start(flags);
    ASSERT_TRUE(s.ok()) << s.ToString();
    api_a_ = std::make_unique<ApiClient>(a_.endpoint());
    api_b_ = std::make_unique<ApiClient>(b_.endpoint());
    // The same time on both nodes: move the one behind forward.
    int64_t ta = api_a_->Now();
    int64_t tb = api_b_->Now();
    if (ta < tb) api_a_->AdvanceClock(tb - ta);
    if (tb < ta) api_b_->AdvanceClock(ta - tb);
    ASSERT_EQ(api_a_->Now(), api_b_->Now());
  }
  void AdvanceBoth(int64_t ms) {
    api_a_->AdvanceClock(ms);
    api_b_->AdvanceClock(ms);
  }
  // Starts `c` as a third node of the namespace with `flag`, its clock at the other two's time.
  void StartThirdNode(ServerProcess& c, const std::string& flag, std::unique_ptr<ApiClient>& api) {
    Status s =
        c.Start({"--storage=redis", "--redis-url=" + (GetParam() ? cluster_.url() : redis_.url()),
                 "--namespace=two-nodes", "--test-clock", flag});
    ASSERT_TRUE(s.ok()) << s.ToString();
    api = std::make_unique<ApiClient>(c.endpoint());
    const int64_t ta = api_a_->Now(), tc = api->Now();
    if (tc < ta) api->AdvanceClock(ta - tc);
    if (ta < tc) AdvanceBoth(tc - ta);
    ASSERT_EQ(api->Now(), api_a_->Now());
  }
  static std::string Id(const json::value& m) { return std::string(m.at("msgId").as_string()); }
  static std::vector<std::string> Ids(const ApiResponse& r) {
    std::vector<std::string> out;
    const json::value& l = r.at("delayMsgList");
    if (l.is_array()) {
      for (const json::value& m : l.as_array()) out.push_back(Id(m));
    }
    return out;
  }

  RedisStandalone redis_;
  RedisCluster cluster_;
  ServerProcess a_;
  ServerProcess b_;
  std::unique_ptr<ApiClient> api_a_;
  std::unique_ptr<ApiClient> api_b_;
};

TEST_P(TwoNodesTest, SentThroughOneNodePulledAndAckedThroughTheOther) {
  ApiResponse r = api_a_->Queue(
      "sendMsg", {{"topic", "t"}, {"msgId", "m1"}, {"msg", "hello"}, {"delayMillis", "0"}});
  ASSERT_EQ(r.code(), 200) << r.Describe();
  r = api_b_->Queue("pullMsg", {{"topic", "t"}, {"batch", "10"}});
  ASSERT_EQ(r.code(), 200) << r.Describe();
  ASSERT_EQ(Ids(r), std::vector<std::string>{"m1"});
  EXPECT_EQ(r.at("delayMsgList").as_array()[0].at("msg").as_string(), "hello");
  // Consuming now: neither node delivers it again.
  EXPECT_TRUE(Ids(api_a_->Queue("pullMsg", {{"topic", "t"}})).empty());
  ASSERT_EQ(api_b_->Queue("ackMsg", {{"topic", "t"}, {"msgId", "m1"}, {"ack", "true"}}).code(),
            200);
  r = api_a_->Queue("getMsg", {{"topic", "t"}, {"msgId", "m1"}});
  ASSERT_EQ(r.code(), 200) << r.Describe();
  EXPECT_EQ(r.at("delayMsg").at("status").as_int64(), 4);  // CONSUME_OK
}

TEST_P(TwoNodesTest, ALongPollParkedOnOneNodeIsAnsweredBySendThroughTheOther) {
  ApiClient poller(a_.endpoint());  // its own connection: the answer comes later
  ASSERT_TRUE(
      poller
          .BeginQueue("longPollingMsg",
                      {{"topic", "lp"}, {"batch", "5"}, {"longPollingTimeoutMillis", "60000"}})
          .ok());
  ASSERT_TRUE(api_a_->WaitParked(1));
  ASSERT_EQ(
      api_b_
          ->Queue("sendMsg", {{"topic", "lp"}, {"msgId", "x"}, {"msg", "m"}, {"delayMillis", "0"}})
          .code(),
      200);
  // Answered through the publication: no clock moves. Real seconds, as above: 5 s ran out once
  // on a Cluster with the whole suite and benchmarks sharing two cores.
  ApiResponse r = poller.Finish(std::chrono::seconds(20));
  ASSERT_EQ(r.code(), 200) << r.Describe();
  EXPECT_EQ(Ids(r), std::vector<std::string>{"x"});
}

TEST_P(TwoNodesTest, ALongPollIsAnsweredAtATriggerTimeSetThroughTheOtherNode) {
  ApiClient poller(a_.endpoint());
  ASSERT_TRUE(
      poller
          .BeginQueue("longPollingMsg", {{"topic", "later"}, {"longPollingTimeoutMillis", "60000"}})
          .ok());
  ASSERT_TRUE(api_a_->WaitParked(1));
  ASSERT_EQ(api_b_
                ->Queue("sendMsg",
                        {{"topic", "later"}, {"msgId", "d"}, {"msg", "m"}, {"delayMillis", "5000"}})
                .code(),
            200);
  AdvanceBoth(4'999);
  EXPECT_EQ(api_a_->ParkedLongPolls(), 1);  // not before its time
  AdvanceBoth(1);
  // Real seconds, not test time: the answer needs a publication through Redis and a pull, which
  // took over 5 s once on a Cluster under ASan with other tests running. A wake that is lost
  // never comes, so a longer wait still fails then.
  ApiResponse r = poller.Finish(std::chrono::seconds(20));
  ASSERT_EQ(r.code(), 200) << r.Describe();
  EXPECT_EQ(Ids(r), std::vector<std::string>{"d"});
}

TEST_P(TwoNodesTest, NoMessageGoesToTwoConsumersAtOnce) {
  constexpr int kMessages = 600;
  for (int i = 0; i < kMessages; ++i) {
    ASSERT_EQ(api_a_
                  ->Queue("sendMsg", {{"topic", "race"},
                                      {"msgId", "m" + std::to_string(i)},
                                      {"msg", "x"},
                                      {"delayMillis", "0"}})
                  .code(),
              200);
  }
  // Four consumers, two per node, pull until nothing is left. A's start once B has answered a
  // pull, so that both nodes take part in the race whatever the host's load (A's alone could
  // otherwise drain the topic before B's first answer).
  std::vector<std::vector<std::string>> got(4);
  std::vector<std::thread> consumers;
  std::latch b_answered(1);
  std::atomic<bool> b_counted{false};
  for (int c = 0; c < 4; ++c) {
    consumers.emplace_back([&, c] {
      const bool on_b = c % 2 == 1;
      ApiClient api(on_b ? b_.endpoint() : a_.endpoint());
      if (!on_b) b_answered.wait();
      for (;;) {
        ApiResponse r = api.Queue("pullMsg", {{"topic", "race"}, {"batch", "7"}});
        if (on_b && !b_counted.exchange(true)) b_answered.count_down();
        std::vector<std::string> ids = Ids(r);
        if (ids.empty()) break;
        got[c].insert(got[c].end(), ids.begin(), ids.end());
      }
    });
  }
  for (auto& t : consumers) t.join();
  std::multiset<std::string> all;
  for (const auto& g : got) all.insert(g.begin(), g.end());
  EXPECT_EQ(all.size(), static_cast<size_t>(kMessages));
  EXPECT_EQ(std::set<std::string>(all.begin(), all.end()).size(), static_cast<size_t>(kMessages))
      << "a message was delivered twice";
  EXPECT_FALSE(got[0].empty() && got[2].empty());  // node A served some
  EXPECT_FALSE(got[1].empty() && got[3].empty());  // node B served some
}

TEST_P(TwoNodesTest, BothNodesListTheSameTopics) {
  ASSERT_EQ(api_a_->Queue("sendMsg", {{"topic", "ta"}, {"msg", "m"}, {"delayMillis", "0"}}).code(),
            200);
  ASSERT_EQ(
      api_b_->Queue("sendMsg", {{"topic", "tb"}, {"msg", "m"}, {"delayMillis", "60000"}}).code(),
      200);
  ApiResponse la = api_a_->Monitor("getTopicInfoList");
  ApiResponse lb = api_b_->Monitor("getTopicInfoList");
  ASSERT_EQ(la.code(), 200) << la.Describe();
  EXPECT_EQ(json::serialize(la.at("data")), json::serialize(lb.at("data")));
  EXPECT_EQ(la.at("data").as_array().size(), 2u);
}

TEST_P(TwoNodesTest, MixedPrioritiesSentThroughOneNodeArePulledInPriorityOrderThroughTheOther) {
  // Sent in an order that is neither the priority order nor its reverse; all ready at once.
  const std::vector<std::pair<std::string, int>> sends = {
      {"p0a", 0}, {"p5a", 5}, {"p9a", 9}, {"p0b", 0}, {"p3a", 3}, {"p9b", 9}, {"p5b", 5}};
  for (const auto& [id, priority] : sends) {
    ApiResponse r = api_a_->Queue("sendMsg", {{"topic", "prio"},
                                              {"msgId", id},
                                              {"msg", "m"},
                                              {"delayMillis", "0"},
                                              {"priority", std::to_string(priority)}});
    ASSERT_EQ(r.code(), 200) << r.Describe();
  }
  // One later message of the top priority, ready after the others: still pulled before them.
  ASSERT_EQ(api_a_
                ->Queue("sendMsg", {{"topic", "prio"},
                                    {"msgId", "p9late"},
                                    {"msg", "m"},
                                    {"delayMillis", "1000"},
                                    {"priority", "9"}})
                .code(),
            200);
  AdvanceBoth(1'000);
  ApiResponse r = api_b_->Queue("pullMsg", {{"topic", "prio"}, {"batch", "3"}});
  ASSERT_EQ(r.code(), 200) << r.Describe();
  EXPECT_EQ(Ids(r), (std::vector<std::string>{"p9a", "p9b", "p9late"}));
  EXPECT_EQ(r.at("delayMsgList").as_array()[0].at("priority").as_int64(), 9);
  r = api_b_->Queue("pullMsg", {{"topic", "prio"}, {"batch", "10"}});
  ASSERT_EQ(r.code(), 200) << r.Describe();
  EXPECT_EQ(Ids(r), (std::vector<std::string>{"p5a", "p5b", "p3a", "p0a", "p0b"}));
}

TEST_P(TwoNodesTest, ACountThroughOneNodeWakesALongPollParkedOnTheOther) {
  ASSERT_EQ(api_a_
                ->Queue("sendMsg", {{"topic", "cnt"},
                                    {"msgId", "c"},
                                    {"msg", "m"},
                                    {"delayMillis", "3600000"},
                                    {"countTrigger", "2"}})
                .code(),
            200);
  ApiClient poller(b_.endpoint());
  ASSERT_TRUE(
      poller.BeginQueue("longPollingMsg", {{"topic", "cnt"}, {"longPollingTimeoutMillis", "60000"}})
          .ok());
  ASSERT_TRUE(api_b_->WaitParked(1));
  ApiResponse c = api_a_->Queue("countMsg", {{"topic", "cnt"}, {"msgId", "c"}});
  ASSERT_EQ(c.code(), 200) << c.Describe();
  EXPECT_EQ(c.at("delayMsg").at("status").as_int64(), 1);  // 1 of 2: still waiting
  EXPECT_EQ(api_b_->ParkedLongPolls(), 1);
  c = api_a_->Queue("countMsg", {{"topic", "cnt"}, {"msgId", "c"}});
  ASSERT_EQ(c.code(), 200) << c.Describe();
  EXPECT_EQ(c.at("delayMsg").at("status").as_int64(), 2);
  // Answered through the publication: no clock moves. Real seconds, as above: 5 s ran out once
  // on a Cluster with the whole suite and benchmarks sharing two cores.
  ApiResponse r = poller.Finish(std::chrono::seconds(20));
  ASSERT_EQ(r.code(), 200) << r.Describe();
  EXPECT_EQ(Ids(r), std::vector<std::string>{"c"});
}

// A rolling upgrade: a third node writing the records of the builds before issue 20
// (--redis-format=1, hashes) beside nodes writing the default format (2, MessagePack strings);
// each node pulls, nacks, acks and reads what the others wrote.
TEST_P(TwoNodesTest, NodesWritingDifferentRecordFormatsShareANamespace) {
  ServerProcess c;
  std::unique_ptr<ApiClient> api_c;
  ASSERT_NO_FATAL_FAILURE(StartThirdNode(c, "--redis-format=1", api_c));
  ASSERT_EQ(
      api_c
          ->Queue(
              "sendMsg",
              {{"topic", "f"}, {"msgId", "old"}, {"msg", "from format 1"}, {"delayMillis", "0"}})
          .code(),
      200);
  ASSERT_EQ(
      api_a_
          ->Queue(
              "sendMsg",
              {{"topic", "f"}, {"msgId", "new"}, {"msg", "from format 2"}, {"delayMillis", "0"}})
          .code(),
      200);
  ApiResponse r = api_c->Queue("pullMsg", {{"topic", "f"}, {"batch", "10"}});
  ASSERT_EQ(r.code(), 200) << r.Describe();
  ASSERT_EQ(Ids(r), (std::vector<std::string>{"old", "new"}));
  EXPECT_EQ(r.at("delayMsgList").as_array()[1].at("msg").as_string(), "from format 2");
  // Nacked through the newest node, pulled again through the old-format one, and the other way.
  ASSERT_EQ(api_b_->Queue("ackMsg", {{"topic", "f"}, {"msgId", "old"}, {"ack", "false"}}).code(),
            200);
  ASSERT_EQ(api_c->Queue("ackMsg", {{"topic", "f"}, {"msgId", "new"}, {"ack", "false"}}).code(),
            200);
  r = api_a_->Queue("pullMsg", {{"topic", "f"}, {"batch", "10"}});
  ASSERT_EQ(r.code(), 200) << r.Describe();
  ASSERT_EQ(Ids(r), (std::vector<std::string>{"old", "new"}));
  EXPECT_EQ(r.at("delayMsgList").as_array()[0].at("msg").as_string(), "from format 1");
  EXPECT_EQ(r.at("delayMsgList").as_array()[0].at("retry").as_int64(), 2);
  ASSERT_EQ(api_c->Queue("ackMsg", {{"topic", "f"}, {"msgId", "old"}, {"ack", "true"}}).code(),
            200);
  ASSERT_EQ(api_b_->Queue("ackMsg", {{"topic", "f"}, {"msgId", "new"}, {"ack", "true"}}).code(),
            200);
  for (ApiClient* api : {api_a_.get(), api_c.get()}) {
    for (const char* id : {"old", "new"}) {
      r = api->Queue("getMsg", {{"topic", "f"}, {"msgId", id}});
      ASSERT_EQ(r.code(), 200) << r.Describe();
      EXPECT_EQ(r.at("delayMsg").at("status").as_int64(), 4) << id;  // CONSUME_OK
    }
  }
}

// redis-format 4 beside format 2: a node of format 4 creates the topics it is first to write in
// the bucketed keyspace (layout 4), a topic that exists keeps its layout whoever writes to it,
// and every node serves both layouts: each pulls, nacks, acks, reads and counts what the other
// wrote, on a topic of either layout.
TEST_P(TwoNodesTest, NodesOfFormatFourAndTwoServeTopicsOfBothLayouts) {
  ServerProcess c;
  std::unique_ptr<ApiClient> api_c;
  ASSERT_NO_FATAL_FAILURE(StartThirdNode(c, "--redis-format=4", api_c));
  auto send = [](ApiClient& api, const std::string& topic, const std::string& id,
                 const std::string& delay) {
    return api
        .Queue("sendMsg",
               {{"topic", topic}, {"msgId", id}, {"msg", "body of " + id}, {"delayMillis", delay}})
        .code();
  };
  // "four" is created by the format-4 node, "two" by a format-2 one; then each node writes to
  // the other's topic.
  ASSERT_EQ(send(*api_c, "four", "c-now", "0"), 200);
  ASSERT_EQ(send(*api_c, "four", "c-later", "60000"), 200);
  ASSERT_EQ(send(*api_a_, "four", "a-now", "0"), 200);
  ASSERT_EQ(send(*api_a_, "two", "a-now", "0"), 200);
  ASSERT_EQ(send(*api_c, "two", "c-now", "0"), 200);
  auto raw = [&](const std::vector<std::string>& args) {
    return GetParam() ? cluster_.Command(args)
                      : RedisCommandOnce(redis_.port(), args, redis_.password());
  };
  Result<RedisReply> lay = raw({"GET", "cq:{two-nodes:four}:lay"});
  ASSERT_TRUE(lay.has_value()) << lay.error().ToString();
  EXPECT_EQ(lay->str, "4");
  lay = raw({"GET", "cq:{two-nodes:two}:lay"});
  ASSERT_TRUE(lay.has_value()) << lay.error().ToString();
  EXPECT_TRUE(lay->is_nil());  // layout 2 kept: a key per record
  Result<RedisReply> type = raw({"TYPE", "cq:{two-nodes:two}:r:c-now"});
  ASSERT_TRUE(type.has_value()) << type.error().ToString();
  EXPECT_EQ(type->str, "string");
  type = raw({"TYPE", "cq:{two-nodes:four}:r:a-now"});
  ASSERT_TRUE(type.has_value()) << type.error().ToString();
  EXPECT_EQ(type->str, "none");  // layout 4: the record is a field of a bucket

  for (const char* topic : {"four", "two"}) {
    SCOPED_TRACE(topic);
    // Pulled through the default node, nacked through the format-4 one, pulled again through
    // the other default node, acked crosswise; every node reads the end.
    ApiResponse r = api_b_->Queue("pullMsg", {{"topic", topic}, {"batch", "10"}});
    ASSERT_EQ(r.code(), 200) << r.Describe();
    const std::vector<std::string> first = Ids(r);
    ASSERT_EQ(std::set<std::string>(first.begin(), first.end()),
              (std::set<std::string>{"a-now", "c-now"}));
    for (const std::string& id : first) {
      ASSERT_EQ(api_c->Queue("ackMsg", {{"topic", topic}, {"msgId", id}, {"ack", "false"}}).code(),
                200);
    }
    r = api_a_->Queue("pullMsg", {{"topic", topic}, {"batch", "10"}});
    ASSERT_EQ(r.code(), 200) << r.Describe();
    ASSERT_EQ(Ids(r).size(), 2u);
    EXPECT_EQ(r.at("delayMsgList").as_array()[0].at("retry").as_int64(), 2);
    ASSERT_EQ(
        api_c->Queue("ackMsg", {{"topic", topic}, {"msgId", "a-now"}, {"ack", "true"}}).code(),
        200);
    ASSERT_EQ(
        api_b_->Queue("ackMsg", {{"topic", topic}, {"msgId", "c-now"}, {"ack", "true"}}).code(),
        200);
    for (ApiClient* api : {api_a_.get(), api_c.get()}) {
      for (const char* id : {"a-now", "c-now"}) {
        r = api->Queue("getMsg", {{"topic", topic}, {"msgId", id}});
        ASSERT_EQ(r.code(), 200) << r.Describe();
        EXPECT_EQ(r.at("delayMsg").at("status").as_int64(), 4) << id;  // CONSUME_OK
        EXPECT_EQ(r.at("delayMsg").at("msg").as_string(), std::string("body of ") + id);
      }
    }
  }
  // Both layouts counted alike by every node; the waiting message of layout 4 comes at its time.
  ApiResponse la = api_a_->Monitor("getTopicInfoList");
  ApiResponse lc = api_c->Monitor("getTopicInfoList");
  ASSERT_EQ(la.code(), 200) << la.Describe();
  EXPECT_EQ(json::serialize(la.at("data")), json::serialize(lc.at("data")));
  api_c->AdvanceClock(60'000);
  AdvanceBoth(60'000);
  ApiResponse r = api_b_->Queue("pullMsg", {{"topic", "four"}, {"batch", "10"}});
  ASSERT_EQ(r.code(), 200) << r.Describe();
  EXPECT_EQ(Ids(r), std::vector<std::string>{"c-later"});
}

INSTANTIATE_TEST_SUITE_P(Redis, TwoNodesTest, ::testing::Bool(),
                         [](const ::testing::TestParamInfo<bool>& i) {
                           return i.param ? "Cluster" : "Standalone";
                         });

}  // namespace
}  // namespace chronoq::testutil
