// Bad input, table-driven, for what API-EXTENSIONS.md sections 2-3 add (issue 14): sendMsg's
// priority, triggerTime and countTrigger; the JSON bodies of sendMsgBatch and ackMsgBatch (bodies
// that are not such an object, members of the wrong type, empty arrays, too many items, a msgId
// twice, items that are each bad, unknown ids); ackMsg's reason; updateMsg, touchMsg, countMsg and
// listMsg. Each row gets the exact answer (the layer: a request error, HTTP 400, or HTTP 200 with a
// code; the parameter named) and leaves the known state of bad_input_table.h as it was.
//
// Rows that reach the backend (unknown ids, a message in the wrong status, a cursor the backend
// reads) need the backends of issue 14.
#include <fmt/format.h>

#include <string>
#include <utility>
#include <vector>

#include "tests/integration/bad_input_table.h"

namespace chronoq::it {
namespace {

using namespace bad_input;  // NOLINT: the table's vocabulary (Row, Table, Req, App, ...)

// A request error naming both `a` and `b`.
Expect ReqBoth(int status, std::string a, std::string b) {
  Expect e = Req(status, std::move(a));
  e.also = std::move(b);
  return e;
}
// HTTP 200, code 200, and one result per item with its code and word.
Expect Items(std::vector<std::pair<int, std::string>> items) {
  Expect e = App(200);
  e.items = std::move(items);
  return e;
}

// Literal JSON values of the wrong type for an integer parameter.
const std::vector<std::string>& NotIntegers() {
  static const std::vector<std::string> v = {"1.5",   "1e3", "-0.0",      "true",
                                             "\"x\"", "[1]", "{\"v\":1}", "9223372036854775808"};
  return v;
}

class BadInputExtensionsTest : public BadInputFixture {
 protected:
  void SetUp() override {
    BadInputFixture::SetUp();
    if (HasFatalFailure()) return;
    // The server's clock stands still: w1 was produced now.
    now_ms_ = Int(GetOk(t_, "w1")["produceTime"]);
    ASSERT_GT(now_ms_, 0);
    const std::vector<std::string> message = {"code", "msg", "delayMsg"};
    for (const char* op : {"updateMsg", "touchMsg", "countMsg"})
      answer_keys_[kQueue + op] = message;
    answer_keys_[kQueue + "sendMsgBatch"] = {"code", "msg", "results"};
    answer_keys_[kQueue + "ackMsgBatch"] = {"code", "msg", "results"};
    answer_keys_[kQueue + "listMsg"] = {"code", "msg", "delayMsgList", "nextCursor"};
  }

  // A time more than max-delay-millis (10 years) from now.
  std::string TooLate() const { return std::to_string(now_ms_ + 10 * 365 * kDay + 1); }

  // Valid requests that would change the known state were they accepted.
  Endpoint SendBatchEp() const { return {"sendMsgBatch", "POST", {}}; }
  // {"topic":t_,"msgs":[items]} (items as JSON text).
  std::string Batch(const std::vector<std::string>& items) const {
    std::string out = "{\"topic\":" + JsonString(t_) + ",\"msgs\":[";
    for (size_t i = 0; i < items.size(); ++i) out += (i ? "," : "") + items[i];
    return out + "]}";
  }
  // One valid item (msgId "new"); `raw` overrides members with literal JSON (an empty value drops
  // the member).
  static std::string Item(const std::map<std::string, std::string>& raw = {}) {
    std::map<std::string, std::string> m = {
        {"msgId", "\"new\""}, {"msg", "\"m\""}, {"delayMillis", "0"}};
    for (const auto& [k, v] : raw) m[k] = v;
    std::string out = "{";
    for (const auto& [k, v] : m) {
      if (v.empty()) continue;
      if (out.size() > 1) out += ',';
      out += JsonString(k) + ":" + v;
    }
    return out + "}";
  }
  Endpoint AckBatchEp() const { return {"ackMsgBatch", "POST", {}}; }
  Endpoint UpdateEp() const {
    return {"updateMsg", "POST", {{"topic", t_}, {"msgId", "w1"}, {"delayMillis", "0"}}};
  }
  Endpoint TouchEp() const {
    return {"touchMsg", "POST", {{"topic", t_}, {"msgId", "c1"}, {"ackTimeoutMillis", "60000"}}};
  }
  Endpoint CountEp() const {
    return {"countMsg", "POST", {{"topic", t_}, {"msgId", "w1"}, {"count", "1"}}};
  }
  Endpoint ListEp() const { return {"listMsg", "GET", {{"topic", t_}, {"status", "1"}}}; }

