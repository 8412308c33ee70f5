// The camellia handlers in process, over the QueueService and a fake backend: what the protocol
// layer does (parameters, the two error layers, answer shapes, the Errc -> code table, long
// polls tied to the connection) without sockets or storage.
#include "http/handlers.h"

#include <gtest/gtest.h>

#include <optional>
#include <string>

#include "base/clock.h"
#include "base/scheduler.h"
#include "tests/testutil/fake_backend.h"

namespace chronoq::http {
namespace {

using testutil::FakeBackend;

class TestConnection final : public RequestContext {
 public:
  bool PeerAlive() const override { return alive; }
  void OnPeerGone(UniqueFunction<void()> fn) override { on_gone = std::move(fn); }
  void Leave() {
    alive = false;
    if (UniqueFunction<void()> fn = std::move(on_gone)) fn();
  }
  bool alive = true;
  UniqueFunction<void()> on_gone;
};

class HandlersTest : public ::testing::Test {
 protected:
  HandlersTest() : clock_(FromEpochMs(1'700'000'040'000)), sched_(&clock_) {
    service::ServiceOptions o;
    o.limits.max_topic_bytes = 16;
    service_ = std::make_unique<service::QueueService>(&fake_, &clock_, &sched_, o);
    ctx_.service = service_.get();
    RegisterRoutes(router_, &ctx_);
  }

  // Dispatches one request; the answer, if given by the time Dispatch returns (or `settle` ran).
  std::optional<HttpResponse> Do(std::string method, std::string target, std::string body = "",
                                 std::string content_type = "application/x-www-form-urlencoded",
                                 TestConnection* conn = nullptr) {
    method_ = std::move(method);
    target_ = std::move(target);
    content_type_ = std::move(content_type);
    HttpRequest req;
    req.method = method_;
    req.target = target_;
    req.has_content_type = !body.empty();
    req.content_type = content_type_;
    req.body = std::move(body);
    TestConnection local;
    last_ = std::make_shared<std::optional<HttpResponse>>();
    router_.Dispatch(req, conn != nullptr ? *conn : local,
                     Reply([out = last_](HttpResponse r) { out->emplace(std::move(r)); }));
    return *last_;
  }
  std::optional<HttpResponse> Post(const std::string& op, const std::string& form,
                                   TestConnection* conn = nullptr) {
    return Do("POST", std::string(kQueueBase) + op, form, "application/x-www-form-urlencoded",
              conn);
  }
  static std::string Body(const std::optional<HttpResponse>& r) {
    return r ? r->body : std::string("<no answer>");
  }

