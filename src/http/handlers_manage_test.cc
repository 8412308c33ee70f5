// The handlers of API-EXTENSIONS.md sections 2-4 in process, over the QueueService and a fake
// backend: JSON batch bodies, per-item answers, the layer of each refusal, the message object's
// extension fields (present only when not default), topic configuration, purge and redrive.
#include <gtest/gtest.h>

#include <cstdint>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

#include "base/clock.h"
#include "base/scheduler.h"
#include "core/topic_config.h"
#include "http/codec.h"
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
    Rebuild(std::move(o));
  }
  // A new service (and routes) over the same fake backend.
  void Rebuild(service::ServiceOptions o) {
    service_.reset();
    service_ = std::make_unique<service::QueueService>(&fake_, &clock_, &sched_, std::move(o));
    ctx_.service = service_.get();
    router_ = std::make_unique<Router>();
    RegisterRoutes(*router_, &ctx_);
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
    router_->Dispatch(req, conn, Reply([&out](HttpResponse r) { out.emplace(std::move(r)); }));
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
  std::unique_ptr<Router> router_;
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

// --- Topic configuration (API-EXTENSIONS.md section 4) ---

const std::string kServerConfig =
    R"("capacity":0,"ttlMillis":3600000,"maxRetry":10,"ackTimeoutMillis":30000,)"
    R"("retryIntervalMillis":0,"deadLetterTopic":"","paused":false,"callback":null,"history":false,)";

TEST_F(ManageHandlersTest, GetTopicConfigAnswersEveryFieldAndWhereItCameFrom) {
  auto r = Do("GET", "getTopicConfig?topic=t", "", "");
  EXPECT_EQ(r.first, 200);
  EXPECT_EQ(r.second, R"({"code":200,"msg":"success","topicConfig":{"topic":"t",)" + kServerConfig +
                          R"("sources":{"capacity":"server","ttlMillis":"server",)"
                          R"("maxRetry":"server","ackTimeoutMillis":"server",)"
                          R"("retryIntervalMillis":"server","deadLetterTopic":"server",)"
                          R"("paused":"server","callback":"server","history":"server"}}})");
  EXPECT_EQ(Do("POST", "getTopicConfig?topic=t", "", "").first, 405);
  auto missing = Do("GET", "getTopicConfig", "", "");
  EXPECT_EQ(missing.first, 400);
  EXPECT_NE(missing.second.find("required parameter 'topic' is missing"), std::string::npos);
}

TEST_F(ManageHandlersTest, SetTopicConfigTakesJsonOrFormAndAnswersTheEffectiveConfig) {
  auto json = Json("setTopicConfig", R"({"topic":"t","capacity":1000,"retryIntervalMillis":500,)"
                                     R"("deadLetterTopic":"t.dlq","paused":true})");
  EXPECT_EQ(json.first, 200);
  EXPECT_EQ(
      json.second,
      R"({"code":200,"msg":"success","topicConfig":{"topic":"t","capacity":1000,)"
      R"("ttlMillis":3600000,"maxRetry":10,"ackTimeoutMillis":30000,)"
      R"("retryIntervalMillis":500,"deadLetterTopic":"t.dlq","paused":true,"callback":null,)"
      R"("history":false,)"
      R"("sources":{"capacity":"topic","ttlMillis":"server","maxRetry":"server",)"
      R"("ackTimeoutMillis":"server","retryIntervalMillis":"topic",)"
      R"("deadLetterTopic":"topic","paused":"topic","callback":"server","history":"server"}}})");
  auto form = Form("setTopicConfig", "topic=t&ttlMillis=5000&maxRetry=2&ackTimeoutMillis=700");
  EXPECT_NE(form.second.find(R"("capacity":1000,"ttlMillis":5000,"maxRetry":2,)"
                             R"("ackTimeoutMillis":700,"retryIntervalMillis":500)"),
            std::string::npos)
      << form.second;
  // The stored layer is what getTopicConfig answers afterwards.
  auto got = Do("GET", "getTopicConfig?topic=t", "", "");
  EXPECT_NE(got.second.find(R"("maxRetry":2,)"), std::string::npos) << got.second;
  EXPECT_NE(got.second.find(R"("sources":{"capacity":"topic","ttlMillis":"topic")"),
            std::string::npos)
      << got.second;
}

TEST_F(ManageHandlersTest, TheFileLayerShowsAsFileUntilTheApiShadowsIt) {
  service::ServiceOptions o;
  o.topic_files["t"].capacity = 50;
  o.topic_files["t"].ttl = Millis(9000);
  Rebuild(std::move(o));
  auto file = Do("GET", "getTopicConfig?topic=t", "", "");
  EXPECT_NE(file.second.find(R"("capacity":50,"ttlMillis":9000,)"), std::string::npos)
      << file.second;
  EXPECT_NE(file.second.find(R"("sources":{"capacity":"file","ttlMillis":"file",)"),
            std::string::npos)
      << file.second;
  auto set = Form("setTopicConfig", "topic=t&capacity=7");
  EXPECT_NE(set.second.find(R"("capacity":7,"ttlMillis":9000,)"), std::string::npos) << set.second;
  EXPECT_NE(set.second.find(R"("sources":{"capacity":"topic","ttlMillis":"file",)"),
            std::string::npos)
      << set.second;
  // deleteTopicConfig forgets the stored layer: the file's values are back.
  EXPECT_EQ(Form("deleteTopicConfig", "topic=t").second, R"({"code":200,"msg":"success"})");
  auto back = Do("GET", "getTopicConfig?topic=t", "", "");
  EXPECT_NE(back.second.find(R"("capacity":50,)"), std::string::npos) << back.second;
  EXPECT_EQ(Form("deleteTopicConfig", "").first, 400);
}

TEST_F(ManageHandlersTest, SetTopicConfigRefusesUnknownNamesWrongTypesAndNothingToSet) {
  const std::vector<std::tuple<std::string, std::string, std::string>> request_errors = {
      {"json", R"({"topic":"t","capacty":5})", "unknown parameter 'capacty'"},
      {"form", "topic=t&capacity=5&callbak=x", "unknown parameter 'callbak'"},
      {"form", "topic=t&callback=x", "callback must be a JSON object like"},
      {"json", R"([1])", "the JSON body must be an object"},
      {"json", R"("t")", "the JSON body must be an object"},
      {"json", R"({"topic":"t","capacity":"many"})",
       "parameter 'capacity' must be a decimal integer"},
      {"json", R"({"topic":"t","ttlMillis":1.5})", "parameter 'ttlMillis'"},
      {"json", R"({"topic":"t","paused":"maybe"})", "parameter 'paused' must be a boolean"},
      {"json", R"({"topic":"t","deadLetterTopic":{"a":1}})",
       "parameter 'deadLetterTopic' must be a string, number or boolean"},
      {"json", R"({"topic":"t"})", "nothing to set: give at least one of 'capacity'"},
      {"form", "capacity=5", "required parameter 'topic' is missing"},
  };
  for (const auto& [kind, body, sentence] : request_errors) {
    auto r = kind == "json" ? Json("setTopicConfig", body) : Form("setTopicConfig", body);
    EXPECT_EQ(r.first, 400) << body << " -> " << r.second;
    EXPECT_NE(r.second.find(sentence), std::string::npos) << body << " -> " << r.second;
  }
  // Values the service refuses: an application outcome naming the field.
  const std::vector<std::pair<std::string, std::string>> app_errors = {
      {"topic=t&capacity=-1", "capacity must be at least 0, got -1"},
      {"topic=t&ttlMillis=0", "ttlMillis must be at least 1, got 0"},
      {"topic=t&maxRetry=-1", "maxRetry must be at least 0, got -1"},
      {"topic=t&ackTimeoutMillis=0", "ackTimeoutMillis must be at least 1, got 0"},
      {"topic=t&retryIntervalMillis=-1", "retryIntervalMillis must be at least 0, got -1"},
      {"topic=t&deadLetterTopic=t", "'t' cannot be its own dead-letter topic"},
      {"topic=t&deadLetterTopic=a%01b", "deadLetterTopic"},
      {"topic=t&deadLetterTopic=" + std::string(300, 'x'), "deadLetterTopic"},
      {"topic=t&callback=%7B%22type%22%3A%22http%22%2C%22url%22%3A%22http%3A%2F%2F10.0.0.5%2Fx%22%"
       "7D",
       "callback target '10.0.0.5:80' is not allowed: push-allowed-targets is empty"},
      {"topic=t&callback=%7B%22type%22%3A%22http%22%7D", "callback.url is missing"},
  };
  for (const auto& [form, sentence] : app_errors) {
    auto r = Form("setTopicConfig", form);
    EXPECT_EQ(r.first, 200) << form;
    EXPECT_EQ(r.second.rfind(R"({"code":400,"msg":")", 0), 0u) << form << " -> " << r.second;
    EXPECT_NE(r.second.find(sentence), std::string::npos) << form << " -> " << r.second;
    EXPECT_NE(r.second.find(R"("topicConfig":null})"), std::string::npos) << r.second;
  }
  EXPECT_TRUE(fake_.calls().empty());  // nothing reached the backend
}

TEST_F(ManageHandlersTest, ATopicCallbackIsSetShownAndRemoved) {
  service::ServiceOptions o;
  o.push_allowed = core::TargetAllowlist::Parse("hooks.example").value();
  Rebuild(std::move(o));
  auto set = Json("setTopicConfig",
                  R"({"topic":"t","callback":{"type":"http","url":"https://hooks.example/a",)"
                  R"("timeoutMillis":1500}})");
  EXPECT_NE(set.second.find(R"("callback":{"type":"http","url":"https://hooks.example/a",)"),
            std::string::npos)
      << set.second;
  EXPECT_NE(set.second.find(R"("timeoutMillis":1500)"), std::string::npos) << set.second;
  EXPECT_NE(set.second.find(R"("paused":"server","callback":"topic","history":"server"})"),
            std::string::npos)
      << set.second;
  // "" removes it: none, and the layer is still the topic's (it shadows nothing below).
  auto removed = Form("setTopicConfig", "topic=t&callback=");
  EXPECT_NE(removed.second.find(R"("callback":null,)"), std::string::npos) << removed.second;
  EXPECT_NE(removed.second.find(R"("callback":"topic",)"), std::string::npos) << removed.second;
}

TEST_F(ManageHandlersTest, PauseAndResumeSetPausedAlone) {
  ASSERT_EQ(Form("setTopicConfig", "topic=t&capacity=3").first, 200);
  auto paused = Form("pauseTopic", "topic=t");
  EXPECT_NE(paused.second.find(R"("capacity":3,)"), std::string::npos) << paused.second;
  EXPECT_NE(paused.second.find(R"("paused":true,)"), std::string::npos) << paused.second;
  auto resumed = Json("resumeTopic", R"({"topic":"t"})");
  EXPECT_NE(resumed.second.find(R"("paused":false,)"), std::string::npos) << resumed.second;
  EXPECT_NE(resumed.second.find(R"("paused":"topic",)"), std::string::npos) << resumed.second;
  EXPECT_EQ(Form("pauseTopic", "").first, 400);
  auto bad_topic = Form("pauseTopic", "topic=" + std::string(300, 'x'));
  EXPECT_EQ(bad_topic.second.rfind(R"({"code":400,)", 0), 0u) << bad_topic.second;
}

TEST_F(ManageHandlersTest, PurgeTopicAnswersTheCountAndChecksTheStatus) {
  ASSERT_EQ(Form("sendMsg", "topic=t&msgId=a&msg=hi&delayMillis=0").first, 200);
  ASSERT_EQ(Form("sendMsg", "topic=t&msgId=b&msg=hi&delayMillis=60000").first, 200);
  ASSERT_EQ(Form("sendMsg", "topic=u&msgId=c&msg=hi&delayMillis=0").first, 200);
  EXPECT_EQ(Form("purgeTopic", "topic=t&status=1").second,
            R"({"code":200,"msg":"success","purged":1})");
  EXPECT_EQ(Form("purgeTopic", "topic=t").second, R"({"code":200,"msg":"success","purged":1})");
  EXPECT_EQ(Form("purgeTopic", "topic=t").second, R"({"code":200,"msg":"success","purged":0})");
  EXPECT_NE(Form("getMsg", "topic=u&msgId=c").second.find(R"("status":2)"), std::string::npos);
  EXPECT_EQ(Form("purgeTopic", "topic=t&status=4").second,
            R"({"code":400,"msg":"status must be 1 (waiting), 2 (ready) or 3 (consuming) to )"
            R"(purge, got 4","purged":null})");
  auto not_int = Form("purgeTopic", "topic=t&status=ready");
  EXPECT_EQ(not_int.first, 400);
  EXPECT_NE(not_int.second.find("parameter 'status' must be a decimal integer"), std::string::npos);
  fake_.FailNext(Unavailable("the store is down"));
  EXPECT_EQ(Form("purgeTopic", "topic=t").second,
            R"({"code":500,"msg":"the store is down","purged":null})");
}

TEST_F(ManageHandlersTest, RedriveMsgChecksItsParametersAndAnswersTheCount) {
  EXPECT_EQ(Form("redriveMsg", "topic=dlq&limit=0").second,
            R"({"code":400,"msg":"limit must be at least 1, got 0","redriven":null})");
  EXPECT_NE(Form("redriveMsg", "topic=dlq&delayMillis=999999999999999")
                .second.find(R"("code":400,"msg":"delayMillis is 999999999999999; the limit is)"),
            std::string::npos);
  EXPECT_NE(Form("redriveMsg", "topic=dlq&msgId=").second.find(R"("code":400,"msg":"msgId)"),
            std::string::npos);
  EXPECT_EQ(Form("redriveMsg", "limit=5").first, 400);
  EXPECT_TRUE(fake_.calls().empty());
  // The fake does not redrive; what it answers reaches the client with the success shape's key.
  auto r = Form("redriveMsg", "topic=dlq&msgId=a&limit=5&delayMillis=10");
  EXPECT_NE(r.second.find(R"("code":500,)"), std::string::npos) << r.second;
  EXPECT_NE(r.second.find(R"("redriven":null})"), std::string::npos) << r.second;
  ASSERT_EQ(fake_.calls().size(), 1u);
  EXPECT_EQ(fake_.calls()[0].op, "redrive");
  EXPECT_EQ(EncodeCountAnswer("redriven", 3), R"({"code":200,"msg":"success","redriven":3})");
}

TEST_F(ManageHandlersTest, AFullTopicAnswersCode429) {
  fake_.FailNext(core::TopicFull("t", 1000, 1000));
  auto r = Form("sendMsg", "topic=t&msgId=a&msg=hi&delayMillis=0");
  EXPECT_EQ(r.second, R"({"code":429,"msg":"topic 't' is full: 1000 messages in life, )"
                      R"(capacity 1000","delayMsg":null})");
}