  // The rows both JSON-body endpoints get for the body itself; `valid` is a valid body.
  static void BodyShapes(Table& t, const std::string& valid) {
    const std::string open = valid.substr(0, valid.size() - 1);
    for (std::string bad :
         {std::string(""), open, valid + " x", valid + valid, "[" + valid + "]", std::string("[]"),
          std::string("\"topic\""), std::string("42"), std::string("null"), std::string("true"),
          std::string("{'a':1}"), "/* c */" + valid, std::string("{\"topic\":\"a\xff\"}"),
          std::string("{\"topic\":\"\\ud800\"}")}) {
      std::string shown = bad.size() > 60 ? bad.substr(0, 60) + "..." : bad;
      t.Json("body " + (bad.empty() ? std::string("empty") : shown), bad, Req(400, "JSON object"));
    }
    t.Raw("a form body", "", "topic=a&msgs=b", kForm, Req(400, "JSON object"));
    t.Raw("the valid body in the query string", "?body=" + client::UrlEncode(valid), "", kForm,
          Req(400, "JSON object"));
  }
  // topic missing, of the wrong type, or not a valid topic; `with` is the rest of a valid body
  // (starting with a comma).
  void BatchTopic(Table& t, const std::string& with) const {
    t.Json("topic missing", "{" + with.substr(1) + "}", Req(400, "topic"));
    t.Json("topic null", "{\"topic\":null" + with + "}", Req(400, "topic"));
    for (const char* bad : {"42", "true", "[\"a\"]", "{\"a\":1}"}) {
      t.Json(std::string("topic as JSON ") + bad, "{\"topic\":" + std::string(bad) + with + "}",
             Req(400, "topic"));
    }
    for (std::string bad : {std::string(""), std::string("a\x01"), std::string("a\n"),
                            std::string(256, 'x'), std::string("a\x7f")}) {
      t.Json("topic " + client::UrlEncode(bad).substr(0, 20),
             "{\"topic\":" + JsonString(bad) + with + "}", Req(400, "topic"));
    }
    t.Json("topic twice",
           "{\"topic\":" + JsonString(t_) + ",\"topic\":" + JsonString(t_) + with + "}",
           Req(400, "topic"));
  }

