// Payloads round-trip byte-exact (API.md sections 3 and 8): multibyte UTF-8, characters special
// to forms and JSON, NUL, a 1 MiB payload, through sendMsg -> getMsg / pullMsg / longPollingMsg,
// in form and JSON bodies.
#include <random>

#include "tests/integration/it_util.h"

namespace chronoq::it {
namespace {

class PayloadTest : public ServerTest {
 protected:
  // Sends `payload` and checks it comes back unchanged from sendMsg, getMsg and pullMsg.
  void RoundTrip(const std::string& payload, const std::string& id) {
    std::string t = Topic(id);
    json::object sent = SendOk(t, payload, 0, {{"msgId", id}});
    EXPECT_TRUE(Str(sent["msg"]) == payload)
        << "sendMsg changed the payload (" << payload.size() << " bytes)";
    json::object got = GetOk(t, id);
    EXPECT_TRUE(Str(got["msg"]) == payload) << "getMsg changed the payload";
    std::vector<json::object> l = PullOk(t);
    ASSERT_EQ(l.size(), 1u);
    EXPECT_TRUE(Str(l[0]["msg"]) == payload) << "pullMsg changed the payload";
  }
};

TEST_F(PayloadTest, MultibyteUtf8) {
  RoundTrip("中文消息：延迟队列", "chinese");
  RoundTrip("emoji 😀🎉👨‍👩‍👧‍👦 and 🇨🇳", "emoji");
  RoundTrip("Ελληνικά Русский עברית العربية हिन्दी", "scripts");
  RoundTrip("\xF4\x8F\xBF\xBF U+10FFFF and \xEF\xBF\xBF U+FFFF", "edges");
}

TEST_F(PayloadTest, CharactersSpecialToFormsAndJson) {
  RoundTrip("a&b=c+d%20e%zz?x#y", "form");
  RoundTrip(R"(quote " backslash \ slash / {"json":[1,2]})", "json");
  RoundTrip("line1\nline2\r\nline3\ttab\x01\x1F\x7F", "controls");
  RoundTrip("   leading and trailing   ", "spaces");
  RoundTrip("+", "plus");
  RoundTrip("=", "equals");
  RoundTrip("%", "percent");
  RoundTrip("\u2028\u2029", "separators");
}

TEST_F(PayloadTest, NulBytesComeBackExactly) {
  RoundTrip(std::string("a\0b", 3), "nul");
  RoundTrip(std::string("\0", 1), "only-nul");
  RoundTrip(std::string("\0\0end", 5), "nuls");
  // Sent literally as %00 in a hand-written body.
  std::string t = Topic("raw");
  ApiResponse r =
      api().Request("POST", std::string(testutil::kQueuePath) + "sendMsg",
                    "topic=" + client::UrlEncode(t) + "&msgId=x&msg=a%00b&delayMillis=0");
  ASSERT_EQ(r.code(), 200) << r.Describe();
  EXPECT_NE(r.http.body.find(R"("msg":"a\u0000b")"), std::string::npos) << r.http.body;
  EXPECT_TRUE(Str(GetOk(t, "x")["msg"]) == std::string("a\0b", 3));
}

TEST_F(PayloadTest, JsonBodyPayloadsRoundTrip) {
  std::string t = Topic();
  std::string payload = std::string("json \"body\" \\ 中文 😀 \n\t") + std::string("\0z", 2);
  json::object body = {{"topic", t}, {"msgId", "j"}, {"msg", payload}, {"delayMillis", 0}};
  ApiResponse r =
      api().PostJson(std::string(testutil::kQueuePath) + "sendMsg", json::serialize(body));
  ASSERT_EQ(r.code(), 200) << r.Describe();
  EXPECT_TRUE(Str(r.at("delayMsg").at("msg")) == payload);
  EXPECT_TRUE(Str(GetOk(t, "j")["msg"]) == payload);
  // \u escapes in the request body, surrogate pairs included.
  r = api().PostJson(
      std::string(testutil::kQueuePath) + "sendMsg",
      R"({"topic":")" + t + R"(","msgId":"u","msg":"\u4e2d\ud83d\ude00\u0000","delayMillis":0})");
  ASSERT_EQ(r.code(), 200) << r.Describe();
  EXPECT_TRUE(Str(GetOk(t, "u")["msg"]) == std::string("中😀\0", 8));
}

TEST_F(PayloadTest, ResponsesAreValidJsonAndUtf8) {
  std::string t = Topic();
  SendOk(t, "中\"\\\x01", 0, {{"msgId", "v"}});
  ApiResponse r = GetMsg(t, "v");
  EXPECT_TRUE(r.json_ok) << r.http.body;
  EXPECT_NE(r.http.body.find(R"("msg":"中\"\\\u0001")"), std::string::npos) << r.http.body;
}

// Valid UTF-8 of `n` bytes mixing ASCII, specials, NUL and 2-, 3- and 4-byte characters.
std::string MixedUtf8(size_t n, uint32_t seed) {
  static const char* kPieces[] = {"a",  "Z",  "0",  " ", "&",  "=", "+",        "%",           "\"",
                                  "\\", "\n", "\t", "é", "中", "😀", "\xC2\x80", "\xEF\xBF\xBF"};
  std::mt19937 rng(seed);
  std::string out;
  out.reserve(n + 4);
  while (out.size() < n) {
    uint32_t k = rng() % (std::size(kPieces) + 1);
    if (k == std::size(kPieces)) {
      out.push_back('\0');
      continue;
    }
    std::string_view p = kPieces[k];
    if (out.size() + p.size() > n) p = "x";
    out += p;
  }
  return out;
}

TEST_F(PayloadTest, OneMebibytePayloadRoundTripsByteExact) {
  std::string payload = MixedUtf8(size_t{1} << 20, 42);
  ASSERT_EQ(payload.size(), size_t{1} << 20);
  std::string t = Topic();
  json::object sent = SendOk(t, payload, 0, {{"msgId", "big"}});
  EXPECT_TRUE(Str(sent["msg"]) == payload);
  EXPECT_TRUE(Str(GetOk(t, "big")["msg"]) == payload);
  std::vector<json::object> l = PullOk(t);
  ASSERT_EQ(l.size(), 1u);
  EXPECT_TRUE(Str(l[0]["msg"]) == payload) << "pullMsg changed the 1 MiB payload";
  // Again through a long poll that a send wakes.
  auto c = NewClient();
  ASSERT_TRUE(
      c->BeginQueue("longPollingMsg", {{"topic", t}, {"longPollingTimeoutMillis", "60000"}}).ok());
  ASSERT_TRUE(api().WaitParked(1));
  SendOk(t, payload, 0, {{"msgId", "big2"}});
  ApiResponse r = c->Finish();
  ASSERT_EQ(r.code(), 200) << r.Describe();
  ASSERT_EQ(r.at("delayMsgList").as_array().size(), 1u);
  EXPECT_TRUE(Str(r.at("delayMsgList").at(0).at("msg")) == payload);
}

TEST_F(PayloadTest, LargeBatchOfPayloadsInOnePull) {
  std::string t = Topic();
  std::vector<std::string> payloads;
  for (int i = 0; i < 50; ++i) {
    payloads.push_back(MixedUtf8(10'000 + static_cast<size_t>(i), static_cast<uint32_t>(i)));
    SendOk(t, payloads.back(), 0, {{"msgId", std::to_string(i)}});
  }
  std::vector<json::object> l = PullOk(t, 100);
  ASSERT_EQ(l.size(), 50u);
  for (int i = 0; i < 50; ++i) {
    EXPECT_EQ(MsgId(l[i]), std::to_string(i));
    EXPECT_TRUE(Str(l[i]["msg"]) == payloads[i]) << i;
  }
}

TEST_F(PayloadTest, TopicsAndIdsWithUnicodeAndSpecials) {
  std::string t = Topic() + ".主题 & = + % 😀";
  std::string id = "标识/?#&=+ 😀";
  json::object m = SendOk(t, "m", 0, {{"msgId", id}});
  EXPECT_EQ(Str(m["topic"]), t);
  EXPECT_EQ(MsgId(m), id);
  EXPECT_EQ(MsgId(GetOk(t, id)), id);
  std::vector<json::object> l = PullOk(t);
  ASSERT_EQ(l.size(), 1u);
  EXPECT_EQ(Str(l[0]["topic"]), t);
  ExpectAppCode(Ack(t, id), 200);
  json::object info = TopicInfo(t);
  EXPECT_EQ(Str(info["topic"]), t);
  EXPECT_TRUE(Listed(t));
}

}  // namespace
}  // namespace chronoq::it
