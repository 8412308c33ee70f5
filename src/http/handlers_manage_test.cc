// The handlers of API-EXTENSIONS.md sections 2-3 in process, over the QueueService and a fake
// backend: JSON batch bodies, per-item answers, the layer of each refusal, and the message object's
// extension fields (present only when not default).
#include <gtest/gtest.h>

#include <optional>
#include <string>

#include "base/clock.h"
#include "base/scheduler.h"
#include "http/handlers.h"
#include "tests/testutil/fake_backend.h"

namespace chronoq::http {
namespace {

using testutil::FakeBackend;

class NullConnection final : public RequestContext {
 public:
  bool PeerAlive() const override { return true; }
  void OnPeerGone(UniqueFunction<void()>) override {}
};

class ManageHandlersTest : public ::testing::Test {
 protected:
  ManageHandlersTest() : clock_(FromEpochMs(1'700'000'040'000)), sched_(&clock_) {
    service::ServiceOptions o;
    o.limits.max_send_batch = 3;
    o.limits.max_pull_batch = 4;
    service_ = std::make_unique<service::QueueService>(&fake_, &clock_, &sched_, o);
    ctx_.service = service_.get();
    RegisterRoutes(router_, &ctx_);
  }

  // The answer (status and body) of one request; "<no answer>" when none came.
  std::pair<int, std::string> Do(const std::string& method, const std::string& op,
                                 const std::string& body, const std::string& content_type) {
    const std::string target = std::string(kQueueBase) + op;  // the request refers to it
    HttpRequest req;
    req.method = method;
    req.target = target;
    req.has_content_type = !content_type.empty();
    req.content_type = content_type;
    req.body = body;
    NullConnection conn;
    std::optional<HttpResponse> out;
    router_.Dispatch(req, conn, Reply([&out](HttpResponse r) { out.emplace(std::move(r)); }));
    return out ? std::pair{out->status, out->body} : std::pair{0, std::string("<no answer>")};
  }
  std::pair<int, std::string> Json(const std::string& op, const std::string& body) {
    return Do("POST", op, body, "application/json");
  }
  std::pair<int, std::string> Form(const std::string& op, const std::string& form) {
    return Do("POST", op, form, "application/x-www-form-urlencoded");
  }