TEST_F(ManageHandlersTest, ADeadLetterCarriesItsOriginOnlyWhenItIsOne) {
  core::Message m;
  m.record.topic = "t.dlq";
  m.record.msg_id = "a";
  m.record.payload = "hi";
  m.status = core::MsgStatus::kReady;
  const std::string plain = EncodeMessageAnswer(200, "success", &m);
  EXPECT_EQ(plain.find("deadLetter"), std::string::npos) << plain;
  m.record.dead_letter =
      core::DeadLetter{"t", core::MsgStatus::kRetryExhaust, 3, FromEpochMs(1'700'000'000'123)};
  EXPECT_NE(EncodeMessageAnswer(200, "success", &m)
                .find(R"("status":2,"deadLetter":{"topic":"t","status":6,"retry":3,)"
                      R"("endTime":1700000000123}})"),
            std::string::npos)
      << EncodeMessageAnswer(200, "success", &m);
}

// A plain message's answer is written straight into one buffer (codec.cc): the same bytes as the
// general writer's, whatever the strings hold and whichever extension field is set.
TEST_F(ManageHandlersTest, AMessageAnswerHasTheGeneralWritersBytes) {
  core::Message m;
  m.record.topic = "orders";
  m.record.msg_id = "7f3a";
  m.record.payload = "hello world";
  m.record.produce_time = FromEpochMs(1'700'000'000'000);
  m.record.trigger_time = FromEpochMs(1'700'000'005'000);
  m.record.expire_time = FromEpochMs(1'700'259'205'000);
  m.record.max_retry = 3;
  m.status = core::MsgStatus::kWaiting;
  EXPECT_EQ(EncodeMessageAnswer(200, "success", &m),
            R"({"code":200,"msg":"success","delayMsg":{"topic":"orders","msgId":"7f3a",)"
            R"("msg":"hello world","produceTime":1700000000000,"triggerTime":1700000005000,)"
            R"("expireTime":1700259205000,"maxRetry":3,"retry":0,"status":1}})");
  auto general = [](const core::Message& msg) {
    return R"({"code":200,"msg":"success","delayMsg":)" + EncodeMessageObject(msg) + "}";
  };
  const std::vector<std::string> payloads = {"",
                                             "a",
                                             "exactly8",
                                             "a \"quoted\" word",
                                             "back\\slash",
                                             "line\nbreak",
                                             std::string("nul\0byte", 8),
                                             "\x01\x1f",
                                             "caf\xc3\xa9",
                                             std::string(300, 'x') + "\t"};
  for (const std::string& payload : payloads) {
    core::Message v = m;
    v.record.payload = payload;
    EXPECT_EQ(EncodeMessageAnswer(200, "success", &v), general(v)) << payload;
    v.record.msg_id = payload;
    v.record.topic = "t\"" + payload;
    EXPECT_EQ(EncodeMessageAnswer(200, "success", &v), general(v)) << payload;
  }
  std::vector<core::Message> extended(7, m);
  extended[0].record.priority = 9;
  extended[1].record.count_trigger = 5;
  extended[2].record.count = 2;
  extended[3].record.last_error = "boom";
  extended[4].record.push = true;
  extended[4].record.retry = 2;
  extended[5].record.dead_letter =
      core::DeadLetter{"t", core::MsgStatus::kRetryExhaust, 3, FromEpochMs(1'700'000'000'123)};
  extended[6].record.max_retry = -1;
  extended[6].record.retry = INT64_MAX;
  extended[6].record.produce_time = FromEpochMs(-5);
  for (const core::Message& v : extended) {
    EXPECT_EQ(EncodeMessageAnswer(200, "success", &v), general(v));
  }
  EXPECT_EQ(EncodeMessageAnswer(400, "bad", &m),
            R"({"code":400,"msg":"bad","delayMsg":)" + EncodeMessageObject(m) + "}");
}

