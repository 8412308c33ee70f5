// Many clients at once over real connections: one message goes to one consumer (API.md section
// 4), idempotent sends stay idempotent under races, parked long polls and producers interleave.
#include <atomic>
#include <mutex>
#include <set>
#include <thread>

#include "tests/integration/it_util.h"

namespace chronoq::it {
namespace {

using namespace std::chrono_literals;

class ConcurrencyTest : public ServerTest {
 protected:
  std::vector<std::string> Flags() const override { return {"--http-threads=4"}; }
};

TEST_F(ConcurrencyTest, ConcurrentPullsNeverDeliverAMessageTwice) {
  std::string t = Topic();
  constexpr int kMessages = 600;
  {
    // Sent pipelined on one connection: fast.
    client::HttpConnection& c = api().connection();
    std::string batch;
    for (int i = 0; i < kMessages; ++i) {
      batch += c.Format(
          "POST", std::string(testutil::kQueuePath) + "sendMsg",
          client::FormEncode(
              {{"topic", t}, {"msgId", std::to_string(i)}, {"msg", "m"}, {"delayMillis", "0"}}));
    }
    ASSERT_TRUE(c.SendRaw(batch).ok());
    for (int i = 0; i < kMessages; ++i) {
      Result<client::Response> r = c.ReadResponse(10s);
      ASSERT_TRUE(r.has_value()) << r.error().message();
      ASSERT_EQ(testutil::ToApiResponse(*r).code(), 200);
    }
  }
  std::mutex mu;
  std::multiset<std::string> got;
  std::vector<std::thread> threads;
  for (int i = 0; i < 8; ++i) {
    threads.emplace_back([&, i] {
      ApiClient c(server().endpoint());
      for (;;) {
        ApiResponse r = c.Queue(
            "pullMsg",
            {{"topic", t}, {"batch", std::to_string(1 + i % 4)}, {"ackTimeoutMillis", "600000"}});
        if (r.code() != 200 || !r.at("delayMsgList").is_array()) {
          ADD_FAILURE() << r.Describe();
          return;
        }
        const json::array& l = r.at("delayMsgList").as_array();
        if (l.empty()) return;
        std::lock_guard lock(mu);
        for (const auto& m : l) got.insert(Str(m.at("msgId")));
      }
    });
  }
  for (auto& th : threads) th.join();
  EXPECT_EQ(got.size(), static_cast<size_t>(kMessages));
  EXPECT_EQ(std::set<std::string>(got.begin(), got.end()).size(), got.size())
      << "some message was delivered twice";
  EXPECT_EQ(Int(TopicInfo(t)["ackQueueSize"]), kMessages);
}

TEST_F(ConcurrencyTest, RacingSendsWithOneIdStoreOneMessage) {
  std::string t = Topic();
  constexpr int kThreads = 16;
  std::vector<ApiResponse> answers(kThreads);
  std::atomic<int> ready{0};
  std::vector<std::thread> threads;
  for (int i = 0; i < kThreads; ++i) {
    threads.emplace_back([&, i] {
      ApiClient c(server().endpoint());
      c.connection();  // connect before the race
      ready.fetch_add(1);
      while (ready.load() < kThreads) std::this_thread::yield();
      answers[i] = c.Queue("sendMsg", {{"topic", t},
                                       {"msgId", "same"},
                                       {"msg", "payload-" + std::to_string(i)},
                                       {"delayMillis", "0"}});
    });
  }
  for (auto& th : threads) th.join();
  std::set<std::string> payloads;
  for (const ApiResponse& r : answers) {
    ASSERT_EQ(r.code(), 200) << r.Describe();
    payloads.insert(Str(r.at("delayMsg").at("msg")));
  }
  EXPECT_EQ(payloads.size(), 1u) << "different answers to the same msgId";
  EXPECT_EQ(Int(TopicInfo(t)["readyQueueSize"]), 1);
  std::vector<json::object> l = PullOk(t, 10);
  ASSERT_EQ(l.size(), 1u);
  EXPECT_EQ(Str(l[0]["msg"]), *payloads.begin());
}

TEST_F(ConcurrencyTest, ParkedConsumersAndAProducerInterleave) {
  std::string t = Topic();
  constexpr int kMessages = 300;
  constexpr int kConsumers = 6;
  std::mutex mu;
  std::multiset<std::string> got;
  std::atomic<int> received{0};
  std::atomic<bool> failed{false};
  std::atomic<int> finished{0};
  std::vector<std::thread> consumers;
  for (int i = 0; i < kConsumers; ++i) {
    consumers.emplace_back([&] {
      struct Done {
        std::atomic<int>& n;
        ~Done() { n.fetch_add(1); }
      } done{finished};
      ApiClient c(server().endpoint());
      while (received.load() < kMessages && !failed.load()) {
        ApiResponse r =
            c.Request("POST", std::string(testutil::kQueuePath) + "longPollingMsg",
                      client::FormEncode(
                          {{"topic", t}, {"batch", "3"}, {"longPollingTimeoutMillis", "60000"}}),
                      "application/x-www-form-urlencoded", 30s);
        if (r.code() != 200 || !r.at("delayMsgList").is_array()) {
          failed = true;
          ADD_FAILURE() << r.Describe();
          return;
        }
        for (const auto& m : r.at("delayMsgList").as_array()) {
          std::string id = Str(m.at("msgId"));
          {
            std::lock_guard lock(mu);
            got.insert(id);
          }
          ApiResponse a = c.Queue("ackMsg", {{"topic", t}, {"msgId", id}, {"ack", "true"}});
          if (a.code() != 200) {
            failed = true;
            ADD_FAILURE() << "ack of " << id << ": " << a.Describe();
          }
          // Counted once acked: the clock moves only after every message is acked, so no ack
          // timeout can hand a message out a second time.
          received.fetch_add(1);
        }
      }
    });
  }
  ApiClient producer(server().endpoint());
  for (int i = 0; i < kMessages && !failed.load(); ++i) {
    ApiResponse r = producer.Queue(
        "sendMsg",
        {{"topic", t}, {"msgId", std::to_string(i)}, {"msg", "m"}, {"delayMillis", "0"}});
    ASSERT_EQ(r.code(), 200) << r.Describe();
  }
  // Wait for every message to arrive (each consumer acks what it got), then release the
  // consumers still parked by letting their long polls time out (again, for one that parks late).
  auto deadline = std::chrono::steady_clock::now() + 20s;
  while (received.load() < kMessages && !failed.load() &&
         std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(1ms);
  }
  EXPECT_EQ(received.load(), kMessages);
  while (finished.load() < kConsumers && std::chrono::steady_clock::now() < deadline) {
    Advance(60'000);
    std::this_thread::sleep_for(1ms);
  }
  for (auto& th : consumers) th.join();
  EXPECT_EQ(got.size(), static_cast<size_t>(kMessages));
  EXPECT_EQ(std::set<std::string>(got.begin(), got.end()).size(), got.size())
      << "some message was delivered twice";
  json::object info = TopicInfo(t);
  EXPECT_EQ(Int(info["readyQueueSize"]), 0);
  EXPECT_EQ(Int(info["ackQueueSize"]), 0);
}

}  // namespace
}  // namespace chronoq::it