  base::ManualClock clock_;
  base::ManualScheduler sched_;
  FakeBackend fake_;
  std::unique_ptr<service::QueueService> service_;
  HandlerContext ctx_;
  Router router_;
  std::string method_, target_, content_type_;
  std::shared_ptr<std::optional<HttpResponse>> last_;
};

TEST_F(HandlersTest, SendMsgDecodesFormAndJsonAlike) {
  auto form = Post("sendMsg", "topic=t&msgId=a&msg=hi&delayMillis=0&ttlMillis=5000&maxRetry=2");
  ASSERT_TRUE(form);
  EXPECT_EQ(form->status, 200);
  EXPECT_NE(form->body.find("\"code\":200"), std::string::npos) << form->body;
  auto json = Do("POST", std::string(kQueueBase) + "sendMsg",
                 R"({"topic":"t","msgId":"b","msg":"hi","delayMillis":0,"ttlMillis":5000,)"
                 R"("maxRetry":2})",
                 "application/json");
  ASSERT_TRUE(json);
  EXPECT_EQ(json->status, 200);
  std::vector<FakeBackend::Call> calls = fake_.calls();
  ASSERT_EQ(calls.size(), 2u);
  for (const FakeBackend::Call& c : calls) {
    EXPECT_EQ(c.send.payload, "hi");
    EXPECT_EQ(c.send.ttl, Millis(5'000));
    EXPECT_EQ(c.send.max_retry, 2);
  }
}

TEST_F(HandlersTest, AMissingOrMalformedParameterIsAnHttp400) {
  auto missing = Post("sendMsg", "topic=t&msg=hi");
  ASSERT_TRUE(missing);
  EXPECT_EQ(missing->status, 400);
  EXPECT_EQ(missing->body,
            R"j({"code":400,"msg":"required parameter 'delayMillis' is missing (or give )j"
            R"j('triggerTime' instead)","status":400,"error":"Bad Request",)j"
            R"j("path":"/camellia/delayQueue/sendMsg"})j");
  auto malformed = Post("pullMsg", "topic=t&batch=ten");
  ASSERT_TRUE(malformed);
  EXPECT_EQ(malformed->status, 400);
  EXPECT_TRUE(fake_.calls().empty());
}

TEST_F(HandlersTest, AValueOutOfItsLimitsIsCode400InTheEndpointsShape) {
  EXPECT_EQ(Body(Post("sendMsg", "topic=&msg=hi&delayMillis=0")),
            R"({"code":400,"msg":"topic is empty","delayMsg":null})");
  EXPECT_EQ(Body(Post("pullMsg", "topic=")),
            R"({"code":400,"msg":"topic is empty","delayMsgList":null})");
  EXPECT_EQ(Body(Post("ackMsg", "topic=&msgId=a&ack=true")),
            R"({"code":400,"msg":"topic is empty"})");
  EXPECT_EQ(Body(Do("GET", std::string(kQueueBase) + "getTopicInfo?topic=")),
            R"({"code":400,"msg":"topic is empty","data":null})");
  EXPECT_TRUE(fake_.calls().empty());
}

TEST_F(HandlersTest, BackendErrorsMapToTheirCodes) {
  struct Row {
    Status error;
    int code;
  };
  const Row rows[] = {{NotFound("message 'a' not found"), 404},
                      {InvalidState("message 'a' is WAITING"), 404},
                      {Unavailable("redis is down"), 500},
                      {IOError("the disk is full"), 500},
                      {Internal("bug"), 500}};
  for (const Row& row : rows) {
    fake_.FailNext(row.error);
    std::string body = Body(Post("ackMsg", "topic=t&msgId=a&ack=true"));
    EXPECT_EQ(body, fmt::format(R"({{"code":{},"msg":"{}"}})", row.code, row.error.message()));
  }
}

TEST_F(HandlersTest, AnIdempotentRepeatIsFlaggedInAHeaderOnly) {
  auto first = Post("sendMsg", "topic=t&msgId=a&msg=one&delayMillis=0");
  auto again = Post("sendMsg", "topic=t&msgId=a&msg=two&delayMillis=0");
  ASSERT_TRUE(first && again);
  auto flagged = [](const HttpResponse& r) {
    for (const auto& [k, v] : r.headers) {
      if (k == kExistingHeader) return v == "true";
    }
    return false;
  };
  EXPECT_FALSE(flagged(*first));
  EXPECT_TRUE(flagged(*again));
  EXPECT_EQ(first->body, again->body);  // camellia's body: the existing message, unchanged
}

TEST_F(HandlersTest, ALongPollIsAnsweredWhenAMessageArrives) {
  TestConnection conn;
  auto parked = Post("longPollingMsg", "topic=t&batch=2&longPollingTimeoutMillis=5000", &conn);
  EXPECT_FALSE(parked);
  std::shared_ptr<std::optional<HttpResponse>> waiting = last_;
  ASSERT_TRUE(Post("sendMsg", "topic=t&msgId=a&msg=hi&delayMillis=0"));
  ASSERT_TRUE(waiting->has_value());
  EXPECT_NE((*waiting)->body.find("\"msgId\":\"a\""), std::string::npos) << (*waiting)->body;
}

TEST_F(HandlersTest, ALongPollWhoseClientLeftIsCancelled) {
  TestConnection conn;
  EXPECT_FALSE(Post("longPollingMsg", "topic=t&longPollingTimeoutMillis=5000", &conn));
  std::shared_ptr<std::optional<HttpResponse>> waiting = last_;
  EXPECT_EQ(service_->long_polls().parked(), 1u);
  const size_t calls = fake_.calls().size();  // its first pull, which found nothing
  conn.Leave();
  EXPECT_EQ(service_->long_polls().parked(), 0u);
  ASSERT_TRUE(waiting->has_value());
  EXPECT_EQ((*waiting)->body, R"({"code":200,"msg":"success","delayMsgList":[]})");
  ASSERT_TRUE(Post("sendMsg", "topic=t&msgId=a&msg=hi&delayMillis=0"));
  EXPECT_EQ(fake_.calls().size(), calls + 1);  // the send: no pull for the request that left
}

TEST_F(HandlersTest, HealthAndMetricsRoutes) {
  EXPECT_EQ(Do("GET", "/camellia/health/status")->status, 200);
  EXPECT_EQ(Do("GET", "/camellia/health/offline")->status, 200);
  EXPECT_EQ(Do("GET", "/camellia/health/status")->status, 500);
  EXPECT_EQ(Do("POST", "/camellia/health/online")->status, 200);
  EXPECT_EQ(Do("GET", "/camellia/health/status")->status, 200);
  auto m = Do("GET", "/metrics");
  ASSERT_TRUE(m);
  EXPECT_EQ(m->content_type, "text/plain; version=0.0.4; charset=utf-8");
  EXPECT_NE(m->body.find("cq_queue_depth_read_ok 1\n"), std::string::npos);
}

}  // namespace
}  // namespace chronoq::http