// The numbers of a message's answer (codec.cc writes epoch milliseconds' thirteen digits and single
// digits without std::to_chars): std::to_string's digits at and around every bound, in the direct
// answer and the general writer's alike.
TEST_F(ManageHandlersTest, AMessageAnswersNumbersHaveTheGeneralWritersBytes) {
  auto general = [](const core::Message& msg) {
    return R"({"code":200,"msg":"success","delayMsg":)" + EncodeMessageObject(msg) + "}";
  };
  const std::vector<int64_t> values = {INT64_MIN,
                                       -1'000'000'000'000,
                                       -10,
                                       -1,
                                       0,
                                       1,
                                       9,
                                       10,
                                       99,
                                       100,
                                       999'999'999'999,
                                       1'000'000'000'000,
                                       1'000'000'000'001,
                                       1'234'567'890'123,
                                       1'700'000'000'009,
                                       1'700'000'090'000,
                                       9'999'999'999'999,
                                       10'000'000'000'000,
                                       INT64_MAX};
  core::Message m;
  m.record.topic = "t";
  m.record.msg_id = "a";
  m.record.payload = "p";
  for (int64_t v : values) {
    core::Message x = m;
    x.record.produce_time = FromEpochMs(v);
    x.record.trigger_time = FromEpochMs(v);
    x.record.expire_time = FromEpochMs(v);
    x.record.retry = v;
    if (v >= INT32_MIN && v <= INT32_MAX) x.record.max_retry = static_cast<int32_t>(v);
    const std::string answer = EncodeMessageAnswer(200, "success", &x);
    EXPECT_EQ(answer, general(x)) << v;
    const std::string n = std::to_string(v);
    const std::string numbers = ",\"produceTime\":" + n + ",\"triggerTime\":" + n +
                                ",\"expireTime\":" + n +
                                ",\"maxRetry\":" + std::to_string(x.record.max_retry) +
                                ",\"retry\":" + n + ",\"status\":1}";
    EXPECT_NE(answer.find(numbers), std::string::npos) << answer;
  }
}

