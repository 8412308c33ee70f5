// Request errors (API.md sections 1 and 2, layer 1): real HTTP statuses with the five-field body.
// Missing and unparsable parameters, duplicates, broken percent-encoding, malformed JSON, unknown
// paths, wrong methods, body and header limits, malformed framing.
#include "tests/integration/it_util.h"

namespace chronoq::it {
namespace {

using namespace std::chrono_literals;

const std::string kSend = std::string(testutil::kQueuePath) + "sendMsg";
const std::string kPull = std::string(testutil::kQueuePath) + "pullMsg";
const std::string kLongPoll = std::string(testutil::kQueuePath) + "longPollingMsg";
const std::string kAck = std::string(testutil::kQueuePath) + "ackMsg";
const std::string kDelete = std::string(testutil::kQueuePath) + "deleteMsg";
const std::string kGet = std::string(testutil::kQueuePath) + "getMsg";
const std::string kTopicInfo = std::string(testutil::kQueuePath) + "getTopicInfo";

class RequestErrorsTest : public ServerTest {
 protected:
  // A valid sendMsg form with `name` replaced by `value` (or removed when value is nullopt).
  Form SendForm(const std::string& name, std::optional<std::string> value) {
    Form f = {{"topic", Topic()}, {"msg", "m"}, {"delayMillis", "0"}};
    std::erase_if(f, [&](const auto& p) { return p.first == name; });
    if (value) f.emplace_back(name, *value);
    return f;
  }
};

TEST_F(RequestErrorsTest, MissingRequiredParametersAre400NamingThem) {
  for (const char* p : {"topic", "msg", "delayMillis"}) {
    SCOPED_TRACE(p);
    ExpectRequestError(api().Post(kSend, SendForm(p, std::nullopt)), 400, kSend, p);
  }
  ExpectRequestError(api().Post(kPull, {{"batch", "1"}}), 400, kPull, "topic");
  ExpectRequestError(api().Post(kLongPoll, {}), 400, kLongPoll, "topic");
  std::string t = Topic();
  ExpectRequestError(api().Post(kAck, {{"msgId", "x"}, {"ack", "true"}}), 400, kAck, "topic");
  ExpectRequestError(api().Post(kAck, {{"topic", t}, {"ack", "true"}}), 400, kAck, "msgId");
  ExpectRequestError(api().Post(kAck, {{"topic", t}, {"msgId", "x"}}), 400, kAck, "ack");
  ExpectRequestError(api().Post(kDelete, {{"msgId", "x"}}), 400, kDelete, "topic");
  ExpectRequestError(api().Post(kDelete, {{"topic", t}}), 400, kDelete, "msgId");
  ExpectRequestError(api().Post(kGet, {{"msgId", "x"}}), 400, kGet, "topic");
  ExpectRequestError(api().Post(kGet, {{"topic", t}}), 400, kGet, "msgId");
  ExpectRequestError(api().Get(kTopicInfo), 400, kTopicInfo, "topic");
}

TEST_F(RequestErrorsTest, EmptyRequiredNumberOrBooleanIs400) {
  ExpectRequestError(api().Post(kSend, SendForm("delayMillis", "")), 400, kSend, "delayMillis");
  ExpectRequestError(api().Post(kAck, {{"topic", Topic()}, {"msgId", "x"}, {"ack", ""}}), 400, kAck,
                     "ack");
}

TEST_F(RequestErrorsTest, UnparsableLongsAre400) {
  for (const char* v : {"0x10", "1e3", "1.5", "1.0", " 5", "5 ", "abc", "++5", "5-", "-", "+",
                        "9223372036854775808", "-9223372036854775809", "99999999999999999999999",
                        "\xEF\xBC\x91" /* fullwidth 1 */}) {
    SCOPED_TRACE(std::string("'") + v + "'");
    ExpectRequestError(api().Post(kSend, SendForm("delayMillis", v)), 400, kSend, "delayMillis");
    ExpectRequestError(api().Post(kSend, SendForm("ttlMillis", v)), 400, kSend, "ttlMillis");
    ExpectRequestError(api().Post(kPull, {{"topic", Topic()}, {"ackTimeoutMillis", v}}), 400, kPull,
                       "ackTimeoutMillis");
    ExpectRequestError(api().Post(kLongPoll, {{"topic", Topic()}, {"longPollingTimeoutMillis", v}}),
                       400, kLongPoll, "longPollingTimeoutMillis");
  }
}

TEST_F(RequestErrorsTest, ValidLongSyntaxIsAccepted) {
  for (const char* v : {"+5", "-5", "0", "-0", "007", "-9223372036854775808"}) {
    SCOPED_TRACE(v);
    ExpectAppCode(api().Post(kSend, SendForm("delayMillis", v)), 200);
  }
  // In range for a long but over max-delay-millis: an application error, not a request error.
  ExpectAppCode(api().Post(kSend, SendForm("delayMillis", "9223372036854775807")), 400,
                "delayMillis");
}

TEST_F(RequestErrorsTest, IntParametersTake32BitValues) {
  for (const char* v : {"2147483648", "-2147483649", "4294967296", "1.0", "1e1", "0x1"}) {
    SCOPED_TRACE(v);
    ExpectRequestError(api().Post(kSend, SendForm("maxRetry", v)), 400, kSend, "maxRetry");
    ExpectRequestError(api().Post(kPull, {{"topic", Topic()}, {"batch", v}}), 400, kPull, "batch");
    ExpectRequestError(api().Post(kLongPoll, {{"topic", Topic()}, {"batch", v}}), 400, kLongPoll,
                       "batch");
  }
  ApiResponse r = api().Post(kSend, SendForm("maxRetry", "2147483647"));
  ExpectAppCode(r, 200);
  EXPECT_EQ(Int(r.at("delayMsg").at("maxRetry")), 2147483647);
  ExpectAppCode(api().Post(kSend, SendForm("maxRetry", "-2147483648")), 200);  // < 0: default
  ExpectAppCode(api().Post(kPull, {{"topic", Topic()}, {"batch", "2147483647"}}), 200);
  ExpectAppCode(api().Post(kPull, {{"topic", Topic()}, {"batch", "-2147483648"}}), 200);
}

TEST_F(RequestErrorsTest, UnparsableBooleansAre400) {
  std::string t = Topic();
  for (const char* v : {"maybe", "2", "tru", "truee", "y", "n", " true", "true ", "-1"}) {
    SCOPED_TRACE(v);
    ExpectRequestError(api().Post(kAck, {{"topic", t}, {"msgId", "x"}, {"ack", v}}), 400, kAck,
                       "ack");
    ExpectRequestError(api().Post(kDelete, {{"topic", t}, {"msgId", "x"}, {"release", v}}), 400,
                       kDelete, "release");
  }
}

TEST_F(RequestErrorsTest, AllBooleanSpellingsParse) {
  // Parsed: the message is unknown, so the answer is the application's 404, not HTTP 400.
  std::string t = Topic();
  for (const char* v : {"true", "TRUE", "True", "1", "yes", "YES", "on", "On", "false", "FALSE",
                        "0", "no", "No", "off", "OFF"}) {
    SCOPED_TRACE(v);
    ExpectAppCode(api().Post(kAck, {{"topic", t}, {"msgId", "x"}, {"ack", v}}), 404);
    ExpectAppCode(api().Post(kDelete, {{"topic", t}, {"msgId", "x"}, {"release", v}}), 404);
  }
}

TEST_F(RequestErrorsTest, ParameterTwiceInTheSamePlaceIs400NamingIt) {
  std::string t = client::UrlEncode(Topic());
  // Twice in the body.
  ApiResponse r = api().Request("POST", kSend, "topic=" + t + "&msg=a&delayMillis=0&msg=b");
  ExpectRequestError(r, 400, kSend, "msg");
  // Twice in the query string.
  r = api().Request("POST", kSend + "?delayMillis=1&delayMillis=2", "topic=" + t + "&msg=a");
  ExpectRequestError(r, 400, kSend, "delayMillis");
  // Twice in a JSON body.
  r = api().PostJson(kSend, R"({"topic":"x","msg":"a","msg":"b","delayMillis":0})");
  ExpectRequestError(r, 400, kSend, "msg");
  // Even with the same value, and even when empty.
  r = api().Request("POST", kGet, "topic=" + t + "&msgId=a&msgId=a");
  ExpectRequestError(r, 400, kGet, "msgId");
  r = api().Request("POST", kPull, "topic=" + t + "&batch=&batch=");
  ExpectRequestError(r, 400, kPull, "batch");
}

TEST_F(RequestErrorsTest, BrokenPercentEncodingIs400) {
  std::string t = client::UrlEncode(Topic());
  for (const char* bad : {"%ZZ", "%", "%4", "%G1", "abc%", "%%41"}) {
    SCOPED_TRACE(bad);
    ExpectRequestError(
        api().Request("POST", kSend, "topic=" + t + "&msg=" + bad + "&delayMillis=0"), 400, kSend);
    ExpectRequestError(
        api().Request("POST", kSend + "?msg=" + bad, "topic=" + t + "&delayMillis=0"), 400, kSend);
    // In a parameter name too.
    ExpectRequestError(
        api().Request("POST", kSend, "topic=" + t + "&msg=a&delayMillis=0&x" + bad + "=1"), 400,
        kSend);
  }
}

TEST_F(RequestErrorsTest, MalformedJsonBodyIs400) {
  for (const char* body : {R"({"topic":)", R"({"topic":"a")", "[1,2]", R"("topic")", "42",
                           R"({"topic":"a"} x)", R"({topic:"a"})", R"({"topic":'a'})", "{,}"}) {
    SCOPED_TRACE(body);
    ExpectRequestError(api().PostJson(kSend, body), 400, kSend);
  }
  // Nested values are not parameters.
  ExpectRequestError(api().PostJson(kSend, R"({"topic":{"a":1},"msg":"m","delayMillis":0})"), 400,
                     kSend, "topic");
  ExpectRequestError(api().PostJson(kSend, R"({"topic":"t","msg":["m"],"delayMillis":0})"), 400,
                     kSend, "msg");
  // JSON numbers that are not integers.
  ExpectRequestError(api().PostJson(kSend, R"({"topic":"t","msg":"m","delayMillis":1.5})"), 400,
                     kSend, "delayMillis");
  ExpectRequestError(api().PostJson(kSend, R"({"topic":"t","msg":"m","delayMillis":1e3})"), 400,
                     kSend, "delayMillis");
}

TEST_F(RequestErrorsTest, UnknownPathIs404) {
  for (const char* path : {"/camellia/delayQueue/nope", "/camellia/delayQueue/sendMsg/",
                           "/camellia/delayQueue/sendmsg", "/camellia/delayQueue", "/",
                           "/camellia/delayQueue//sendMsg", "/camellia/health/check/"}) {
    SCOPED_TRACE(path);
    ExpectRequestError(api().Request("POST", path, "topic=a"), 404, path);
    ExpectRequestError(api().Request("GET", path), 404, path);
  }
  // `path` carries no query string.
  ExpectRequestError(api().Request("GET", "/nope?topic=a&x=1"), 404, "/nope");
}

TEST_F(RequestErrorsTest, WrongMethodIs405WithAllow) {
  for (const char* op : {"sendMsg", "pullMsg", "longPollingMsg", "ackMsg", "deleteMsg", "getMsg"}) {
    std::string path = std::string(testutil::kQueuePath) + op;
    for (const char* m : {"GET", "PUT", "DELETE", "PATCH"}) {
      SCOPED_TRACE(path + " " + m);
      ApiResponse r = api().Request(m, path + "?topic=a");
      ExpectRequestError(r, 405, path, m);
      EXPECT_EQ(r.header("Allow"), "POST");
    }
  }
  for (const char* op : {"getMonitorData", "getTopicInfo", "getTopicInfoList"}) {
    std::string path = std::string(testutil::kQueuePath) + op;
    for (const char* m : {"POST", "PUT", "DELETE"}) {
      SCOPED_TRACE(path + " " + m);
      ApiResponse r = api().Request(m, path, "topic=a");
      ExpectRequestError(r, 405, path, m);
      EXPECT_EQ(r.header("Allow"), "GET");
    }
  }
}

TEST_F(RequestErrorsTest, RequestErrorsOfLongPollsAnswerAtOnce) {
  ApiResponse r = api().Request(
      "POST", kLongPoll,
      "topic=" + client::UrlEncode(Topic()) + "&longPollingTimeoutMillis=60000&batch=x",
      "application/x-www-form-urlencoded", 2s);
  ExpectRequestError(r, 400, kLongPoll, "batch");
}

TEST_F(RequestErrorsTest, BodyWithAnotherContentTypeIsIgnoredAndSaysSo) {
  ApiResponse r = api().Request("POST", kSend, "topic=a&msg=b&delayMillis=0", "text/plain");
  ExpectRequestError(r, 400, kSend, "text/plain");
}

TEST_F(RequestErrorsTest, BodyOverMaxBodyBytesIs413AndCloses) {
  // Default max-body-bytes is 8 MiB; announce one byte more and send nothing: the server must
  // refuse from the header alone.
  testutil::RawConnection c;
  ASSERT_TRUE(c.Connect(server().endpoint()).ok());
  ASSERT_TRUE(c.Send("POST " + kSend +
                     " HTTP/1.1\r\nHost: x\r\n"
                     "Content-Type: application/x-www-form-urlencoded\r\n"
                     "Content-Length: 8388609\r\n\r\n")
                  .ok());
  ASSERT_TRUE(c.WaitClosed(5s)) << c.received();
  ASSERT_EQ(c.received().rfind("HTTP/1.1 413 ", 0), 0u) << c.received();
  std::string body = c.received().substr(c.received().find("\r\n\r\n") + 4);
  client::Response resp;
  resp.status = 413;
  resp.headers.emplace_back("Content-Type", "application/json");
  resp.body = body;
  ExpectRequestError(testutil::ToApiResponse(resp), 413, kSend, "max-body-bytes");
}

TEST_F(RequestErrorsTest, HeadersOverMaxHeaderBytesAre431) {
  std::string big(20 * 1024, 'a');
  testutil::RawConnection c;
  ASSERT_TRUE(c.Connect(server().endpoint()).ok());
  ASSERT_TRUE(
      c.Send("GET /camellia/health/check HTTP/1.1\r\nHost: x\r\nX-Big: " + big + "\r\n\r\n").ok());
  ASSERT_TRUE(c.ReadUntil("}", 5s)) << c.received();
  EXPECT_EQ(c.received().rfind("HTTP/1.1 431 ", 0), 0u) << c.received();
  EXPECT_NE(c.received().find("Content-Type: application/json"), std::string::npos);
  EXPECT_NE(c.received().find("\"code\":431"), std::string::npos) << c.received();
  EXPECT_NE(c.received().find("max-header-bytes"), std::string::npos) << c.received();

  // Large headers below the limit are fine.
  std::string ok(8 * 1024, 'b');
  testutil::RawConnection c2;
  ASSERT_TRUE(c2.Connect(server().endpoint()).ok());
  ASSERT_TRUE(
      c2.Send("GET /camellia/health/check HTTP/1.1\r\nHost: x\r\nX-Big: " + ok + "\r\n\r\n").ok());
  ASSERT_TRUE(c2.ReadUntil("{\"code\":200}", 5s)) << c2.received();
  EXPECT_EQ(c2.received().rfind("HTTP/1.1 200 ", 0), 0u) << c2.received();
}

// Malformed framing: HTTP 400 with the JSON body, then the server closes the connection.
void ExpectFramingError(const client::Endpoint& ep, const std::string& bytes) {
  SCOPED_TRACE(bytes);
  testutil::RawConnection c;
  ASSERT_TRUE(c.Connect(ep).ok());
  ASSERT_TRUE(c.Send(bytes).ok());
  EXPECT_TRUE(c.WaitClosed(5s)) << "connection left open after: " << c.received();
  EXPECT_EQ(c.received().rfind("HTTP/1.1 400 ", 0), 0u) << c.received();
  EXPECT_NE(c.received().find("\"code\":400"), std::string::npos) << c.received();
  EXPECT_NE(c.received().find("\"error\":\"Bad Request\""), std::string::npos) << c.received();
}

TEST_F(RequestErrorsTest, MalformedFramingIs400AndCloses) {
  const client::Endpoint ep = server().endpoint();
  ExpectFramingError(ep, "GARBAGE\r\n\r\n");
  ExpectFramingError(ep, "GET /camellia/health/check HTTP/1.1\r\nHost x\r\n\r\n");
  ExpectFramingError(ep, "POST " + kSend + " HTTP/1.1\r\nHost: x\r\nContent-Length: abc\r\n\r\n");
  ExpectFramingError(ep, "POST " + kSend +
                             " HTTP/1.1\r\nHost: x\r\nContent-Length: 1\r\n"
                             "Content-Length: 2\r\n\r\nab");
  ExpectFramingError(ep, "POST " + kSend +
                             " HTTP/1.1\r\nHost: x\r\n"
                             "Transfer-Encoding: chunked\r\n\r\nzz\r\nabc\r\n0\r\n\r\n");
}

TEST_F(RequestErrorsTest, RequestErrorAfterGoodRequestOnSameConnection) {
  // A good request, then a framing error on the same connection: first answered normally.
  testutil::RawConnection c;
  ASSERT_TRUE(c.Connect(server().endpoint()).ok());
  ASSERT_TRUE(c.Send("GET /camellia/health/check HTTP/1.1\r\nHost: x\r\n\r\nBROKEN\r\n\r\n").ok());
  EXPECT_TRUE(c.WaitClosed(5s));
  EXPECT_EQ(c.received().rfind("HTTP/1.1 200 ", 0), 0u) << c.received();
  EXPECT_NE(c.received().find("HTTP/1.1 400 "), std::string::npos) << c.received();
}

class SmallBodyLimitTest : public ServerTest {
 protected:
  std::vector<std::string> Flags() const override { return {"--max-body-bytes=4096"}; }
};

TEST_F(SmallBodyLimitTest, BodyExactlyAtTheLimitIsAcceptedOneMoreIs413) {
  std::string head = "topic=" + client::UrlEncode(Topic()) + "&msg=a&delayMillis=0&pad=";
  std::string at_limit = head + std::string(4096 - head.size(), 'p');
  ASSERT_EQ(at_limit.size(), 4096u);
  ExpectAppCode(api().Request("POST", kSend, at_limit), 200);
  ApiResponse r = api().Request("POST", kSend, at_limit + "p");
  ExpectRequestError(r, 413, kSend, "max-body-bytes");
  EXPECT_EQ(r.header("Connection"), "close");
}

TEST_F(SmallBodyLimitTest, ChunkedBodyOverTheLimitIs413) {
  testutil::RawConnection c;
  ASSERT_TRUE(c.Connect(server().endpoint()).ok());
  std::string chunk(3000, 'x');
  ASSERT_TRUE(c.Send("POST " + kSend +
                     " HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n"
                     "Content-Type: application/x-www-form-urlencoded\r\n\r\n"
                     "bb8\r\n" +
                     chunk + "\r\nbb8\r\n" + chunk + "\r\n0\r\n\r\n")
                  .ok());
  ASSERT_TRUE(c.ReadUntil("}", 5s)) << c.received();
  EXPECT_EQ(c.received().rfind("HTTP/1.1 413 ", 0), 0u) << c.received();
  EXPECT_NE(c.received().find("\"code\":413"), std::string::npos) << c.received();
}

}  // namespace
}  // namespace chronoq::it
