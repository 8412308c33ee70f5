// Bad input, table-driven, for the endpoints of API-EXTENSIONS.md section 4 (issue 15):
// setTopicConfig (every field: wrong types, values out of range, a dead-letter topic that is not a
// valid topic name or names the topic itself, unknown names, a body that is not an object, no
// field at all), getTopicConfig, deleteTopicConfig, pauseTopic, resumeTopic, purgeTopic (status
// outside 1..3) and redriveMsg (limit 0...). Each row gets the exact answer (a request error, HTTP
// 400, or HTTP 200 with a code; the parameter named) and leaves the known state of
// bad_input_table.h as it was, the known topic's configuration included. Every row is refused
// before the storage is asked, so the rows hold on every storage.
#include <string>
#include <vector>

#include "tests/integration/bad_input_table.h"

namespace chronoq::it {
namespace {

using namespace bad_input;  // NOLINT: the table's vocabulary (Row, Table, Req, App, ...)

class BadInputTopicsTest : public BadInputFixture {
 protected:
  void SetUp() override {
    with_topic_config_ = true;
    BadInputFixture::SetUp();
    if (HasFatalFailure()) return;
    const std::vector<std::string> config = {"code", "msg", "topicConfig"};
    for (const char* op : {"setTopicConfig", "getTopicConfig", "pauseTopic", "resumeTopic"}) {
      answer_keys_[kQueue + op] = config;
    }
    answer_keys_[kQueue + "deleteTopicConfig"] = {"code", "msg"};
    answer_keys_[kQueue + "purgeTopic"] = {"code", "msg", "purged"};
    answer_keys_[kQueue + "redriveMsg"] = {"code", "msg", "redriven"};
  }