// The callback parameter (API-EXTENSIONS.md section 5, docs/push.md): its JSON shape is checked
// in the JSON body, in a form field and in batch items alike, with sentences that name the member;
// the allowlist then decides; nothing reaches the backend while push delivery has no storage lane.
TEST_F(ManageHandlersTest, ACallbackIsCheckedMemberByMemberAndAnAllowedOneIsStored) {
  const std::string send = R"({"topic":"t","msgId":"a","msg":"hi","delayMillis":0,"callback":)";
  auto answer = [&](const std::string& cb) { return Json("sendMsg", send + cb + "}"); };
  // A callback of the wrong shape is a request error, like a parameter of the wrong type.
  auto not_object = answer(R"("not json")");
  EXPECT_EQ(not_object.first, 400);
  EXPECT_NE(
      not_object.second.find(
          R"("msg":"callback must be a JSON object like {\"type\":\"http\",\"url\":\"http://host:port/path\"}")"),
      std::string::npos)
      << not_object.second;
  EXPECT_NE(answer(R"({"url":"http://x/"})")
                .second.find("callback.type is missing (http, grpc or kafka)"),
            std::string::npos);
  EXPECT_NE(answer(R"({"type":"smtp"})")
                .second.find("callback.type must be http, grpc or kafka, got 'smtp'"),
            std::string::npos);
  EXPECT_NE(answer(R"({"type":"http","url":"http://x/","topic":"k"})")
                .second.find("callback has an unknown member 'topic' for type http (known: url, "
                             "method, headers, body, timeoutMillis, retryIntervalMillis)"),
            std::string::npos);
  EXPECT_NE(answer(R"({"type":"http","url":5})").second.find("callback.url must be a string"),
            std::string::npos);
  EXPECT_NE(answer(R"({"type":"http","url":"http://x/","timeoutMillis":"5"})")
                .second.find("callback.timeoutMillis must be an integer"),
            std::string::npos);
  EXPECT_NE(answer(R"({"type":"http","url":"http://x/","headers":{"a":1}})")
                .second.find("callback.headers.a must be a string"),
            std::string::npos);
  EXPECT_NE(answer(R"({"type":"http","url":"http://x/","body":"xml"})")
                .second.find("callback.body must be 'json' or 'raw', got 'xml'"),
            std::string::npos);
  EXPECT_NE(answer(R"({"type":"grpc","target":"h:1"})").second.find("callback.method is missing"),
            std::string::npos);
  // A well-formed callback meets the allowlist: empty by default, so push is off.
  EXPECT_NE(answer(R"({"type":"http","url":"http://127.0.0.1:9/x"})")
                .second.find("callback target '127.0.0.1:9' is not allowed: push-allowed-targets "
                             "is empty"),
            std::string::npos);
  // The same checks for a form field holding the JSON text.
  EXPECT_NE(Form("sendMsg", "topic=t&msg=hi&delayMillis=0&callback=%7B%22type%22%3A%22x%22%7D")
                .second.find("callback.type must be http, grpc or kafka, got 'x'"),
            std::string::npos);

  service::ServiceOptions o;
  o.push_allowed = core::TargetAllowlist::Parse("127.0.0.1").value();
  Rebuild(std::move(o));
  auto sent = answer(R"({"type":"http","url":"http://127.0.0.1:9/x"})");
  EXPECT_EQ(sent.first, 200) << sent.second;
  ASSERT_EQ(fake_.calls().size(), 1u);
  ASSERT_TRUE(fake_.calls()[0].send.callback.has_value());
  EXPECT_EQ(fake_.calls()[0].send.callback->url, "http://127.0.0.1:9/x");
  // In a batch, each item is answered on its own.
  auto batch = Json("sendMsgBatch",
                    R"({"topic":"t","msgs":[{"msg":"a","delayMillis":0},)"
                    R"({"msg":"b","delayMillis":0,"callback":{"type":"kafka","brokers":"k:1"}}]})");
  EXPECT_NE(batch.second.find(R"({"code":200,"msg":"success","delayMsg":{"topic":"t")"),
            std::string::npos)
      << batch.second;
  EXPECT_NE(batch.second.find(R"({"code":400,"msg":"msgs[1]: callback.topic is missing"})"),
            std::string::npos)
      << batch.second;
  ASSERT_EQ(fake_.calls().size(), 2u);  // the send above, then one SendBatch: the first item
  EXPECT_EQ(fake_.calls()[1].batch.size(), 1u);
}

// ---- issue 21: importMsgBatch's protocol layer, listMsg export=true ----

TEST_F(ManageHandlersTest, ImportMsgBatchRefusesABodyThatIsNotABatch) {
  for (const char* body : {"not json", "[]", R"({"msgs":{}})", R"({"other":[]})"}) {
    auto r = Json("importMsgBatch", body);
    EXPECT_EQ(r.first, 400) << body;
    EXPECT_NE(r.second.find(R"(the body must be a JSON object {\"msgs\":[message, ...]})"),
              std::string::npos)
        << r.second;
  }
  auto empty = Json("importMsgBatch", R"({"msgs":[]})");
  EXPECT_EQ(empty.first, 400);
  EXPECT_NE(empty.second.find("msgs is empty"), std::string::npos) << empty.second;
  auto many = Json("importMsgBatch", R"({"msgs":[1,2,3,4]})");
  EXPECT_EQ(many.first, 400);
  EXPECT_NE(many.second.find("msgs has 4 messages; the limit is 3"), std::string::npos);
}

TEST_F(ManageHandlersTest, ImportMsgBatchNamesTheFieldOfEachRefusedItem) {
  const std::string base = R"("topic":"t","msg":"m","produceTime":1,"triggerTime":1700000050000,)"
                           R"("expireTime":1700000090000,"maxRetry":1,"retry":0)";
  auto r = Json("importMsgBatch", R"({"msgs":[)"
                                  R"({"msgId":"a",)" +
                                      base +
                                      R"(,"status":"1"},)"
                                      R"({"msgId":"b",)" +
                                      base +
                                      R"(,"status":7},)"
                                      R"("text"]})");
  EXPECT_EQ(r.first, 200);
  EXPECT_EQ(
      r.second,
      R"({"code":200,"msg":"success","results":[)"
      R"({"code":400,"msg":"status must be an integer"},)"
      R"({"code":400,"msg":"status 7 is an ended message; only messages in life (status 1 )"
      R"(waiting, 2 ready, 3 consuming) are imported"},)"
      R"x({"code":400,"msg":"must be a JSON object (a message as chronoq export writes it)"}],)x"
      R"("imported":0,"skipped":0,"refused":3})");
  for (const auto& c : fake_.calls()) EXPECT_NE(c.op, "import");
}

TEST_F(ManageHandlersTest, ListMsgWritesTheExportFieldsOnlyWhenAsked) {
  ASSERT_EQ(Form("sendMsg", "topic=t&msgId=a&msg=hi&delayMillis=0").first, 200);
  auto plain = Do("GET", "listMsg?topic=t", "", "");
  EXPECT_EQ(plain.second.find("visibleTime"), std::string::npos) << plain.second;
  auto exported = Do("GET", "listMsg?topic=t&export=true", "", "");
  EXPECT_NE(exported.second.find(R"("visibleTime":)"), std::string::npos) << exported.second;
  auto bad = Do("GET", "listMsg?topic=t&export=maybe", "", "");
  EXPECT_EQ(bad.first, 400) << bad.second;
}

}  // namespace
}  // namespace chronoq::http
