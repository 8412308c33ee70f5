// getMsgHistory through the real binary on every storage, and on two nodes sharing one Redis
// (redis2: the send through one node, the rest through the other): the JSON shape, each
// transition with its time, node (node-id) and reason, an ack deadline that passed shown at
// once and a late ack after it, and the refusals. The cases per transition are the backend
// contract's (tests/contract/backend_contract_history_test.cc).
#include "tests/integration/it_util.h"

namespace chronoq::it {
namespace {

class MsgHistoryTest : public ServerTest {
 protected:
  std::vector<std::string> Flags() const override { return {"--node-id=node-a"}; }
  ApiResponse History(const std::string& topic, const std::string& id) {
    return api().Queue("getMsgHistory", {{"topic", topic}, {"msgId", id}});
  }
  // The events of an answer with their attempts: "delivered#1".
  static std::vector<std::string> Events(const ApiResponse& r) {
    std::vector<std::string> out;
    const json::value& h = r.at("history");
    if (!h.is_array()) return out;
    for (const json::value& e : h.as_array()) {
      out.push_back(Str(e.as_object().at("event")) + "#" +
                    std::to_string(Int(e.as_object().at("attempt"))));
    }
    return out;
  }
};

TEST_F(MsgHistoryTest, EachTransitionWithTimeNodeAndReasonAndAPassedDeadlineAtOnce) {
  const std::string t = Topic();
  ASSERT_EQ(api().Queue("setTopicConfig", {{"topic", t}, {"history", "true"}}).code(), 200);
  const int64_t sent_at = Now();
  SendOk(t, "x", 0, {{"msgId", "a"}});
  ASSERT_EQ(PullOk(t, 1, 30'000).size(), 1u);
  Advance(10);
  ASSERT_EQ(
      api()
          .Queue("ackMsg", {{"topic", t}, {"msgId", "a"}, {"ack", "false"}, {"reason", "db down"}})
          .code(),
      200);
  ASSERT_EQ(PullOk(t, 1, 30'000).size(), 1u);
  const int64_t deadline = Now() + 30'000;
  Advance(30'000);

  ApiResponse r = History(t, "a");
  ASSERT_EQ(r.code(), 200) << r.Describe();
  EXPECT_EQ(Events(r), (std::vector<std::string>{"sent#0", "delivered#1", "nacked#1", "delivered#2",
                                                 "timedOut#2"}))
      << r.Describe();
  const json::array& h = r.at("history").as_array();
  ASSERT_EQ(h.size(), 5u);
  EXPECT_EQ(json::serialize(h[0]), R"({"time":)" + std::to_string(sent_at) +
                                       R"(,"node":"node-a","event":"sent","attempt":0})");
  EXPECT_EQ(Str(h[2].as_object().at("reason")), "db down");
  EXPECT_EQ(Int(h[2].as_object().at("time")), sent_at + 10);
  EXPECT_EQ(Int(h[4].as_object().at("time")), deadline);
  for (const json::value& e : h) EXPECT_EQ(Str(e.as_object().at("node")), "node-a");

  ASSERT_EQ(Ack(t, "a").code(), 200);  // a late ack, accepted
  r = History(t, "a");
  EXPECT_EQ(Events(r), (std::vector<std::string>{"sent#0", "delivered#1", "nacked#1", "delivered#2",
                                                 "timedOut#2", "acked#2"}))
      << r.Describe();

  r = History(t + ".off", "a");
  EXPECT_EQ(r.code(), 400) << r.Describe();
  EXPECT_EQ(r.msg().rfind("topic '" + t + ".off' does not record message history", 0), 0u)
      << r.msg();
  EXPECT_TRUE(r.at("history").is_null());
  r = History(t, "nope");
  EXPECT_EQ(r.code(), 404) << r.Describe();
  r = api().Queue("getMsgHistory", {{"topic", t}});
  EXPECT_EQ(r.status, 400) << r.Describe();
  EXPECT_EQ(r.msg(), "required parameter 'msgId' is missing");
}

}  // namespace
}  // namespace chronoq::it
