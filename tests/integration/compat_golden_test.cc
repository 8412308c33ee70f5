// Golden camellia cases (STYLE.md section 7, label `compat`): the requests of camellia's API
// document (seed 000), sent the way the Java SDK sends them, against a fresh server on port 0 with
// the test clock, compared byte for byte with the expected answers. Times are exact because the
// clock only moves when a case says so: `$NOW` is the server time when the session starts,
// `$NOW+N` that plus N ms. `$STR` in an expected body matches any non-empty JSON string
// (error sentences are chronoq's own).
#include <regex>

#include "tests/integration/it_util.h"

namespace chronoq::it {
namespace {

constexpr const char* kForm = "application/x-www-form-urlencoded;charset=utf-8";

struct Golden {
  const char* name;
  int64_t advance_before = 0;  // ms to move the clock before the request
  const char* method;
  const char* target;
  const char* body;  // form-encoded unless it starts with '{'
  int http_status;
  const char* expected;         // with $NOW, $NOW+N and $STR
  const char* allow = nullptr;  // expected Allow header
};

// One session replaying camellia's documented examples in order.
const Golden
    kSession[] =
        {
            {"send", 0, "POST", "/camellia/delayQueue/sendMsg",
             "topic=topic1&msgId=6faa7316bc504f97aa6dd03ae12a2170&msg=abc&delayMillis=10000&"
             "ttlMillis=20000&maxRetry=3",
             200,
             R"({"code":200,"msg":"success","delayMsg":{"topic":"topic1","msgId":"6faa7316bc504f97aa6dd03ae12a2170","msg":"abc","produceTime":$NOW,"triggerTime":$NOW+10000,"expireTime":$NOW+30000,"maxRetry":3,"retry":0,"status":1}})"},
            {"send second", 0, "POST", "/camellia/delayQueue/sendMsg",
             "topic=topic1&msgId=6faa7316bc504f97aa6dd03ae12a2171&msg=def&delayMillis=10000&"
             "ttlMillis=20000&maxRetry=3",
             200,
             R"({"code":200,"msg":"success","delayMsg":{"topic":"topic1","msgId":"6faa7316bc504f97aa6dd03ae12a2171","msg":"def","produceTime":$NOW,"triggerTime":$NOW+10000,"expireTime":$NOW+30000,"maxRetry":3,"retry":0,"status":1}})"},
            {"send duplicate id", 0, "POST", "/camellia/delayQueue/sendMsg",
             "topic=topic1&msgId=6faa7316bc504f97aa6dd03ae12a2170&msg=other&delayMillis=0", 200,
             R"({"code":200,"msg":"success","delayMsg":{"topic":"topic1","msgId":"6faa7316bc504f97aa6dd03ae12a2170","msg":"abc","produceTime":$NOW,"triggerTime":$NOW+10000,"expireTime":$NOW+30000,"maxRetry":3,"retry":0,"status":1}})"},
            {"get waiting", 0, "POST", "/camellia/delayQueue/getMsg",
             "topic=topic1&msgId=6faa7316bc504f97aa6dd03ae12a2170", 200,
             R"({"code":200,"msg":"success","delayMsg":{"topic":"topic1","msgId":"6faa7316bc504f97aa6dd03ae12a2170","msg":"abc","produceTime":$NOW,"triggerTime":$NOW+10000,"expireTime":$NOW+30000,"maxRetry":3,"retry":0,"status":1}})"},
            {"pull before trigger", 0, "POST", "/camellia/delayQueue/pullMsg",
             "topic=topic1&ackTimeoutMillis=30000&batch=2", 200,
             R"({"code":200,"msg":"success","delayMsgList":[]})"},
            {"topic info", 0, "GET", "/camellia/delayQueue/getTopicInfo?topic=topic1", "", 200,
             R"({"code":200,"msg":"success","data":{"topic":"topic1","waitingQueueSize":2,"waitingQueueInfo":{"sizeOf0To1min":2,"sizeOf1minTo10min":0,"sizeOf10minTo30min":0,"sizeOf30minTo1hour":0,"sizeOf1hourTo6hour":0,"sizeOf6hourTo1day":0,"sizeOf1dayTo7day":0,"sizeOf7dayTo30day":0,"sizeOf30dayToInfinite":0},"readyQueueSize":0,"ackQueueSize":0}})"},
            {"pull after trigger", 10000, "POST", "/camellia/delayQueue/pullMsg",
             "topic=topic1&ackTimeoutMillis=30000&batch=2", 200,
             R"({"code":200,"msg":"success","delayMsgList":[{"topic":"topic1","msgId":"6faa7316bc504f97aa6dd03ae12a2170","msg":"abc","produceTime":$NOW,"triggerTime":$NOW+10000,"expireTime":$NOW+30000,"maxRetry":3,"retry":1,"status":3},{"topic":"topic1","msgId":"6faa7316bc504f97aa6dd03ae12a2171","msg":"def","produceTime":$NOW,"triggerTime":$NOW+10000,"expireTime":$NOW+30000,"maxRetry":3,"retry":1,"status":3}]})"},
            {"topic info consuming", 0, "GET", "/camellia/delayQueue/getTopicInfo?topic=topic1", "", 200, R"({"code":200,"msg":"success","data":{"topic":"topic1","waitingQueueSize":0,"waitingQueueInfo":{"sizeOf0To1min":0,"sizeOf1minTo10min":0,"sizeOf10minTo30min":0,"sizeOf30minTo1hour":0,"sizeOf1hourTo6hour":0,"sizeOf6hourTo1day":0,"sizeOf1dayTo7day":0,"sizeOf7dayTo30day":0,"sizeOf30dayToInfinite":0},"readyQueueSize":0,"ackQueueSize":2}})"},
            {"ack", 0, "POST", "/camellia/delayQueue/ackMsg",
             "topic=topic1&msgId=6faa7316bc504f97aa6dd03ae12a2170&ack=true", 200,
             R"({"code":200,"msg":"success"})"},
            {"get acked", 0, "POST", "/camellia/delayQueue/getMsg",
             "topic=topic1&msgId=6faa7316bc504f97aa6dd03ae12a2170", 200,
             R"({"code":200,"msg":"success","delayMsg":{"topic":"topic1","msgId":"6faa7316bc504f97aa6dd03ae12a2170","msg":"abc","produceTime":$NOW,"triggerTime":$NOW+10000,"expireTime":$NOW+30000,"maxRetry":3,"retry":1,"status":4}})"},
            {"nack", 0, "POST", "/camellia/delayQueue/ackMsg",
             "topic=topic1&msgId=6faa7316bc504f97aa6dd03ae12a2171&ack=false", 200,
             R"({"code":200,"msg":"success"})"},
            {"long poll gets the nacked one", 0, "POST", "/camellia/delayQueue/longPollingMsg",
             "topic=topic1&ackTimeoutMillis=30000&batch=2&longPollingTimeoutMillis=10000", 200,
             R"({"code":200,"msg":"success","delayMsgList":[{"topic":"topic1","msgId":"6faa7316bc504f97aa6dd03ae12a2171","msg":"def","produceTime":$NOW,"triggerTime":$NOW+10000,"expireTime":$NOW+30000,"maxRetry":3,"retry":2,"status":3}]})"},
            {"delete", 0, "POST", "/camellia/delayQueue/deleteMsg",
             "topic=topic1&msgId=6faa7316bc504f97aa6dd03ae12a2171&release=false", 200,
             R"({"code":200,"msg":"success"})"},
            {"get deleted", 0, "POST", "/camellia/delayQueue/getMsg",
             "topic=topic1&msgId=6faa7316bc504f97aa6dd03ae12a2171", 200,
             R"({"code":200,"msg":"success","delayMsg":{"topic":"topic1","msgId":"6faa7316bc504f97aa6dd03ae12a2171","msg":"def","produceTime":$NOW,"triggerTime":$NOW+10000,"expireTime":$NOW+30000,"maxRetry":3,"retry":2,"status":7}})"},
            {"delete again", 0, "POST", "/camellia/delayQueue/deleteMsg",
             "topic=topic1&msgId=6faa7316bc504f97aa6dd03ae12a2171", 200,
             R"({"code":404,"msg":$STR})"},
            {"ack unknown", 0, "POST", "/camellia/delayQueue/ackMsg",
             "topic=topic1&msgId=nope&ack=true", 200, R"({"code":404,"msg":$STR})"},
            {"get unknown", 0, "POST", "/camellia/delayQueue/getMsg", "topic=topic1&msgId=nope",
             200, R"({"code":404,"msg":$STR,"delayMsg":null})"},
            {"send empty msg", 0, "POST", "/camellia/delayQueue/sendMsg",
             "topic=topic1&msg=&delayMillis=0", 200, R"({"code":400,"msg":$STR,"delayMsg":null})"},
            {"pull empty topic", 0, "POST", "/camellia/delayQueue/pullMsg", "topic=", 200,
             R"({"code":400,"msg":$STR,"delayMsgList":null})"},
            {"send missing delay", 0, "POST", "/camellia/delayQueue/sendMsg",
             "topic=topic1&msg=abc", 400,
             R"({"code":400,"msg":$STR,"status":400,"error":"Bad Request","path":"/camellia/delayQueue/sendMsg"})"},
            {"ack missing ack", 0, "POST", "/camellia/delayQueue/ackMsg", "topic=topic1&msgId=x",
             400,
             R"({"code":400,"msg":$STR,"status":400,"error":"Bad Request","path":"/camellia/delayQueue/ackMsg"})"},
            {"wrong method", 0, "GET", "/camellia/delayQueue/sendMsg?topic=topic1", "", 405,
             R"({"code":405,"msg":$STR,"status":405,"error":"Method Not Allowed","path":"/camellia/delayQueue/sendMsg"})",
             "POST"},
            {"unknown path", 0, "POST", "/camellia/delayQueue/sendMsgs", "topic=topic1", 404,
             R"({"code":404,"msg":$STR,"status":404,"error":"Not Found","path":"/camellia/delayQueue/sendMsgs"})"},
            {"topic list", 0, "GET", "/camellia/delayQueue/getTopicInfoList", "", 200,
             R"({"code":200,"msg":"success","data":[{"topic":"topic1","waitingQueueSize":0,"waitingQueueInfo":{"sizeOf0To1min":0,"sizeOf1minTo10min":0,"sizeOf10minTo30min":0,"sizeOf30minTo1hour":0,"sizeOf1hourTo6hour":0,"sizeOf6hourTo1day":0,"sizeOf1dayTo7day":0,"sizeOf7dayTo30day":0,"sizeOf30dayToInfinite":0},"readyQueueSize":0,"ackQueueSize":0}]})"},
            {"json body send", 0, "POST", "/camellia/delayQueue/sendMsg",
             R"({"topic":"topic2","msgId":"j1","msg":"abc","delayMillis":"0","ttlMillis":20000,"maxRetry":"3"})",
             200,
             R"({"code":200,"msg":"success","delayMsg":{"topic":"topic2","msgId":"j1","msg":"abc","produceTime":$NOW+10000,"triggerTime":$NOW+10000,"expireTime":$NOW+30000,"maxRetry":3,"retry":0,"status":2}})"},
            {"health check", 0, "GET", "/camellia/health/check", "", 200, R"({"code":200})"},
            {"health status", 0, "GET", "/camellia/health/status", "", 200, R"({"code":200})"},
            {"offline", 0, "GET", "/camellia/health/offline", "", 200, R"({"code":200})"},
            {"health status offline", 0, "GET", "/camellia/health/status", "", 500,
             R"({"code":500})"},
            {"online", 0, "GET", "/camellia/health/online", "", 200, R"({"code":200})"},
            {"health status online", 0, "GET", "/camellia/health/status", "", 200,
             R"({"code":200})"},
};

// Replaces $NOW and $NOW+N by numbers.
std::string Expand(std::string s, int64_t now) {
  static const std::regex kNow(R"(\$NOW(\+(\d+))?)");
  std::string out;
  auto begin = std::sregex_iterator(s.begin(), s.end(), kNow);
  size_t last = 0;
  for (auto it = begin; it != std::sregex_iterator(); ++it) {
    const std::smatch& m = *it;
    out.append(s, last, static_cast<size_t>(m.position()) - last);
    int64_t v = now + (m[2].matched ? std::stoll(m[2].str()) : 0);
    out += std::to_string(v);
    last = static_cast<size_t>(m.position() + m.length());
  }
  out.append(s, last);
  return out;
}

// Matches `got` against an expected body with $STR wildcards (each any non-empty JSON string).
bool MatchesGolden(const std::string& got, const std::string& expected) {
  std::string pattern;
  size_t pos = 0;
  for (;;) {
    size_t w = expected.find("$STR", pos);
    std::string literal =
        expected.substr(pos, w == std::string::npos ? std::string::npos : w - pos);
    for (char c : literal) {
      if (std::string_view(R"(\^$.|?*+()[]{})").find(c) != std::string_view::npos) pattern += '\\';
      pattern += c;
    }
    if (w == std::string::npos) break;
    pattern += R"("([^"\\]|\\.)+")";
    pos = w + 4;
  }
  return std::regex_match(got, std::regex(pattern));
}

class CompatGoldenTest : public ::testing::Test {
 protected:
  void SetUp() override {
    // A fresh server: getTopicInfoList and getMonitorData must see only this session.
    Status s = server_.Start({"--test-clock", "--log-level=warn", "--monitor-interval-seconds=60"});
    ASSERT_TRUE(s.ok()) << s.message();
    api_ = std::make_unique<ApiClient>(server_.endpoint());
  }
  ServerProcess server_;
  std::unique_ptr<ApiClient> api_;
};

TEST_F(CompatGoldenTest, CamelliaDocumentedSession) {
  int64_t now = api_->Now();
  for (const Golden& g : kSession) {
    SCOPED_TRACE(g.name);
    if (g.advance_before > 0) api_->AdvanceClock(g.advance_before);
    std::string_view body = g.body;
    bool json_body = !body.empty() && body.front() == '{';
    ApiResponse r = api_->Request(g.method, g.target, body, json_body ? "application/json" : kForm);
    EXPECT_EQ(r.status, g.http_status) << r.Describe();
    EXPECT_EQ(r.header("Content-Type"), "application/json");
    std::string expected = Expand(g.expected, now);
    EXPECT_TRUE(MatchesGolden(r.http.body, expected))
        << "got:      " << r.http.body << "\nexpected: " << expected;
    if (g.allow != nullptr) {
      EXPECT_EQ(r.header("Allow"), g.allow);
    }
  }
}

TEST_F(CompatGoldenTest, MonitorDataAfterOneInterval) {
  int64_t now = api_->Now();
  int64_t start = api_->AdvanceClock(60'000 - now % 60'000);  // start of an interval
  auto form = [](const char* b) { return std::string(b); };
  ASSERT_EQ(api_->Request("POST", "/camellia/delayQueue/sendMsg",
                          form("topic=topic1&msgId=a&msg=abc&delayMillis=1000"), kForm)
                .code(),
            200);
  api_->AdvanceClock(1000);
  ASSERT_EQ(
      api_->Request("POST", "/camellia/delayQueue/pullMsg", form("topic=topic1"), kForm).code(),
      200);
  ASSERT_EQ(api_->Request("POST", "/camellia/delayQueue/ackMsg",
                          form("topic=topic1&msgId=a&ack=true"), kForm)
                .code(),
            200);
  api_->AdvanceClock(start + 60'000 - api_->Now());
  ApiResponse r = api_->Get("/camellia/delayQueue/getMonitorData");
  EXPECT_EQ(r.status, 200);
  // `avg` is a float: 0 and 0.0 are the same answer.
  std::string body =
      std::regex_replace(r.http.body, std::regex(R"("avg":(\d+)\.0([,}]))"), "\"avg\":$1$2");
  EXPECT_EQ(
      body,
      R"({"code":200,"msg":"success","data":{"requestStatsList":[{"topic":"topic1","sendMsg":1,"pullMsg":1,"deleteMsg":0,"ackMsg":1,"getMsg":0,"triggerMsgReady":1,"triggerMsgEndLife":0,"triggerMsgTimeout":0}],)"
      R"("pullMsgTimeGapStatsList":[{"topic":"topic1","count":1,"avg":0,"max":0}],)"
      R"("readyQueueTimeGapStatsList":[{"topic":"topic1","count":1,"avg":0,"max":0}]}})");
}

TEST_F(CompatGoldenTest, GeneratedIdAnswer) {
  int64_t now = api_->Now();
  ApiResponse r = api_->Request("POST", "/camellia/delayQueue/sendMsg",
                                "topic=topic1&msg=abc&delayMillis=10000", kForm);
  std::string expected = Expand(
      R"({"code":200,"msg":"success","delayMsg":{"topic":"topic1","msgId":$STR,"msg":"abc","produceTime":$NOW,"triggerTime":$NOW+10000,"expireTime":$NOW+3610000,"maxRetry":10,"retry":0,"status":1}})",
      now);
  EXPECT_TRUE(MatchesGolden(r.http.body, expected)) << r.http.body;
  EXPECT_TRUE(std::regex_match(Str(r.at("delayMsg").at("msgId")), std::regex("[0-9a-f]{32}")));
}

}  // namespace
}  // namespace chronoq::it
