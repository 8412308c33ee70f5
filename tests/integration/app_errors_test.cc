// Application results with code 400 / 404 (API.md section 2, layer 2; section 8 limits exactly at
// the boundary), and how parameters are read (section 1): query + body merge, JSON bodies,
// unknown parameters, no trimming, batch and long-poll clamps.
#include "tests/integration/it_util.h"

namespace chronoq::it {
namespace {

const std::string kSend = std::string(testutil::kQueuePath) + "sendMsg";
const std::string kPull = std::string(testutil::kQueuePath) + "pullMsg";
const std::string kGet = std::string(testutil::kQueuePath) + "getMsg";
const std::string kAck = std::string(testutil::kQueuePath) + "ackMsg";

class AppErrorsTest : public ServerTest {};

// The error shapes of section 2: the same fields as the success answer, lists/objects as null.
TEST_F(AppErrorsTest, EmptyTopicIsCode400InEachEndpointsShape) {
  ApiResponse r = Send("", "m", 0);
  ExpectAppCode(r, 400, "topic");
  EXPECT_EQ(Keys(r.json), (std::vector<std::string>{"code", "msg", "delayMsg"}));
  EXPECT_TRUE(r.at("delayMsg").is_null());

  r = Pull("");
  ExpectAppCode(r, 400, "topic");
  EXPECT_EQ(Keys(r.json), (std::vector<std::string>{"code", "msg", "delayMsgList"}));
  EXPECT_TRUE(r.at("delayMsgList").is_null());

  r = api().Queue("longPollingMsg", {{"topic", ""}, {"longPollingTimeoutMillis", "60000"}});
  ExpectAppCode(r, 400, "topic");
  EXPECT_TRUE(r.at("delayMsgList").is_null());

  r = GetMsg("", "x");
  ExpectAppCode(r, 400, "topic");
  EXPECT_EQ(Keys(r.json), (std::vector<std::string>{"code", "msg", "delayMsg"}));
  EXPECT_TRUE(r.at("delayMsg").is_null());

  r = Ack("", "x");
  ExpectAppCode(r, 400, "topic");
  EXPECT_EQ(Keys(r.json), (std::vector<std::string>{"code", "msg"}));
  r = Delete("", "x");
  ExpectAppCode(r, 400, "topic");
  EXPECT_EQ(Keys(r.json), (std::vector<std::string>{"code", "msg"}));

  r = api().Monitor("getTopicInfo", {{"topic", ""}});
  ExpectAppCode(r, 400, "topic");
  EXPECT_EQ(Keys(r.json), (std::vector<std::string>{"code", "msg", "data"}));
  EXPECT_TRUE(r.at("data").is_null());
}

TEST_F(AppErrorsTest, EmptyMsgIsCode400) {
  ApiResponse r = Send(Topic(), "", 0);
  ExpectAppCode(r, 400, "msg");
  EXPECT_TRUE(r.at("delayMsg").is_null());
  EXPECT_EQ(Int(TopicInfo(Topic())["readyQueueSize"]), 0);
}

TEST_F(AppErrorsTest, EmptyMsgIdWhereRequiredIsCode400) {
  std::string t = Topic();
  ExpectAppCode(GetMsg(t, ""), 400, "msgId");
  ExpectAppCode(Ack(t, ""), 400, "msgId");
  ExpectAppCode(Ack(t, "", false), 400, "msgId");
  ExpectAppCode(Delete(t, ""), 400, "msgId");
}

TEST_F(AppErrorsTest, TopicLimitIs255Bytes) {
  std::string t255 = Topic() + ".";
  t255 += std::string(255 - t255.size(), 'x');
  ASSERT_EQ(t255.size(), 255u);
  ExpectAppCode(Send(t255, "m", 0, {{"msgId", "a"}}), 200);
  ExpectAppCode(GetMsg(t255, "a"), 200);
  EXPECT_EQ(PullOk(t255).size(), 1u);
  std::string t256 = t255 + "x";
  ExpectAppCode(Send(t256, "m", 0), 400, "topic");
  ExpectAppCode(Pull(t256), 400, "topic");
  ExpectAppCode(GetMsg(t256, "a"), 400, "topic");
  ExpectAppCode(Ack(t256, "a"), 400, "topic");
  ExpectAppCode(Delete(t256, "a"), 400, "topic");
  ExpectAppCode(api().Monitor("getTopicInfo", {{"topic", t256}}), 400, "topic");
  // Counted in UTF-8 bytes: 85 three-byte characters = 255 bytes; one more byte is too many.
  std::string cjk;
  for (int i = 0; i < 85; ++i) cjk += "\xE4\xB8\xAD";  // 中
  ExpectAppCode(Send(cjk, "m", 0), 200);
  ExpectAppCode(Send(cjk + "x", "m", 0), 400, "topic");
}

TEST_F(AppErrorsTest, MsgIdLimitIs255Bytes) {
  std::string t = Topic();
  std::string id255(255, 'i');
  json::object m = SendOk(t, "m", 0, {{"msgId", id255}});
  EXPECT_EQ(MsgId(m), id255);
  ExpectAppCode(GetMsg(t, id255), 200);
  std::string id256(256, 'i');
  ExpectAppCode(Send(t, "m", 0, {{"msgId", id256}}), 400, "msgId");
  ExpectAppCode(GetMsg(t, id256), 400, "msgId");
  ExpectAppCode(Ack(t, id256), 400, "msgId");
  ExpectAppCode(Delete(t, id256), 400, "msgId");
}

TEST_F(AppErrorsTest, ControlCharactersInTopicOrMsgIdAreCode400) {
  std::string t = Topic();
  for (std::string bad :
       {std::string("a\x01"), std::string("a\nb"), std::string("a\tb"), std::string("\x7F"),
        std::string("a\x1F"), std::string("a\0b", 3), std::string("a\rb")}) {
    SCOPED_TRACE(client::UrlEncode(bad));
    ExpectAppCode(Send(t + bad, "m", 0), 400, "topic");
    ExpectAppCode(Pull(t + bad), 400, "topic");
    ExpectAppCode(Send(t, "m", 0, {{"msgId", bad}}), 400, "msgId");
    ExpectAppCode(GetMsg(t, bad), 400, "msgId");
    ExpectAppCode(Ack(t, bad), 400, "msgId");
    ExpectAppCode(Delete(t, bad), 400, "msgId");
  }
  // Other characters are fine: spaces, punctuation, non-ASCII.
  json::object m = SendOk(t + " a&b=c+%\"\\", "m", 0, {{"msgId", "id with spaces/é"}});
  EXPECT_EQ(Str(m["topic"]), t + " a&b=c+%\"\\");
  EXPECT_EQ(MsgId(m), "id with spaces/é");
}

TEST_F(AppErrorsTest, InvalidUtf8IsCode400) {
  std::string t = Topic();
  for (std::string bad : {std::string("\xFF"), std::string("\xC3"), std::string("\xC0\xAF"),
                          std::string("\xED\xA0\x80"), std::string("a\x80z")}) {
    SCOPED_TRACE(client::UrlEncode(bad));
    ExpectAppCode(Send(t + bad, "m", 0), 400, "topic");
    ExpectAppCode(Send(t, "m", 0, {{"msgId", bad}}), 400, "msgId");
    ExpectAppCode(GetMsg(t, bad), 400, "msgId");
    ExpectAppCode(Send(t, "m" + bad, 0), 400, "msg");
  }
}

TEST_F(AppErrorsTest, MaxDelayIsTenYears) {
  std::string t = Topic();
  const int64_t ten_years = int64_t{10} * 365 * kDay;
  int64_t now = Now();
  json::object m = SendOk(t, "m", ten_years);
  EXPECT_EQ(Int(m["triggerTime"]), now + ten_years);
  ApiResponse r = Send(t, "m", ten_years + 1);
  ExpectAppCode(r, 400, "delayMillis");
  EXPECT_TRUE(r.at("delayMsg").is_null());
}

TEST_F(AppErrorsTest, HugeTtlSaturatesInsteadOfWrapping) {
  std::string t = Topic();
  json::object m = SendOk(t, "m", 1000, {{"ttlMillis", "9223372036854775807"}});
  EXPECT_GT(Int(m["expireTime"]), Int(m["triggerTime"]));
  EXPECT_EQ(Int(m["status"]), 1);
  Advance(1000);
  EXPECT_EQ(StatusOf(t, MsgId(m)), 2);
  EXPECT_EQ(PullOk(t).size(), 1u);
}

TEST_F(AppErrorsTest, QueryAndBodyMergeWithTheBodyWinning) {
  std::string t = Topic();
  // topic from the query, the rest from the body.
  ApiResponse r = api().Post(kSend, {{"msg", "from-body"}, {"delayMillis", "0"}, {"msgId", "q1"}},
                             "topic=" + client::UrlEncode(t));
  ExpectAppCode(r, 200);
  EXPECT_EQ(Str(r.at("delayMsg").at("topic")), t);
  // Both places: the body wins.
  r = api().Post(kSend, {{"topic", t}, {"msg", "body"}, {"delayMillis", "5"}, {"msgId", "q2"}},
                 "msg=query&delayMillis=7000&msgId=zzz");
  ExpectAppCode(r, 200);
  EXPECT_EQ(Str(r.at("delayMsg").at("msg")), "body");
  EXPECT_EQ(Str(r.at("delayMsg").at("msgId")), "q2");
  EXPECT_EQ(Int(r.at("delayMsg").at("triggerTime")) - Int(r.at("delayMsg").at("produceTime")), 5);
  // Even an empty body value wins over the query (and empty msgId means "generate").
  r = api().Post(kSend, {{"topic", t}, {"msg", "m"}, {"delayMillis", "0"}, {"msgId", ""}},
                 "msgId=from-query");
  ExpectAppCode(r, 200);
  EXPECT_EQ(MsgId(r.at("delayMsg").as_object()).size(), 32u);
  // Required parameters may all come from the query of a POST.
  r = api().Post(kGet, {}, "topic=" + client::UrlEncode(t) + "&msgId=q1");
  ExpectAppCode(r, 200);
  EXPECT_EQ(Str(r.at("delayMsg").at("msg")), "from-body");
}

TEST_F(AppErrorsTest, JsonBodyTakesNumbersAndBooleansAsJsonOrStrings) {
  std::string t = Topic();
  json::object body = {{"topic", t},    {"msg", "j1"},         {"delayMillis", 1000},
                       {"msgId", "j1"}, {"ttlMillis", "5000"}, {"maxRetry", 2}};
  ApiResponse r = api().PostJson(kSend, json::serialize(body));
  ExpectAppCode(r, 200);
  const json::value& m = r.at("delayMsg");
  EXPECT_EQ(Int(m.at("triggerTime")) - Int(m.at("produceTime")), 1000);
  EXPECT_EQ(Int(m.at("expireTime")) - Int(m.at("triggerTime")), 5000);
  EXPECT_EQ(Int(m.at("maxRetry")), 2);

  body = {{"topic", t},          {"msg", "j2"},     {"delayMillis", "0"},
          {"msgId", "j2"},       {"maxRetry", "3"}, {"unknown", {{"nested", true}}},
          {"ttlMillis", nullptr}};
  r = api().PostJson(kSend, json::serialize(body));
  ExpectAppCode(r, 200);
  EXPECT_EQ(Int(r.at("delayMsg").at("maxRetry")), 3);

  r = api().PostJson(kPull, json::serialize(json::object{{"topic", t}, {"batch", "5"}}));
  ExpectAppCode(r, 200);
  ASSERT_EQ(r.at("delayMsgList").as_array().size(), 1u);  // j1 still waiting
  r = api().PostJson(kAck,
                     json::serialize(json::object{{"topic", t}, {"msgId", "j2"}, {"ack", true}}));
  ExpectAppCode(r, 200);
  Advance(1000);
  ASSERT_EQ(PullOk(t).size(), 1u);
  r = api().PostJson(kAck,
                     json::serialize(json::object{{"topic", t}, {"msgId", "j1"}, {"ack", "YES"}}));
  ExpectAppCode(r, 200);
  EXPECT_EQ(StatusOf(t, "j1"), 4);
  // A JSON body merges with the query string too; the body wins.
  r = api().PostJson(kGet, json::serialize(json::object{{"msgId", "j1"}}),
                     "topic=" + client::UrlEncode(t) + "&msgId=other");
  ExpectAppCode(r, 200);
  EXPECT_EQ(MsgId(r.at("delayMsg").as_object()), "j1");
  // Content-Type parameters and +json media types.
  r = api().Request("POST", kGet, json::serialize(json::object{{"topic", t}, {"msgId", "j1"}}),
                    "application/json; charset=utf-8");
  ExpectAppCode(r, 200);
}

TEST_F(AppErrorsTest, FormContentTypeWithCharsetWorks) {
  std::string t = Topic();
  ApiResponse r = api().Request(
      "POST", kSend, client::FormEncode({{"topic", t}, {"msg", "m"}, {"delayMillis", "0"}}),
      "application/x-www-form-urlencoded;charset=utf-8");
  ExpectAppCode(r, 200);
}

TEST_F(AppErrorsTest, UnknownParametersAreIgnored) {
  std::string t = Topic();
  ApiResponse r = Send(t, "m", 0, {{"foo", "bar"}, {"msgID", "not-the-id"}, {"", "x"}});
  ExpectAppCode(r, 200);
  EXPECT_NE(MsgId(r.at("delayMsg").as_object()), "not-the-id");
  ExpectAppCode(api().Request("POST", kPull, "topic=" + client::UrlEncode(t) + "&&x&=1&y="), 200);
}

TEST_F(AppErrorsTest, StringsAreUsedExactlyAsGiven) {
  std::string t = Topic();
  json::object m = SendOk(" " + t + " ", "  padded  ", 0, {{"msgId", " id "}});
  EXPECT_EQ(Str(m["topic"]), " " + t + " ");
  EXPECT_EQ(Str(m["msg"]), "  padded  ");
  EXPECT_EQ(MsgId(m), " id ");
  EXPECT_EQ(StatusOf(" " + t + " ", " id "), 2);
  EXPECT_EQ(StatusOf(" " + t + " ", "id"), 0);  // a different id
  EXPECT_EQ(PullOk(t).size(), 0u);              // a different topic
  // '+' decodes to a space, %2B to a plus.
  ApiResponse r =
      api().Request("POST", kSend, "topic=" + client::UrlEncode(t) + "&msg=a+b%2Bc&delayMillis=0");
  ExpectAppCode(r, 200);
  EXPECT_EQ(Str(r.at("delayMsg").at("msg")), "a b+c");
}

TEST_F(AppErrorsTest, UnknownMessageIsCode404ForGetDeleteAck) {
  std::string t = Topic();
  ApiResponse r = GetMsg(t, "missing");
  ExpectAppCode(r, 404);
  EXPECT_EQ(Keys(r.json), (std::vector<std::string>{"code", "msg", "delayMsg"}));
  EXPECT_TRUE(r.at("delayMsg").is_null());
  ExpectAppCode(Delete(t, "missing"), 404);
  ExpectAppCode(Delete(t, "missing", true), 404);
  ExpectAppCode(Ack(t, "missing"), 404);
  ExpectAppCode(Ack(t, "missing", false), 404);
  // Unknown topic, too.
  ExpectAppCode(GetMsg(Topic("other"), "missing"), 404);
}

class ClampTest : public ServerTest {
 protected:
  std::vector<std::string> Flags() const override {
    return {"--max-pull-batch=3",
            "--max-long-polling-timeout-millis=5000",
            "--long-polling-timeout-millis=2000",
            "--max-msg-bytes=100",
            "--max-topic-bytes=100",
            "--max-msg-id-bytes=10",
            "--max-delay-millis=60000"};
  }
};

TEST_F(ClampTest, ConfiguredLimitsApply) {
  std::string t = Topic() + ".";
  t += std::string(100 - t.size(), 'x');
  ExpectAppCode(Send(t, "m", 0, {{"msgId", std::string(10, 'i')}}), 200);
  ExpectAppCode(Send(t + "x", "m", 0), 400, "topic");
  ExpectAppCode(Send(t, "m", 0, {{"msgId", std::string(11, 'i')}}), 400, "msgId");
  ExpectAppCode(GetMsg(t, std::string(11, 'i')), 400, "msgId");
  ExpectAppCode(Send(t, "m", 60'000), 200);
  ExpectAppCode(Send(t, "m", 60'001), 400, "delayMillis");
}

TEST_F(ClampTest, BatchIsClampedToMaxPullBatch) {
  std::string t = Topic();
  for (int i = 0; i < 5; ++i) SendOk(t, "m" + std::to_string(i), 0);
  EXPECT_EQ(PullOk(t, 1000).size(), 3u);
  EXPECT_EQ(PullOk(t, 2).size(), 2u);
  SendOk(t, "m5", 0);
  SendOk(t, "m6", 0);
  EXPECT_EQ(PullOk(t, 0).size(), 1u);  // <= 0 -> 1
  EXPECT_EQ(PullOk(t, -7).size(), 1u);
  SendOk(t, "m7", 0);
  SendOk(t, "m8", 0);
  ApiResponse r = api().Queue("pullMsg", {{"topic", t}, {"batch", ""}});  // empty -> default 1
  ExpectAppCode(r, 200);
  EXPECT_EQ(r.at("delayMsgList").as_array().size(), 1u);
}

TEST_F(ClampTest, MaxMsgBytesIsTheLargestPayload) {
  std::string t = Topic();
  ExpectAppCode(Send(t, std::string(100, 'a'), 0), 200);
  ExpectAppCode(Send(t, std::string(101, 'a'), 0), 400, "msg");
  // Counted in UTF-8 bytes: 50 two-byte characters = 100 bytes.
  std::string two;
  for (int i = 0; i < 50; ++i) two += "\xC3\xA9";
  ExpectAppCode(Send(t, two, 0), 200);
  ExpectAppCode(Send(t, two + "a", 0), 400, "msg");
}

TEST_F(ClampTest, LongPollTimeoutIsClamped) {
  std::string t = Topic();
  auto c = NewClient();
  ASSERT_TRUE(
      c->BeginQueue("longPollingMsg", {{"topic", t}, {"longPollingTimeoutMillis", "60000"}}).ok());
  ASSERT_TRUE(api().WaitParked(1));
  Advance(4999);
  EXPECT_EQ(api().ParkedLongPolls(), 1);
  Advance(1);
  ApiResponse r = c->Finish();
  ExpectAppCode(r, 200);
  EXPECT_EQ(r.http.body, R"({"code":200,"msg":"success","delayMsgList":[]})");
  EXPECT_EQ(api().ParkedLongPolls(), 0);
}

TEST_F(ClampTest, LongPollTimeoutDefaultsWhenAbsentOrNotPositive) {
  std::string t = Topic();
  for (const char* v : std::initializer_list<const char*>{"", "0", "-5", nullptr}) {
    SCOPED_TRACE(v ? v : "(absent)");
    auto c = NewClient();
    Form f = {{"topic", t}};
    if (v) f.emplace_back("longPollingTimeoutMillis", v);
    ASSERT_TRUE(c->BeginQueue("longPollingMsg", f).ok());
    ASSERT_TRUE(api().WaitParked(1));
    Advance(1999);
    EXPECT_EQ(api().ParkedLongPolls(), 1);
    Advance(1);
    ApiResponse r = c->Finish();
    ExpectAppCode(r, 200);
    EXPECT_TRUE(r.at("delayMsgList").is_array() && r.at("delayMsgList").as_array().empty());
  }
}

}  // namespace
}  // namespace chronoq::it
