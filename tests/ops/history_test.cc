// getMsgHistory over HTTP on the real binary (API-EXTENSIONS.md section 8): the JSON shape of an
// answer, the node name from node-id, and the refusals (history off, unknown message, missing
// parameter). The cases per transition are the backend contract's (backend_contract_history_test).
#include "tests/integration/it_util.h"

namespace chronoq::it {
namespace {

TEST(MsgHistoryTest, ATopicWithHistoryAnswersEachTransitionWithTimeNodeEventAndReason) {
  ServerProcess server;
  Status st =
      server.Start({"--storage=embedded", "--test-clock", "--log-level=warn", "--node-id=node-a"});
  ASSERT_TRUE(st.ok()) << st.message();
  ApiClient c(server.endpoint());
  ASSERT_EQ(c.Queue("setTopicConfig", {{"topic", "h"}, {"history", "true"}}).code(), 200);
  const int64_t sent_at = c.Now();
  ASSERT_EQ(c.Queue("sendMsg", {{"topic", "h"}, {"msgId", "a"}, {"msg", "x"}, {"delayMillis", "0"}})
                .code(),
            200);
  ASSERT_EQ(c.Queue("pullMsg", {{"topic", "h"}}).code(), 200);
  ASSERT_EQ(
      c.Queue("ackMsg", {{"topic", "h"}, {"msgId", "a"}, {"ack", "false"}, {"reason", "db down"}})
          .code(),
      200);

  ApiResponse r = c.Queue("getMsgHistory", {{"topic", "h"}, {"msgId", "a"}});
  ASSERT_EQ(r.code(), 200) << r.Describe();
  const json::array& h = r.at("history").as_array();
  ASSERT_EQ(h.size(), 3u) << r.Describe();
  EXPECT_EQ(json::serialize(h[0]), R"({"time":)" + std::to_string(sent_at) +
                                       R"(,"node":"node-a","event":"sent","attempt":0})");
  EXPECT_EQ(h[1].as_object().at("event").as_string(), "delivered");
  EXPECT_EQ(h[1].as_object().at("attempt").as_int64(), 1);
  EXPECT_EQ(h[2].as_object().at("event").as_string(), "nacked");
  EXPECT_EQ(h[2].as_object().at("reason").as_string(), "db down");

  r = c.Queue("getMsgHistory", {{"topic", "other"}, {"msgId", "a"}});
  EXPECT_EQ(r.code(), 400) << r.Describe();
  EXPECT_EQ(r.msg().rfind("topic 'other' does not record message history", 0), 0u) << r.msg();
  EXPECT_TRUE(r.at("history").is_null());
  r = c.Queue("getMsgHistory", {{"topic", "h"}, {"msgId", "nope"}});
  EXPECT_EQ(r.code(), 404) << r.Describe();
  r = c.Queue("getMsgHistory", {{"topic", "h"}});
  EXPECT_EQ(r.status, 400) << r.Describe();
  EXPECT_EQ(r.msg(), "required parameter 'msgId' is missing");
  EXPECT_EQ(server.Stop(SIGTERM), 0);
}

}  // namespace
}  // namespace chronoq::it
