// HTTP/1.x behaviour (API.md section 1): keep-alive, pipelining, Connection: close, HTTP/1.0
// with and without keep-alive, Expect: 100-continue, chunked request bodies, split writes.
#include "tests/integration/it_util.h"

namespace chronoq::it {
namespace {

using namespace std::chrono_literals;
using client::HttpConnection;

class HttpProtocolTest : public ServerTest {
 protected:
  HttpConnection Connect() {
    Result<HttpConnection> c = HttpConnection::Connect(server().endpoint());
    EXPECT_TRUE(c.has_value()) << c.error().message();
    return c.has_value() ? std::move(c).value() : HttpConnection();
  }
  std::string SendBody(const std::string& topic, const std::string& id) {
    return client::FormEncode(
        {{"topic", topic}, {"msgId", id}, {"msg", "m-" + id}, {"delayMillis", "0"}});
  }
  static std::string Q(const char* op) { return std::string(testutil::kQueuePath) + op; }
};

TEST_F(HttpProtocolTest, KeepAliveServesManyRequestsOnOneConnection) {
  std::string t = Topic();
  HttpConnection c = Connect();
  for (int i = 0; i < 200; ++i) {
    std::string id = std::to_string(i);
    Result<client::Response> r = c.Request("POST", Q("sendMsg"), SendBody(t, id));
    ASSERT_TRUE(r.has_value()) << "request " << i << ": " << r.error().message();
    ApiResponse a = testutil::ToApiResponse(*r);
    ASSERT_EQ(a.code(), 200) << a.Describe();
    EXPECT_EQ(a.header("Connection"), "");  // HTTP/1.1: keep-alive is the default
    EXPECT_FALSE(a.header("Content-Length").empty());
  }
  Result<client::Response> r = c.Request("GET", "/camellia/health/check");
  ASSERT_TRUE(r.has_value()) << r.error().message();
  EXPECT_EQ(r->status, 200);
  EXPECT_EQ(Int(TopicInfo(t)["readyQueueSize"]), 200);
}

TEST_F(HttpProtocolTest, PipelinedRequestsAreAnsweredInOrder) {
  std::string t = Topic();
  HttpConnection c = Connect();
  std::string batch;
  for (int i = 0; i < 20; ++i)
    batch += c.Format("POST", Q("sendMsg"), SendBody(t, std::to_string(i)));
  for (int i = 0; i < 20; ++i) {
    batch += c.Format("POST", Q("getMsg"),
                      client::FormEncode({{"topic", t}, {"msgId", std::to_string(i)}}));
  }
  batch += c.Format("GET", "/camellia/health/check");
  batch += c.Format("POST", Q("pullMsg"), client::FormEncode({{"topic", t}, {"batch", "100"}}));
  ASSERT_TRUE(c.SendRaw(batch).ok());
  for (int i = 0; i < 40; ++i) {
    Result<client::Response> r = c.ReadResponse(10s);
    ASSERT_TRUE(r.has_value()) << i << ": " << r.error().message();
    ApiResponse a = testutil::ToApiResponse(*r);
    ASSERT_EQ(a.code(), 200) << a.Describe();
    EXPECT_EQ(Str(a.at("delayMsg").at("msgId")), std::to_string(i % 20));
  }
  Result<client::Response> health = c.ReadResponse(10s);
  ASSERT_TRUE(health.has_value());
  EXPECT_EQ(health->body, R"({"code":200})");
  Result<client::Response> pull = c.ReadResponse(10s);
  ASSERT_TRUE(pull.has_value());
  ApiResponse a = testutil::ToApiResponse(*pull);
  ASSERT_TRUE(a.at("delayMsgList").is_array()) << a.Describe();
  EXPECT_EQ(a.at("delayMsgList").as_array().size(), 20u);
}

TEST_F(HttpProtocolTest, APipelinedRequestWaitsForAParkedLongPollBeforeIt) {
  std::string t = Topic();
  HttpConnection c = Connect();
  std::string batch =
      c.Format("POST", Q("longPollingMsg"),
               client::FormEncode({{"topic", t}, {"longPollingTimeoutMillis", "1000"}}));
  batch += c.Format("GET", "/camellia/health/check");
  ASSERT_TRUE(c.SendRaw(batch).ok());
  api().OneNode();  // the connection above is to the first node: count the polls parked there
  ASSERT_TRUE(api().WaitParked(1));
  // The request behind the long poll is not answered (and not mistaken for a departed client).
  Result<client::Response> early = c.ReadResponse(50ms);
  EXPECT_FALSE(early.has_value()) << "answered while the long poll before it is parked";
  EXPECT_EQ(api().ParkedLongPolls(), 1);
  Advance(1000);
  Result<client::Response> lp = c.ReadResponse(10s);
  ASSERT_TRUE(lp.has_value()) << lp.error().message();
  EXPECT_EQ(lp->body, R"({"code":200,"msg":"success","delayMsgList":[]})");
  Result<client::Response> health = c.ReadResponse(10s);
  ASSERT_TRUE(health.has_value()) << health.error().message();
  EXPECT_EQ(health->body, R"({"code":200})");
}

TEST_F(HttpProtocolTest, ConnectionCloseIsHonoured) {
  testutil::RawConnection c;
  ASSERT_TRUE(c.Connect(server().endpoint()).ok());
  // A second request behind the one with "Connection: close" is never answered.
  ASSERT_TRUE(c.Send("GET /camellia/health/check HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"
                     "GET /camellia/health/check HTTP/1.1\r\nHost: x\r\n\r\n")
                  .ok());
  EXPECT_TRUE(c.WaitClosed(5s)) << c.received();
  EXPECT_EQ(c.received().rfind("HTTP/1.1 200 ", 0), 0u) << c.received();
  EXPECT_NE(c.received().find("Connection: close\r\n"), std::string::npos) << c.received();
  EXPECT_EQ(c.received().find("HTTP/1.1", 1), std::string::npos)
      << "answered twice: " << c.received();
}

TEST_F(HttpProtocolTest, ConnectionCloseOnAQueueRequest) {
  std::string t = Topic();
  testutil::RawConnection c;
  ASSERT_TRUE(c.Connect(server().endpoint()).ok());
  std::string body = SendBody(t, "a");
  ASSERT_TRUE(c.Send("POST " + Q("sendMsg") +
                     " HTTP/1.1\r\nHost: x\r\nConnection: close\r\n"
                     "Content-Type: application/x-www-form-urlencoded\r\nContent-Length: " +
                     std::to_string(body.size()) + "\r\n\r\n" + body)
                  .ok());
  EXPECT_TRUE(c.WaitClosed(5s));
  EXPECT_NE(c.received().find("\"code\":200"), std::string::npos) << c.received();
  EXPECT_EQ(StatusOf(t, "a"), 2);
}

TEST_F(HttpProtocolTest, Http10WithoutKeepAliveClosesAfterTheAnswer) {
  testutil::RawConnection c;
  ASSERT_TRUE(c.Connect(server().endpoint()).ok());
  ASSERT_TRUE(c.Send("GET /camellia/health/check HTTP/1.0\r\n\r\n").ok());
  EXPECT_TRUE(c.WaitClosed(5s)) << c.received();
  EXPECT_NE(c.received().find(" 200 "), std::string::npos) << c.received();
  EXPECT_NE(c.received().find("Content-Type: application/json"), std::string::npos);
  EXPECT_EQ(c.received().substr(c.received().find("\r\n\r\n") + 4), R"({"code":200})");
}

TEST_F(HttpProtocolTest, Http10WithKeepAliveKeepsTheConnection) {
  std::string t = Topic();
  testutil::RawConnection c;
  ASSERT_TRUE(c.Connect(server().endpoint()).ok());
  std::string body = SendBody(t, "a");
  ASSERT_TRUE(c.Send("POST " + Q("sendMsg") +
                     " HTTP/1.0\r\nConnection: keep-alive\r\n"
                     "Content-Type: application/x-www-form-urlencoded\r\nContent-Length: " +
                     std::to_string(body.size()) + "\r\n\r\n" + body)
                  .ok());
  ASSERT_TRUE(c.ReadUntil("}}", 5s)) << c.received();
  EXPECT_NE(c.received().find("Connection: keep-alive"), std::string::npos) << c.received();
  EXPECT_NE(c.received().find("\"code\":200"), std::string::npos) << c.received();
  c.Clear();
  ASSERT_TRUE(c.Send("GET /camellia/health/check HTTP/1.0\r\nConnection: keep-alive\r\n\r\n").ok());
  ASSERT_TRUE(c.ReadUntil(R"({"code":200})", 5s)) << c.received();
  // Without keep-alive the next one closes it.
  c.Clear();
  ASSERT_TRUE(c.Send("GET /camellia/health/check HTTP/1.0\r\n\r\n").ok());
  EXPECT_TRUE(c.WaitClosed(5s));
  EXPECT_NE(c.received().find(R"({"code":200})"), std::string::npos) << c.received();
  EXPECT_EQ(StatusOf(t, "a"), 2);
}

TEST_F(HttpProtocolTest, Expect100ContinueGetsAnInterimAnswer) {
  std::string t = Topic();
  std::string body = SendBody(t, "a");
  testutil::RawConnection c;
  ASSERT_TRUE(c.Connect(server().endpoint()).ok());
  ASSERT_TRUE(c.Send("POST " + Q("sendMsg") +
                     " HTTP/1.1\r\nHost: x\r\nExpect: 100-continue\r\n"
                     "Content-Type: application/x-www-form-urlencoded\r\nContent-Length: " +
                     std::to_string(body.size()) + "\r\n\r\n")
                  .ok());
  ASSERT_TRUE(c.ReadUntil("\r\n\r\n", 5s)) << "no 100 Continue: " << c.received();
  EXPECT_EQ(c.received(), "HTTP/1.1 100 Continue\r\n\r\n");
  c.Clear();
  ASSERT_TRUE(c.Send(body).ok());
  ASSERT_TRUE(c.ReadUntil("}}", 5s)) << c.received();
  EXPECT_EQ(c.received().rfind("HTTP/1.1 200 ", 0), 0u) << c.received();
  EXPECT_NE(c.received().find("\"code\":200"), std::string::npos);
  EXPECT_EQ(StatusOf(t, "a"), 2);
}

TEST_F(HttpProtocolTest, Expect100ContinueOverTheBodyLimitIsRefusedWithout100) {
  testutil::RawConnection c;
  ASSERT_TRUE(c.Connect(server().endpoint()).ok());
  ASSERT_TRUE(c.Send("POST " + Q("sendMsg") +
                     " HTTP/1.1\r\nHost: x\r\nExpect: 100-continue\r\n"
                     "Content-Length: 100000000\r\n\r\n")
                  .ok());
  ASSERT_TRUE(c.ReadUntil("}", 5s)) << c.received();
  EXPECT_EQ(c.received().rfind("HTTP/1.1 413 ", 0), 0u) << c.received();
}

TEST_F(HttpProtocolTest, ChunkedRequestBodyWorks) {
  std::string t = Topic();
  std::string body = SendBody(t, "a");
  std::string half1 = body.substr(0, body.size() / 2);
  std::string half2 = body.substr(body.size() / 2);
  char hex1[16], hex2[16];
  std::snprintf(hex1, sizeof(hex1), "%zx", half1.size());
  std::snprintf(hex2, sizeof(hex2), "%zx", half2.size());
  testutil::RawConnection c;
  ASSERT_TRUE(c.Connect(server().endpoint()).ok());
  ASSERT_TRUE(c.Send("POST " + Q("sendMsg") +
                     " HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n"
                     "Content-Type: application/x-www-form-urlencoded\r\n\r\n" +
                     std::string(hex1) + "\r\n" + half1 + "\r\n" + std::string(hex2) + "\r\n" +
                     half2 + "\r\n0\r\n\r\n")
                  .ok());
  ASSERT_TRUE(c.ReadUntil("}}", 5s)) << c.received();
  EXPECT_NE(c.received().find("\"code\":200"), std::string::npos) << c.received();
  EXPECT_EQ(StatusOf(t, "a"), 2);
}

TEST_F(HttpProtocolTest, ARequestWrittenByteByByteWorks) {
  std::string t = Topic();
  std::string body = SendBody(t, "a");
  std::string req = "POST " + Q("sendMsg") +
                    " HTTP/1.1\r\nHost: x\r\n"
                    "content-type: application/x-www-form-urlencoded\r\ncontent-length: " +
                    std::to_string(body.size()) + "\r\n\r\n" + body;
  testutil::RawConnection c;
  ASSERT_TRUE(c.Connect(server().endpoint()).ok());
  for (char ch : req) ASSERT_TRUE(c.Send(std::string_view(&ch, 1)).ok());
  ASSERT_TRUE(c.ReadUntil("}}", 5s)) << c.received();
  EXPECT_NE(c.received().find("\"code\":200"), std::string::npos) << c.received();
}

TEST_F(HttpProtocolTest, HeadAnswersCarryNoBody) {
  // Health endpoints answer any method; a HEAD answer has headers only (RFC 9110 9.3.2), or the
  // next answer on the connection is misread.
  testutil::RawConnection c;
  ASSERT_TRUE(c.Connect(server().endpoint()).ok());
  ASSERT_TRUE(c.Send("HEAD /camellia/health/check HTTP/1.1\r\nHost: x\r\n\r\n"
                     "GET /camellia/health/status HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
                  .ok());
  EXPECT_TRUE(c.WaitClosed(5s));
  const std::string& got = c.received();
  size_t head_end = got.find("\r\n\r\n");
  ASSERT_NE(head_end, std::string::npos) << got;
  EXPECT_EQ(got.rfind("HTTP/1.1 200 ", 0), 0u) << got;
  EXPECT_EQ(got.substr(head_end + 4, 9), "HTTP/1.1 ") << "the HEAD answer has a body:\n" << got;
  EXPECT_EQ(got.substr(got.size() - 12), R"({"code":200})") << got;
}

TEST_F(HttpProtocolTest, AbsoluteFormTargetsAreAccepted) {
  // RFC 9112 section 3.2.2: a server must accept "http://host/path" as the request target.
  std::string t = Topic();
  std::string base = "http://127.0.0.1:" + std::to_string(server().port());
  ApiResponse r = api().Request("POST", base + Q("sendMsg"), SendBody(t, "a"));
  EXPECT_EQ(r.code(), 200) << r.Describe();
  r = api().Request("POST", base + Q("getMsg") + "?topic=" + client::UrlEncode(t) + "&msgId=a");
  EXPECT_EQ(r.code(), 200) << r.Describe();
  r = api().Request("GET", "HTTP://example.com/camellia/health/check");
  EXPECT_EQ(r.http.body, R"({"code":200})") << r.Describe();
  // The error's path is the path alone.
  ExpectRequestError(api().Request("GET", base + "/nope?x=1"), 404, "/nope");
}

TEST_F(HttpProtocolTest, ManyConcurrentConnections) {
  std::string t = Topic();
  std::vector<HttpConnection> conns;
  for (int i = 0; i < 100; ++i) conns.push_back(Connect());
  for (int i = 0; i < 100; ++i) {
    ASSERT_TRUE(conns[i]
                    .SendRaw(conns[i].Format("POST", Q("sendMsg"), SendBody(t, std::to_string(i))))
                    .ok());
  }
  for (int i = 0; i < 100; ++i) {
    Result<client::Response> r = conns[i].ReadResponse(10s);
    ASSERT_TRUE(r.has_value()) << i << ": " << r.error().message();
    EXPECT_EQ(testutil::ToApiResponse(*r).code(), 200);
  }
  EXPECT_EQ(Int(TopicInfo(t)["readyQueueSize"]), 100);
}

}  // namespace
}  // namespace chronoq::it