  int64_t now_ms_ = 0;
};

// sendMsg's extension parameters (the parameters of API.md are in bad_input_table_test.cc).
TEST_F(BadInputExtensionsTest, SendMsg) {
  Table t(SendMsg());
  const Form& v = t.ep().valid;
  NumberOn(t, Set(v, "priority", "1"), "priority", false);
  for (const char* bad :
       {"-1", "10", "100", "2147483648", "9223372036854775807", "-9223372036854775808"}) {
    t.Each(std::string("priority ") + bad, Set(v, "priority", bad), App(400, "priority"));
  }
  NumberOn(t, Set(v, "countTrigger", "1"), "countTrigger", false);
  for (const char* bad : {"-1", "-9223372036854775808"}) {
    t.Each(std::string("countTrigger ") + bad, Set(v, "countTrigger", bad),
           App(400, "countTrigger"));
  }
  // triggerTime instead of delayMillis.
  const Form at = Set(Drop(v, "delayMillis"), "triggerTime", std::to_string(now_ms_));
  NumberOn(t, at, "triggerTime", false);
  for (const std::string& bad : {std::string("-1"), std::string("-9223372036854775808"), TooLate(),
                                 std::string("9223372036854775807")}) {
    t.Each("triggerTime " + bad, Set(at, "triggerTime", bad), App(400, "triggerTime"));
  }
  // Exactly one of delayMillis and triggerTime: both, or neither, is a request error naming both.
  const Expect both = ReqBoth(400, "delayMillis", "triggerTime");
  t.Each("both delayMillis and triggerTime", Set(v, "triggerTime", std::to_string(now_ms_)), both);
  t.Each("both, delayMillis negative and triggerTime in the past",
         Set(Set(v, "delayMillis", "-1"), "triggerTime", "0"), both);
  t.Json("both as JSON numbers",
         JsonOf(Set(v, "triggerTime", "1"), {{"delayMillis", "0"}, {"triggerTime", "1"}}), both);
  t.Each("neither delayMillis nor triggerTime", Drop(v, "delayMillis"), both);
  t.Each("neither: both empty", Set(Set(v, "delayMillis", ""), "triggerTime", ""), both);
  t.Json("neither: both JSON null",
         JsonOf(Set(v, "triggerTime", ""), {{"delayMillis", "null"}, {"triggerTime", "null"}}),
         both);
  // callback (docs/push.md): its JSON text in a parameter, or an object in a JSON body. A wrong
  // shape is a request error naming the member; a bad value, or a target outside
  // push-allowed-targets (empty here, the default: push is off), an application error.
  for (const auto& [bad, word] : std::vector<std::pair<std::string, std::string>>{
           {"x", "callback must be a JSON object"},
           {"[1]", "callback must be a JSON object"},
           {R"({"url":"http://127.0.0.1/"})", "callback.type is missing"},
           {R"({"type":"smtp"})", "callback.type must be http, grpc or kafka"},
           {R"({"type":"http","url":1})", "callback.url must be a string"},
           {R"({"type":"http","url":"http://a/","topic":"t"})", "unknown member 'topic'"},
           {R"({"type":"http","url":"http://a/","url":"http://b/"})", "member 'url' twice"},
           {R"({"type":"kafka","brokers":"k:1","timeoutMillis":1.5})",
            "callback.timeoutMillis must be an integer"}}) {
    t.Each("callback " + bad, Set(v, "callback", bad), Req(400, word));
  }
  for (const auto& [bad, word] : std::vector<std::pair<std::string, std::string>>{
           {R"({"type":"http"})", "callback.url is missing"},
           {R"({"type":"http","url":"ftp://a/"})", "callback.url must start with http://"},
           {R"({"type":"http","url":"http://a/","method":"TRACE"})", "callback.method"},
           {R"({"type":"http","url":"http://a/","headers":{"Host":"b"}})", "may not set 'Host'"},
           {R"({"type":"grpc","target":"g","method":"/a.B/C"})", "callback.target needs a port"},
           {R"({"type":"grpc","target":"g:1","method":"C"})", "callback.method must be a gRPC"},
           {R"({"type":"kafka","brokers":"k:1","topic":"a b"})", "callback.topic"},
           {R"({"type":"http","url":"http://a/","timeoutMillis":0})", "callback.timeoutMillis"},
           {R"({"type":"http","url":"http://127.0.0.1:9/"})",
            "callback target '127.0.0.1:9' is not allowed: push-allowed-targets is empty"}}) {
    t.Each("callback " + bad, Set(v, "callback", bad), App(400, word));
    t.Json("callback as an object " + bad, JsonOf(Set(v, "callback", bad), {{"callback", bad}}),
           App(400, word));
  }
  // An otherwise valid send with several bad extension values: the first in reading order wins.
  t.Each("priority and countTrigger bad", Set(Set(v, "priority", "10"), "countTrigger", "-1"),
         App(400, "priority"));
  Run(t.rows());
}

TEST_F(BadInputExtensionsTest, SendMsgBatch) {
  Table t(SendBatchEp());
  const std::string valid = Batch({Item()});
  BodyShapes(t, valid);
  const std::string msgs = ",\"msgs\":[" + Item() + "]";
  BatchTopic(t, msgs);
  // msgs missing, of the wrong type, empty, too long.
  const std::string topic = "\"topic\":" + JsonString(t_);
  t.Json("msgs missing", "{" + topic + "}", Req(400, "msgs"));
  t.Json("msgs null", "{" + topic + ",\"msgs\":null}", Req(400, "msgs"));
  for (const std::string& bad :
       {std::string("42"), std::string("\"x\""), std::string("true"), std::string("{}"), Item()}) {
    t.Json("msgs as JSON " + bad, "{" + topic + ",\"msgs\":" + bad + "}", Req(400, "msgs"));
  }
  t.Json("msgs empty", Batch({}), Req(400, "msgs"));
  t.Json("msgs twice", "{" + topic + msgs + msgs + "}", Req(400, "msgs"));
  {
    std::vector<std::string> many;
    for (int i = 0; i < 1001; ++i)
      many.push_back(Item({{"msgId", JsonString(fmt::format("n{}", i))}}));
    t.Json("1,001 valid items", Batch(many), Req(400, "max-send-batch"));
    std::vector<std::string> bad(1001, "1");
    t.Json("1,001 items, none an object", Batch(bad), Req(400, "max-send-batch"));
  }
  t.Json("a key twice in an item",
         Batch({"{\"msgId\":\"new\",\"msg\":\"m\",\"delayMillis\":0,\"msgId\":\"new2\"}"}),
         Req(400, "msgId"));
  // A msgId twice in one batch.
  t.Json("msgId twice", Batch({Item(), Item()}), Req(400, "'new'"));
  t.Json("msgId twice among others",
         Batch({Item({{"msgId", "\"a\""}}), Item(), Item({{"msgId", "\"b\""}}), Item()}),
         Req(400, "'new'"));
  t.Json("msgId twice, the second item otherwise bad",
         Batch({Item(), Item({{"delayMillis", "\"abc\""}})}), Req(400, "'new'"));
  t.Json("msgId twice, the first item otherwise bad", Batch({Item({{"priority", "10"}}), Item()}),
         Req(400, "'new'"));
  // Every item bad: each answered with code 400 naming its parameter, and nothing stored.
  struct BadItem {
    std::string item;
    std::string word;
  };
  std::vector<BadItem> bad = {
      {"1", "JSON object"},
      {"\"new\"", "JSON object"},
      {"null", "JSON object"},
      {"[]", "JSON object"},
      {Item({{"msg", ""}}), "msg"},
      {Item({{"msg", "\"\""}}), "msg"},
      {Item({{"msg", "[\"m\"]"}}), "msg"},
      {Item({{"msgId", "\"a\\u0001\""}}), "msgId"},
      {Item({{"msgId", JsonString(std::string(256, 'x'))}}), "msgId"},
      {Item({{"delayMillis", ""}}), "delayMillis"},
      {Item({{"triggerTime", std::to_string(now_ms_)}}), "triggerTime"},
      {Item({{"delayMillis", "\"abc\""}}), "delayMillis"},
      {Item({{"delayMillis", std::to_string(10 * 365 * kDay + 1)}}), "delayMillis"},
      {Item({{"ttlMillis", "\"1h\""}}), "ttlMillis"},
      {Item({{"maxRetry", "2147483648"}}), "maxRetry"},
      {Item({{"priority", "10"}}), "priority"},
      {Item({{"priority", "-1"}}), "priority"},
      {Item({{"priority", "\"high\""}}), "priority"},
      {Item({{"countTrigger", "-1"}}), "countTrigger"},
      {Item({{
                 "delayMillis",
                 "",
             },
             {"triggerTime", "-1"}}),
       "triggerTime"},
      {Item({{"delayMillis", ""}, {"triggerTime", TooLate()}}), "triggerTime"},
      {Item({{"topic", JsonString(t_ + ".other")}}), "topic"},
      {Item({{"topic", "42"}}), "topic"},
  };
  for (const std::string& lit : NotIntegers()) {
    bad.push_back({Item({{"delayMillis", lit}}), "delayMillis"});
    bad.push_back({Item({{"priority", lit}}), "priority"});
  }
  std::vector<std::string> items;
  std::vector<std::pair<int, std::string>> answers;
  for (size_t i = 0; i < bad.size(); ++i) {
    // Distinct msgIds, so that no item is refused as a repeat.
    std::string item = bad[i].item;
    if (size_t at = item.find("\"msgId\":\"new\""); at != std::string::npos) {
      item.replace(at, 13, fmt::format("\"msgId\":\"new{}\"", i));
    }
    items.push_back(item);
    answers.emplace_back(400, fmt::format("msgs[{}]: ", i));
    // Each alone, and its parameter named.
    t.Json("one item: " + item.substr(0, 80), Batch({item}), Items({{400, bad[i].word}}));
  }
  t.Json("every item bad", Batch(items), Items(answers));
  Run(t.rows());
}

TEST_F(BadInputExtensionsTest, AckMsgBatch) {
  Table t(AckBatchEp());
  const std::string topic = "\"topic\":" + JsonString(t_);
  const std::string valid = "{" + topic + ",\"ack\":[\"c1\"]}";
  BodyShapes(t, valid);
  BatchTopic(t, ",\"ack\":[\"c1\"]");
  for (const char* name : {"ack", "nack"}) {
    const std::string n = name;
    for (const char* bad : {"\"c1\"", "1", "true", "{\"c1\":true}"}) {
      t.Json(n + " as JSON " + bad, "{" + topic + ",\"" + n + "\":" + bad + "}", Req(400, n));
    }
    for (const char* bad : {"[1]", "[null]", "[[\"c1\"]]", "[{\"msgId\":\"c1\"}]", "[true]"}) {
      t.Json(n + " holding " + bad, "{" + topic + ",\"" + n + "\":" + bad + "}",
             Req(400, n + "[0]"));
    }
    t.Json(n + " holding a string, then a number", "{" + topic + ",\"" + n + "\":[\"c1\",2]}",
           Req(400, n + "[1]"));
    t.Json(n + " twice", "{" + topic + ",\"" + n + "\":[\"c1\"],\"" + n + "\":[\"c1\"]}",
           Req(400, n));
    // msgIds that are not valid msgIds.
    for (std::string bad : {std::string(""), std::string("a\x01"), std::string(256, 'x')}) {
      t.Json(n + " holding msgId '" + client::UrlEncode(bad).substr(0, 20) + "'",
             "{" + topic + ",\"" + n + "\":[" + JsonString(bad) + "]}", Req(400, "msgId"));
    }
  }
  // Nothing to do.
  const Expect empty = ReqBoth(400, "ack", "nack");
  t.Json("neither ack nor nack", "{" + topic + "}", empty);
  t.Json("both empty", "{" + topic + ",\"ack\":[],\"nack\":[]}", empty);
  t.Json("both null", "{" + topic + ",\"ack\":null,\"nack\":null}", empty);
  t.Json("only a reason", "{" + topic + ",\"reason\":\"r\"}", empty);
  // More ids than max-pull-batch (1,000) in all.
  {
    auto ids = [](const char* prefix, int n) {
      std::string out;
      for (int i = 0; i < n; ++i) out += fmt::format("{}\"{}{}\"", i ? "," : "", prefix, i);
      return out;
    };
    t.Json("1,001 ids in ack", "{" + topic + ",\"ack\":[" + ids("a", 1001) + "]}",
           Req(400, "max-pull-batch"));
    t.Json("600 ids in ack and 401 in nack",
           "{" + topic + ",\"ack\":[" + ids("a", 600) + "],\"nack\":[" + ids("b", 401) + "]}",
           Req(400, "max-pull-batch"));
  }
  // An id twice.
  t.Json("c1 twice in ack", "{" + topic + ",\"ack\":[\"c1\",\"c1\"]}", Req(400, "'c1'"));
  t.Json("c1 twice in nack", "{" + topic + ",\"nack\":[\"c1\",\"c1\"]}", Req(400, "'c1'"));
  t.Json("c1 in ack and in nack", "{" + topic + ",\"ack\":[\"c1\"],\"nack\":[\"c1\"]}",
         Req(400, "'c1'"));
  t.Json("c1 twice among unknown ids",
         "{" + topic + ",\"ack\":[\"x\",\"c1\",\"y\"],\"nack\":[\"c1\"]}", Req(400, "'c1'"));
  // The reason.
  for (const char* bad : {"1", "true", "[\"r\"]", "{\"r\":1}"}) {
    t.Json(std::string("reason as JSON ") + bad,
           "{" + topic + ",\"nack\":[\"c1\"],\"reason\":" + bad + "}", Req(400, "reason"));
  }
  t.Json("reason over 1024 bytes",
         "{" + topic + ",\"nack\":[\"c1\"],\"reason\":" + JsonString(std::string(1025, 'r')) + "}",
         Req(400, "reason"));
  t.Json(
      "reason of 1024 two-byte characters",
      "{" + topic + ",\"nack\":[\"c1\"],\"reason\":\"" +
          [] {
            std::string s;
            for (int i = 0; i < 1024; ++i) s += "\xc3\xa9";
            return s;
          }() +
          "\"}",
      Req(400, "reason"));
  t.Json("reason twice", "{" + topic + ",\"nack\":[\"c1\"],\"reason\":\"a\",\"reason\":\"b\"}",
         Req(400, "reason"));
  Run(t.rows());
}

// ackMsg's reason (the parameters of API.md are in bad_input_table_test.cc).
TEST_F(BadInputExtensionsTest, AckMsgReason) {
  Table t({"ackMsg", "POST", {{"topic", t_}, {"msgId", "c1"}, {"ack", "false"}, {"reason", "r"}}});
  const Form& v = t.ep().valid;
  t.Each("reason over 1024 bytes", Set(v, "reason", std::string(1025, 'r')), App(400, "reason"));
  for (std::string bad : {"\xff", "\xc3", "\xc0\xaf", "\xed\xa0\x80"}) {
    t.Each("reason invalid UTF-8 " + client::UrlEncode(bad), Set(v, "reason", "r" + bad),
           App(400, "reason"), Req(400, "JSON"));
  }
  for (const char* lit : {"[\"r\"]", "{\"r\":1}"}) {
    t.Json(std::string("reason as JSON ") + lit, JsonOf(v, {{"reason", lit}}), Req(400, "reason"));
  }
  // On an ack the reason is not kept, but a bad one is still refused.
  t.Each("reason over 1024 bytes on an ack",
         Set(Set(v, "ack", "true"), "reason", std::string(1025, 'r')), App(400, "reason"));
  t.AsForm("reason invalid UTF-8 on an ack", Set(Set(v, "ack", "true"), "reason", "r\xff"),
           App(400, "reason"));
  t.Duplicates();
  Run(t.rows());
}

TEST_F(BadInputExtensionsTest, UpdateMsg) {
  Table t(UpdateEp());
  const Form& v = t.ep().valid;
  t.Identifier("topic", true);
  t.Identifier("msgId", true);
  t.Number("delayMillis", false, false);
  NumberOn(t, Set(Drop(v, "delayMillis"), "triggerTime", "1"), "triggerTime", false);
  NumberOn(t, Set(v, "ttlMillis", "60000"), "ttlMillis", false);
  NumberOn(t, Set(v, "maxRetry", "1"), "maxRetry", true);
  NumberOn(t, Set(v, "priority", "1"), "priority", false);
  // Nothing to update: a request error naming what may be updated.
  const Form ref = {{"topic", t_}, {"msgId", "w1"}};
  t.Each("nothing to update", ref, ReqBoth(400, "delayMillis", "priority"));
  t.Each("nothing to update: every field empty",
         Set(Set(Set(Set(Set(ref, "delayMillis", ""), "triggerTime", ""), "ttlMillis", ""),
                 "maxRetry", ""),
             "priority", ""),
         ReqBoth(400, "delayMillis", "priority"));
  t.Each("nothing to update: only unknown parameters", Set(ref, "delay", "0"),
         ReqBoth(400, "delayMillis", "priority"));
  // Both delayMillis and triggerTime: a request error naming both, as on sendMsg.
  t.Each("both delayMillis and triggerTime", Set(v, "triggerTime", std::to_string(now_ms_)),
         ReqBoth(400, "delayMillis", "triggerTime"));
  // Values outside their range: code 400 naming the parameter.
  for (const char* bad : {"-1", "10", "2147483648", "-9223372036854775808"}) {
    t.Each(std::string("priority ") + bad, Set(ref, "priority", bad), App(400, "priority"));
  }
  for (const char* bad : {"0", "-1", "-9223372036854775808"}) {
    t.Each(std::string("ttlMillis ") + bad, Set(ref, "ttlMillis", bad), App(400, "ttlMillis"));
  }
  for (const char* bad : {"-1", "-2147483648"}) {
    t.Each(std::string("maxRetry ") + bad, Set(ref, "maxRetry", bad), App(400, "maxRetry"));
  }
  t.Each("delayMillis over 10 years",
         Set(v, "delayMillis", std::to_string(int64_t{10} * 365 * kDay + 1)),
         App(400, "delayMillis"));
  for (const std::string& bad : {std::string("-1"), TooLate()}) {
    t.Each("triggerTime " + bad, Set(ref, "triggerTime", bad), App(400, "triggerTime"));
  }
  t.Each("msg empty", Set(ref, "msg", ""), App(400, "msg"));
  for (std::string bad : {"\xff", "\xed\xa0\x80"}) {
    t.Each("msg invalid UTF-8 " + client::UrlEncode(bad), Set(ref, "msg", "m" + bad),
           App(400, "msg"), Req(400, "JSON"));
  }
  t.AsForm("msg over max-msg-bytes", Set(ref, "msg", std::string(4 * 1024 * 1024 + 1, 'm')),
           App(400, "msg"));
  // A valid field with a bad one: nothing is updated.
  t.Each("a new msg and a bad priority", Set(Set(ref, "msg", "m2"), "priority", "10"),
         App(400, "priority"));
  Common(t, "topic");
  Run(t.rows());
}

TEST_F(BadInputExtensionsTest, TouchMsg) {
  Table t(TouchEp());
  t.Identifier("topic", true);
  t.Identifier("msgId", true);
  t.Number("ackTimeoutMillis", false, false);
  Common(t, "topic");
  Run(t.rows());
}

TEST_F(BadInputExtensionsTest, CountMsg) {
  Table t(CountEp());
  const Form& v = t.ep().valid;
  t.Identifier("topic", true);
  t.Identifier("msgId", true);
  t.Number("count", false, false);
  for (const char* bad : {"0", "-1", "-9223372036854775808"}) {
    t.Each(std::string("count ") + bad, Set(v, "count", bad), App(400, "count"));
  }
  Common(t, "topic");
  Run(t.rows());
}

TEST_F(BadInputExtensionsTest, ListMsg) {
  Table t(ListEp());
  const Form& v = t.ep().valid;
  t.Identifier("topic", true);
  t.Number("status", false, false);
  NumberOn(t, Set(v, "limit", "10"), "limit", false);
  for (const char* bad : {"0", "8", "-1", "9223372036854775807"}) {
    t.Each(std::string("status ") + bad, Set(v, "status", bad), App(400, "status"));
  }
  for (const char* bad : {"0", "-1", "-9223372036854775808"}) {
    t.Each(std::string("limit ") + bad, Set(v, "limit", bad), App(400, "limit"));
  }
  // Cursors no backend makes (the backend's own checks: ListMsgCursorsTheBackendReads).
  for (std::string bad : {std::string("a\x01"), std::string("c\xff"), std::string(1025, 'c')}) {
    t.Each("cursor '" + client::UrlEncode(bad).substr(0, 20) + "' of " +
               std::to_string(bad.size()) + " bytes",
           Set(v, "cursor", bad), App(400, "cursor"),
           bad == "c\xff" ? Req(400, "JSON") : App(400, "cursor"));
  }
  for (const char* lit : {"[\"c\"]", "{\"c\":1}"}) {
    t.Json(std::string("cursor as JSON ") + lit, JsonOf(Set(v, "cursor", "c"), {{"cursor", lit}}),
           Req(400, "cursor"));
  }
  Common(t, "topic");
  Run(t.rows());
}

// The rows the backend answers: ids that name no message, or a message in a status the operation
// does not apply to (code 404 naming the id or the status), and cursors the backend reads.
TEST_F(BadInputExtensionsTest, AckMsgBatchUnknownIds) {
  Table t(AckBatchEp());
  const std::string topic = "\"topic\":" + JsonString(t_);
  // Ids that name no message in the state ackMsg needs: code 404 each, nothing changed.
  t.Json("unknown id in ack", "{" + topic + ",\"ack\":[\"nope\"]}", Items({{404, "nope"}}));
  t.Json("unknown id in nack", "{" + topic + ",\"nack\":[\"nope\"]}", Items({{404, "nope"}}));
  t.Json("unknown, waiting and ready ids",
         "{" + topic +
             ",\"ack\":[\"nope\",\"w1\",\"r1\"],\"nack\":[\"new\",\"w1x\"],\"reason\":\"r\"}",
         Items({{404, "nope"}, {404, "w1"}, {404, "r1"}, {404, "new"}, {404, "w1x"}}));
  t.Json("an unknown topic",
         "{\"topic\":" + JsonString(Topic("unknown")) + ",\"ack\":[\"c1\"],\"nack\":[\"r1\"]}",
         Items({{404, "c1"}, {404, "r1"}}));
  // Where the message is not consuming, an ackMsg nack with a reason is code 404 like one without.
  Table n({"ackMsg", "POST", {{"topic", t_}, {"msgId", "c1"}, {"ack", "false"}, {"reason", "r"}}});
  n.Each("nack with a reason of the waiting w1", Set(n.ep().valid, "msgId", "w1"), App(404, "w1"));
  n.Each("nack with a reason of an unknown id", Set(n.ep().valid, "msgId", "nope"),
         App(404, "nope"));
  t.rows().insert(t.rows().end(), n.rows().begin(), n.rows().end());
  Run(t.rows());
}

TEST_F(BadInputExtensionsTest, UpdateTouchCountWrongStatusesAndUnknownIds) {
  Rows rows;
  {
    Table t(UpdateEp());
    const Form& v = t.ep().valid;
    const Form ref = {{"topic", t_}, {"msgId", "w1"}};
    // Messages it does not apply to: code 404 naming the status, or the id.
    t.Each("the consuming c1", Set(v, "msgId", "c1"), App(404, "CONSUMING"));
    t.Each("the consuming c1, a new msg", Set(Set(ref, "msgId", "c1"), "msg", "m2"),
           App(404, "CONSUMING"));
    t.Each("an unknown id", Set(v, "msgId", "nope"), App(404, "nope"));
    t.Each("an unknown topic", Set(v, "topic", Topic("unknown")), App(404));
    rows.insert(rows.end(), t.rows().begin(), t.rows().end());
  }
  {
    Table t(TouchEp());
    const Form& v = t.ep().valid;
    t.Each("the waiting w1", Set(v, "msgId", "w1"), App(404, "WAITING"));
    t.Each("the ready r1", Set(v, "msgId", "r1"), App(404, "READY"));
    t.Each("an unknown id", Set(v, "msgId", "nope"), App(404, "nope"));
    t.Each("an unknown topic", Set(v, "topic", Topic("unknown")), App(404));
    rows.insert(rows.end(), t.rows().begin(), t.rows().end());
  }
  {
    Table t(CountEp());
    const Form& v = t.ep().valid;
    t.Each("the ready r1", Set(v, "msgId", "r1"), App(404, "READY"));
    t.Each("the consuming c1", Set(v, "msgId", "c1"), App(404, "CONSUMING"));
    t.Each("an unknown id", Set(v, "msgId", "nope"), App(404, "nope"));
    t.Each("an unknown topic", Set(v, "topic", Topic("unknown")), App(404));
    rows.insert(rows.end(), t.rows().begin(), t.rows().end());
  }
  Run(rows);
}

TEST_F(BadInputExtensionsTest, ListMsgCursorsTheBackendReads) {
  Table t(ListEp());
  for (const char* bad : {"garbage", "!!!", "0", "~~~~"}) {
    t.Each(std::string("cursor '") + bad + "'", Set(t.ep().valid, "cursor", bad),
           App(400, "cursor"));
  }
  Run(t.rows());
}

}  // namespace
}  // namespace chronoq::it
