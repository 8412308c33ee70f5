// A topic's capacity (API-EXTENSIONS.md section 4) under many connections at once, over real
// sockets and on every storage (on two Redis nodes, the senders spread over both): a topic of
// capacity 1,000 never holds more than 1,000 messages in life, every refusal is code 429 with
// the contract's sentence, and acks free room at once.
#include <fmt/format.h>

#include <atomic>
#include <mutex>
#include <thread>

#include "tests/integration/it_util.h"

namespace chronoq::it {
namespace {

class CapacityTest : public ServerTest {
 protected:
  std::vector<std::string> Flags() const override { return {"--http-threads=4"}; }

  void SetCapacity(const std::string& topic, int64_t capacity) {
    ApiResponse r =
        api().Queue("setTopicConfig", {{"topic", topic}, {"capacity", std::to_string(capacity)}});
    ASSERT_EQ(r.code(), 200) << r.Describe();
  }
  int64_t InLife(const std::string& topic) {
    json::object info = TopicInfo(topic);
    return Int(info["readyQueueSize"]) + Int(info["waitingQueueSize"]) + Int(info["ackQueueSize"]);
  }
};

constexpr int kConnections = 64;
constexpr int kCapacity = 1'000;

TEST_F(CapacityTest, SixtyFourConnectionsNeverOverfillATopic) {
  const std::string t = Topic();
  SetCapacity(t, kCapacity);
  constexpr int kPerConnection = 40;  // 2,560 sends for 1,000 places
  std::atomic<int> accepted{0}, refused{0}, other{0};
  std::mutex mu;
  std::string unexpected;
  std::vector<std::thread> senders;
  for (int c = 0; c < kConnections; ++c) {
    senders.emplace_back([&, c] {
      ApiClient client(server().endpoint());
      for (int i = 0; i < kPerConnection; ++i) {
        ApiResponse r = client.Queue("sendMsg", {{"topic", t},
                                                 {"msgId", fmt::format("c{}-{}", c, i)},
                                                 {"msg", "x"},
                                                 {"delayMillis", i % 2 == 0 ? "0" : "60000"}});
        if (r.code() == 200) {
          accepted.fetch_add(1);
        } else if (r.code() == 429 &&
                   Str(r.at("msg"))
                           .find(fmt::format("' is full: {} messages in life, capacity {}",
                                             kCapacity, kCapacity)) != std::string::npos) {
          refused.fetch_add(1);
        } else {
          other.fetch_add(1);
          std::lock_guard lock(mu);
          unexpected = r.Describe();
        }
      }
    });
  }
  for (auto& s : senders) s.join();
  EXPECT_EQ(other.load(), 0) << unexpected;
  EXPECT_EQ(accepted.load(), kCapacity);
  EXPECT_EQ(refused.load(), kConnections * kPerConnection - kCapacity);
  EXPECT_EQ(InLife(t), kCapacity);
}

TEST_F(CapacityTest, ConsumersFreeRoomWhileSendersRaceAndTheLimitHoldsThroughout) {
  const std::string t = Topic();
  SetCapacity(t, kCapacity);
  std::atomic<bool> stop{false};
  std::atomic<int> accepted{0}, acked{0}, errors{0};
  std::atomic<int64_t> max_seen{0};
  std::vector<std::thread> threads;
  for (int c = 0; c < kConnections; ++c) {
    threads.emplace_back([&, c] {
      ApiClient client(server().endpoint());
      for (int i = 0; !stop.load(); ++i) {
        ApiResponse r = client.Queue("sendMsg", {{"topic", t},
                                                 {"msgId", fmt::format("c{}-{}", c, i)},
                                                 {"msg", "x"},
                                                 {"delayMillis", "0"}});
        if (r.code() == 200) {
          accepted.fetch_add(1);
        } else if (r.code() != 429) {
          errors.fetch_add(1);
        }
      }
    });
  }
  for (int c = 0; c < 4; ++c) {
    threads.emplace_back([&] {
      ApiClient client(server().endpoint());
      while (!stop.load()) {
        ApiResponse r = client.Queue(
            "pullMsg", {{"topic", t}, {"batch", "50"}, {"ackTimeoutMillis", "600000"}});
        if (r.code() != 200 || !r.at("delayMsgList").is_array()) {
          errors.fetch_add(1);
          continue;
        }
        for (const json::value& m : r.at("delayMsgList").as_array()) {
          ApiResponse a = client.Queue("ackMsg", {{"topic", t}, {"msgId", Str(m.at("msgId"))}});
          if (a.code() == 200) {
            acked.fetch_add(1);
          } else {
            errors.fetch_add(1);
          }
        }
      }
    });
  }
  // Watch the count while it runs, until the consumers have freed the room three times over: it
  // may touch the capacity, never pass it.
  const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  while (acked.load() < 3 * kCapacity && std::chrono::steady_clock::now() < give_up) {
    max_seen.store(std::max(max_seen.load(), InLife(t)));
  }
  stop.store(true);
  for (auto& th : threads) th.join();
  EXPECT_EQ(errors.load(), 0);
  EXPECT_LE(max_seen.load(), kCapacity);
  EXPECT_GT(acked.load(), kCapacity) << "acks must have freed room for more sends";
  EXPECT_EQ(InLife(t), accepted.load() - acked.load());
  EXPECT_LE(InLife(t), kCapacity);
}

}  // namespace
}  // namespace chronoq::it