  // Valid requests that would change the known state were they accepted.
  Endpoint SetEp() const { return {"setTopicConfig", "POST", {{"topic", t_}, {"capacity", "5"}}}; }
  Endpoint TopicOnlyEp(const std::string& op, const std::string& method = "POST") const {
    return {op, method, {{"topic", t_}}};
  }
  Endpoint PurgeEp() const { return {"purgeTopic", "POST", {{"topic", t_}, {"status", "2"}}}; }
  Endpoint RedriveEp() const { return {"redriveMsg", "POST", {{"topic", t_}, {"limit", "1"}}}; }
};

TEST_F(BadInputTopicsTest, SetTopicConfig) {
  Table t(SetEp());
  const Form v = Drop(t.ep().valid, "capacity");  // the topic alone: add one field
  t.Identifier("topic", true);
  // Every numeric field: malformed numbers are request errors naming it.
  for (const char* name :
       {"capacity", "ttlMillis", "maxRetry", "ackTimeoutMillis", "retryIntervalMillis"}) {
    NumberOn(t, Set(v, name, "1"), name, false);
  }
  // Values the contract refuses: an application answer (code 400) naming the field.
  const std::vector<std::pair<std::string, std::string>> out_of_range = {
      {"capacity", "-1"},
      {"capacity", "-9223372036854775808"},
      {"ttlMillis", "0"},
      {"ttlMillis", "-1"},
      {"ttlMillis", "315360000001"},
      {"maxRetry", "-1"},
      {"maxRetry", "2147483648"},
      {"ackTimeoutMillis", "0"},
      {"ackTimeoutMillis", "-5"},
      {"retryIntervalMillis", "-1"},
      {"retryIntervalMillis", "315360000001"},
  };
  for (const auto& [name, bad] : out_of_range) {
    t.Each(name + " " + bad, Set(v, name, bad), App(400, name));
  }
  // deadLetterTopic: not a valid topic name, or the topic itself.
  for (std::string bad :
       {std::string("a\x01"), std::string("a\n"), std::string("a\x7f"), std::string(256, 'x')}) {
    t.Each("deadLetterTopic " + client::UrlEncode(bad).substr(0, 20),
           Set(v, "deadLetterTopic", bad), App(400, "deadLetterTopic"));
  }
  t.Each("deadLetterTopic invalid UTF-8", Set(v, "deadLetterTopic", "a\xff"),
         App(400, "deadLetterTopic"), Req(400, "JSON"));
  t.Each("deadLetterTopic naming the topic itself", Set(v, "deadLetterTopic", t_),
         App(400, "its own dead-letter topic"));
  for (const char* lit : {"[\"a\"]", "{\"a\":1}"}) {
    t.Json(std::string("deadLetterTopic as JSON ") + lit,
           JsonOf(Set(v, "deadLetterTopic", "a"), {{"deadLetterTopic", lit}}),
           Req(400, "deadLetterTopic"));
  }
  {
    Table paused({t.ep().op, t.ep().method, Set(v, "paused", "true")});
    paused.Bool("paused", false);
    t.rows().insert(t.rows().end(), paused.rows().begin(), paused.rows().end());
  }
  // callback (push delivery): a JSON object whose shape and values are checked, and whose
  // targets must be allowed (push-allowed-targets is empty in these servers).
  t.Each("callback not JSON", Set(v, "callback", "1"), Req(400, "callback must be a JSON object"));
  t.Each("callback without type", Set(v, "callback", R"({"url":"http://h/"})"),
         Req(400, "callback.type is missing"));
  t.Each("callback without url", Set(v, "callback", R"({"type":"http"})"),
         App(400, "callback.url is missing"));
  t.Each("callback target not allowed",
         Set(v, "callback", R"({"type":"http","url":"http://10.0.0.5/x"})"),
         App(400, "callback target '10.0.0.5:80' is not allowed"));
  // Unknown names, wherever they come from.
  for (const char* unknown : {"capacty", "Capacity", "ttl", "callbacks", "deadLetter", "x"}) {
    t.Each(std::string("unknown field ") + unknown, Set(t.ep().valid, unknown, "1"),
           Req(400, std::string("unknown parameter '") + unknown + "'"));
  }
  // No field at all (empty values count as absent).
  t.Each("no field", v, Req(400, "nothing to set"));
  t.Each("only empty fields", Set(Set(v, "capacity", ""), "paused", ""),
         Req(400, "nothing to set"));
  t.Json("only null fields", JsonOf(Set(v, "capacity", ""), {{"capacity", "null"}}),
         Req(400, "nothing to set"));
  // A body that is not a JSON object.
  for (std::string bad : {std::string("[]"), "[" + JsonOf(t.ep().valid) + "]", std::string("5"),
                          std::string("\"capacity\""), std::string("null")}) {
    t.Json("body " + bad.substr(0, 40), bad, Req(400, "JSON"));
  }
  // Several bad fields: the first in reading order is named.
  t.Each("capacity and ttlMillis bad", Set(Set(v, "capacity", "-1"), "ttlMillis", "0"),
         App(400, "capacity"));
  Common(t, "topic");
  Run(t.rows());
}

TEST_F(BadInputTopicsTest, TopicOnlyEndpoints) {
  for (const auto& [op, method] :
       std::vector<std::pair<std::string, std::string>>{{"getTopicConfig", "GET"},
                                                        {"deleteTopicConfig", "POST"},
                                                        {"pauseTopic", "POST"},
                                                        {"resumeTopic", "POST"}}) {
    Table t(TopicOnlyEp(op, method));
    t.Identifier("topic", true);
    Common(t, "topic");
    Run(t.rows());
  }
}

TEST_F(BadInputTopicsTest, PurgeTopic) {
  Table t(PurgeEp());
  const Form& v = t.ep().valid;
  t.Identifier("topic", true);
  t.Number("status", false, false);
  for (const char* bad : {"0", "4", "5", "7", "-1", "9223372036854775807"}) {
    t.Each(std::string("status ") + bad, Set(v, "status", bad), App(400, "status"));
  }
  Common(t, "topic");
  Run(t.rows());
}

TEST_F(BadInputTopicsTest, RedriveMsg) {
  Table t(RedriveEp());
  const Form& v = t.ep().valid;
  t.Identifier("topic", true);
  {
    Table id({t.ep().op, t.ep().method, Set(v, "msgId", "a")});
    id.Identifier("msgId", false);
    t.rows().insert(t.rows().end(), id.rows().begin(), id.rows().end());
  }
  t.Number("limit", false, false);
  for (const char* bad : {"0", "-1", "-9223372036854775808"}) {
    t.Each(std::string("limit ") + bad, Set(v, "limit", bad), App(400, "limit"));
  }
  NumberOn(t, Set(v, "delayMillis", "0"), "delayMillis", false);
  t.Each("delayMillis beyond max-delay-millis", Set(v, "delayMillis", "315360000001"),
         App(400, "delayMillis"));
  Common(t, "topic");
  Run(t.rows());
}

}  // namespace
}  // namespace chronoq::it