  base::ManualClock clock_;
  base::ManualScheduler sched_;
  FakeBackend fake_;
  std::unique_ptr<service::QueueService> service_;
  HandlerContext ctx_;
  Router router_;
};

TEST_F(ManageHandlersTest, DefaultExtensionFieldsLeaveTheMessageObjectAsCamelliaHasIt) {
  auto plain = Form("sendMsg", "topic=t&msgId=a&msg=hi&delayMillis=0&ttlMillis=5000&maxRetry=2");
  EXPECT_EQ(
      plain.second,
      R"({"code":200,"msg":"success","delayMsg":{"topic":"t","msgId":"a","msg":"hi",)"
      R"("produceTime":0,"triggerTime":0,"expireTime":5000,"maxRetry":2,"retry":0,"status":2}})");
  auto rich = Form("sendMsg", "topic=t&msgId=b&msg=hi&delayMillis=5&priority=7&countTrigger=3");
  EXPECT_NE(rich.second.find(R"("status":1,"priority":7,"countTrigger":3})"), std::string::npos)
      << rich.second;
}

TEST_F(ManageHandlersTest, SendMsgWantsExactlyOneOfDelayMillisAndTriggerTime) {
  auto both = Form("sendMsg", "topic=t&msg=hi&delayMillis=0&triggerTime=5");
  EXPECT_EQ(both.first, 400);
  EXPECT_NE(both.second.find("give either 'delayMillis' or 'triggerTime', not both"),
            std::string::npos);
  auto neither = Form("sendMsg", "topic=t&msg=hi");
  EXPECT_EQ(neither.first, 400);
  EXPECT_NE(neither.second.find("'delayMillis' is missing"), std::string::npos);
  auto trigger = Form("sendMsg", "topic=t&msgId=x&msg=hi&triggerTime=1700000045000");
  EXPECT_EQ(trigger.first, 200);
  EXPECT_NE(trigger.second.find(R"("code":200)"), std::string::npos) << trigger.second;
  auto bad_priority = Form("sendMsg", "topic=t&msg=hi&delayMillis=0&priority=10");
  EXPECT_EQ(bad_priority.first, 200);
  EXPECT_NE(bad_priority.second.find(
                R"("code":400,"msg":"priority must be between 0 and 9, got 10","delayMsg":null)"),
            std::string::npos)
      << bad_priority.second;
  ASSERT_EQ(fake_.calls().size(), 1u);
}

TEST_F(ManageHandlersTest, SendMsgBatchAnswersEveryItemInInputOrder) {
  ASSERT_EQ(Form("sendMsg", "topic=t&msgId=old&msg=hi&delayMillis=5").first, 200);
  auto r = Json("sendMsgBatch", R"({"topic":"t","msgs":[)"
                                R"({"msgId":"a","msg":"one","delayMillis":0,"priority":3},)"
                                R"({"msgId":"b","msg":"two"},)"
                                R"({"msgId":"old","msg":"again","delayMillis":0}]})");
  EXPECT_EQ(r.first, 200);
  EXPECT_EQ(r.second.rfind(R"({"code":200,"msg":"success","results":[{"code":200,"msg":"success",)"
                           R"("delayMsg":{"topic":"t","msgId":"a")",
                           0),
            0u)
      << r.second;
  EXPECT_NE(r.second.find(R"({"code":400,"msg":"msgs[1]: delayMillis is missing)"),
            std::string::npos)
      << r.second;
  EXPECT_NE(r.second.find(R"("msgId":"old","msg":"hi")"), std::string::npos) << r.second;
  EXPECT_NE(r.second.find(R"("existing":true})"), std::string::npos) << r.second;
  const FakeBackend::Call last = fake_.calls().back();
  EXPECT_EQ(last.op, "send_batch");
  ASSERT_EQ(last.batch.size(), 2u);
  EXPECT_EQ(last.batch[0].priority, 3);
}

TEST_F(ManageHandlersTest, ItemsThatCannotBeReadAreAnsweredWithTheirIndex) {
  auto r = Json("sendMsgBatch", R"({"topic":"t","msgs":[7,)"
                                R"({"msg":"x","delayMillis":"soon"},)"
                                R"({"topic":"u","msg":"x","delayMillis":0}]})");
  EXPECT_EQ(r.first, 200);
  EXPECT_NE(r.second.find(R"("msgs[0]: must be a JSON object of sendMsg parameters")"),
            std::string::npos)
      << r.second;
  EXPECT_NE(r.second.find(R"("msgs[1]: parameter 'delayMillis' must be a decimal integer)"),
            std::string::npos)
      << r.second;
  EXPECT_NE(r.second.find(R"("msgs[2]: topic is given once for the whole batch)"),
            std::string::npos)
      << r.second;
  EXPECT_TRUE(fake_.calls().empty());
}

TEST_F(ManageHandlersTest, AWholeBatchRefusedIsARequestError) {
  const std::vector<std::pair<std::string, std::string>> rows = {
      {"[1,2]", "the body must be a JSON object"},
      {"{", "not valid JSON"},
      {R"({"msgs":[]})", "required parameter 'topic' is missing"},
      {R"({"topic":"t"})", "required parameter 'msgs' is missing"},
      {R"({"topic":"t","msgs":{}})", "'msgs' must be an array"},
      {R"({"topic":"t","msgs":[]})", "msgs is empty"},
      {R"({"topic":5,"msgs":[]})", "'topic' must be a string"},
      {R"({"topic":"t","msgs":[{},{},{},{}]})", "msgs has 4 messages; the limit is 3"},
      {R"({"topic":"t","msgs":[{"msgId":"a","msg":"x","delayMillis":0},)"
       R"({"msgId":"a","msg":"y","delayMillis":0}]})",
       "msgId 'a' is given more than once in this batch"},
  };
  for (const auto& [body, sentence] : rows) {
    auto r = Json("sendMsgBatch", body);
    EXPECT_EQ(r.first, 400) << body;
    EXPECT_NE(r.second.find(sentence), std::string::npos) << body << " -> " << r.second;
  }
  EXPECT_TRUE(fake_.calls().empty());
}

TEST_F(ManageHandlersTest, AckMsgBatchAnswersEachIdAndRefusesMalformedBodies) {
  ASSERT_EQ(Form("sendMsg", "topic=t&msgId=a&msg=hi&delayMillis=0").first, 200);
  ASSERT_EQ(Form("sendMsg", "topic=t&msgId=b&msg=hi&delayMillis=0").first, 200);
  ASSERT_EQ(Form("pullMsg", "topic=t&batch=2").first, 200);
  auto r = Json("ackMsgBatch", R"({"topic":"t","ack":["a","nope"],"nack":["b"],"reason":"x"})");
  EXPECT_EQ(r.first, 200);
  EXPECT_EQ(
      r.second,
      R"({"code":200,"msg":"success","results":[)"
      R"({"msgId":"a","ack":true,"code":200,"msg":"success"},)"
      R"({"msgId":"nope","ack":true,"code":404,"msg":"message 'nope' not found in topic 't'"},)"
      R"({"msgId":"b","ack":false,"code":200,"msg":"success"}]})");
  for (const auto& [body, sentence] : std::vector<std::pair<std::string, std::string>>{
           {R"({"topic":"t"})", "ack and nack are both empty"},
           {R"({"topic":"t","ack":"a"})", "'ack' must be an array"},
           {R"({"topic":"t","ack":[1]})", "ack[0] must be a msgId string"},
           {R"({"topic":"t","nack":["a"],"reason":5})", "'reason' must be a string"},
           {R"({"topic":"t","ack":["a","b","c"],"nack":["d","e"]})",
            "ack and nack hold 5 msgIds; the limit is 4"}}) {
    auto bad = Json("ackMsgBatch", body);
    EXPECT_EQ(bad.first, 400) << body;
    EXPECT_NE(bad.second.find(sentence), std::string::npos) << body << " -> " << bad.second;
  }
}

TEST_F(ManageHandlersTest, UpdateTouchCountAnswerTheMessage) {
  ASSERT_EQ(Form("sendMsg", "topic=t&msgId=w&msg=hi&delayMillis=60000&countTrigger=2").first, 200);
  auto u = Form("updateMsg", "topic=t&msgId=w&priority=5&msg=new");
  EXPECT_NE(u.second.find(R"("msg":"new")"), std::string::npos) << u.second;
  EXPECT_NE(u.second.find(R"("priority":5)"), std::string::npos) << u.second;
  auto c = Form("countMsg", "topic=t&msgId=w&count=2");
  EXPECT_NE(c.second.find(R"("status":2)"), std::string::npos) << c.second;  // trigger reached
  auto t = Form("touchMsg", "topic=t&msgId=w&ackTimeoutMillis=1000");
  EXPECT_EQ(t.second, R"({"code":404,"msg":"message 'w' is READY","delayMsg":null})");
  auto nothing = Form("updateMsg", "topic=t&msgId=w");
  EXPECT_NE(nothing.second.find(R"("code":400,"msg":"nothing to update)"), std::string::npos);
}

TEST_F(ManageHandlersTest, ListMsgPagesWithACursorAndNullAtTheEnd) {
  for (const char* id : {"a", "b", "c"}) {
    ASSERT_EQ(Form("sendMsg", std::string("topic=t&msg=hi&delayMillis=0&msgId=") + id).first, 200);
  }
  auto first = Do("GET", "listMsg?topic=t&limit=2", "", "");
  EXPECT_EQ(first.first, 200);
  EXPECT_NE(first.second.find(R"("nextCursor":"2"})"), std::string::npos) << first.second;
  auto last = Do("GET", "listMsg?topic=t&limit=2&cursor=2", "", "");
  EXPECT_NE(last.second.find(R"("msgId":"c")"), std::string::npos) << last.second;
  EXPECT_NE(last.second.find(R"("nextCursor":null})"), std::string::npos) << last.second;
  auto bad = Do("GET", "listMsg?topic=t&cursor=zz", "", "");
  EXPECT_EQ(
      bad.second,
      R"({"code":400,"msg":"cursor is not valid: 'zz'","delayMsgList":null,"nextCursor":null})");
  EXPECT_EQ(Do("POST", "listMsg?topic=t", "", "").first, 405);
}

}  // namespace
}  // namespace chronoq::http
