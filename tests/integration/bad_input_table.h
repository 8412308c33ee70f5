// The machinery of the bad-input tables (issue 7; bad_input_table_test.cc for the camellia
// endpoints, bad_input_extensions_test.cc for those of API-EXTENSIONS.md): rows (a malformed
// request and the exact answer it must get), a Table that builds the rows of one endpoint from a
// valid request to it, and a fixture that puts a known state in the queue and checks, after every
// row, that the row changed nothing.
//
// The known state: on one topic a waiting (w1), a ready (r1) and a consuming (c1) message. Every
// row is built so that, were it accepted, it would change that state (a send of msgId "new", a pull
// that would take r1, an ack of c1, a delete of r1...). After each row the fixture reads the state
// back (getTopicInfoList, getTopicInfo, getMsg of each id, health status) and compares it with what
// it was: the bad row changed nothing and created no topic. The server runs on the test clock, so
// nothing moves by itself.
//
// Parameter rows are sent three ways where the API accepts them: as a form body, as a query string
// and as a JSON body. Header-only, for the integration tests.
#pragma once

#include <fmt/format.h>

#include <chrono>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "tests/integration/it_util.h"

namespace chronoq::it::bad_input {

// How long a row may take to be answered: at once, for a server. The costliest rows, 200,000
// parameters (ManyParameters), take the server about 0.25 s of CPU in a release build (parsing is
// linear; a quadratic duplicate check would take minutes) and about 1.5 s under ThreadSanitizer,
// which on a machine shared with other work is tens of seconds of wall time.
#if defined(__SANITIZE_THREAD__)
#define CQ_BAD_INPUT_TSAN 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define CQ_BAD_INPUT_TSAN 1
#endif
#endif
#if defined(CQ_BAD_INPUT_TSAN)
inline constexpr std::chrono::seconds kRowBound{60};
#elif defined(__SANITIZE_ADDRESS__)
inline constexpr std::chrono::seconds kRowBound{15};
#else
inline constexpr std::chrono::seconds kRowBound{5};
#endif

inline const std::string kForm = "application/x-www-form-urlencoded";
inline const std::string kJson = "application/json";
inline const std::string kQueue(testutil::kQueuePath);

// The answer a row must get.
struct Expect {
  int http = 200;          // HTTP status
  int code = 200;          // `code` in the body
  std::string word;        // `msg` must mention it (when not empty)
  std::string allow;       // the Allow header of a 405
  std::string exact_body;  // when set, the whole body (health endpoints)
  std::string also;        // `msg` must mention it too (when not empty)
  // sendMsgBatch, ackMsgBatch: `results` holds one item per pair, in order, each with that
  // `code` and a `msg` mentioning the word (when not empty).
  std::vector<std::pair<int, std::string>> items;
};
// A request error (API.md section 2, layer 1).
inline Expect Req(int status, std::string word) {
  return {status, status, std::move(word), "", "", "", {}};
}
// An application result (layer 2): HTTP 200 with `code`.
inline Expect App(int code, std::string word = {}) {
  return {200, code, std::move(word), "", "", "", {}};
}

struct Row {
  std::string what;  // the malformation, for failure messages
  std::string method;
  std::string target;  // path and raw query string
  std::string body;    // raw
  std::string content_type;
  Expect expect;
};
using Rows = std::vector<Row>;

// One endpoint and a valid request to it that would change the known state if it were accepted.
struct Endpoint {
  std::string op;
  std::string method;
  Form valid;
  std::string path() const { return kQueue + op; }
};

inline Form Set(Form f, const std::string& name, std::string value) {
  for (auto& [k, v] : f) {
    if (k == name) {
      v = std::move(value);
      return f;
    }
  }
  f.emplace_back(name, std::move(value));
  return f;
}
inline Form Drop(Form f, const std::string& name) {
  std::erase_if(f, [&](const auto& p) { return p.first == name; });
  return f;
}

// A JSON string literal: quotes, backslashes and control characters escaped, every other byte
// copied as it is (so invalid UTF-8 stays invalid).
inline std::string JsonString(std::string_view s) {
  std::string out = "\"";
  for (char c : s) {
    auto u = static_cast<unsigned char>(c);
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (u < 0x20) {
      char buf[8];
      std::snprintf(buf, sizeof(buf), "\\u%04x", u);
      out += buf;
    } else {
      out += c;
    }
  }
  return out + "\"";
}
// A JSON object of `f` (values as JSON strings); `raw` gives literal JSON for some names.
inline std::string JsonOf(const Form& f, const std::map<std::string, std::string>& raw = {}) {
  std::string out = "{";
  for (const auto& [k, v] : f) {
    if (out.size() > 1) out += ',';
    auto it = raw.find(k);
    out += JsonString(k) + ":" + (it != raw.end() ? it->second : JsonString(v));
  }
  return out + "}";
}

inline std::string Lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

// Builds the rows of one endpoint.
class Table {
 public:
  explicit Table(Endpoint ep) : ep_(std::move(ep)) {}
  Rows& rows() { return rows_; }
  const Endpoint& ep() const { return ep_; }

  // `params` as a form body, as a query string and as a JSON body (`json` overrides the expected
  // answer of the JSON body, e.g. when its bytes are not valid UTF-8).
  void Each(const std::string& what, const Form& params, const Expect& e,
            std::optional<Expect> json = std::nullopt) {
    AsForm(what, params, e);
    AsQuery(what, params, e);
    Json(what + " (JSON)", JsonOf(params), json.value_or(e));
  }
  void AsForm(const std::string& what, const Form& params, const Expect& e) {
    Raw(what + " (form)", "", client::FormEncode(params), kForm, e);
  }
  void AsQuery(const std::string& what, const Form& params, const Expect& e) {
    Raw(what + " (query)", "?" + client::FormEncode(params), "", kForm, e);
  }
  void Json(const std::string& what, std::string body, const Expect& e) {
    Raw(what, "", std::move(body), kJson, e);
  }
  // `query` is appended to the path as it is (with its '?').
  void Raw(const std::string& what, const std::string& query, std::string body,
           const std::string& content_type, const Expect& e) {
    rows_.push_back(Row{ep_.op + ": " + what, ep_.method, ep_.path() + query, std::move(body),
                        content_type, e});
  }

  // Missing, empty, control characters, invalid UTF-8, oversized (topic, msgId).
  void Identifier(const std::string& name, bool required, bool empty_is_error = true) {
    const std::string base = Value(name);
    if (required) Each(name + " missing", Drop(ep_.valid, name), Req(400, name));
    if (empty_is_error) Each(name + " empty", Set(ep_.valid, name, ""), App(400, name));
    for (std::string bad : {std::string("\x01", 1), std::string("\n"), std::string("\x7f"),
                            std::string("\0", 1), std::string("\x1f"), std::string("\t")}) {
      Each(name + " with control character " + client::UrlEncode(bad),
           Set(ep_.valid, name, base + bad), App(400, name));
    }
    for (std::string bad : {"\xff", "\xc3", "\xc0\xaf", "\xed\xa0\x80", "\xf4\x90\x80\x80"}) {
      // A JSON body that is not UTF-8 is malformed JSON (RFC 8259 section 8.1).
      Each(name + " invalid UTF-8 " + client::UrlEncode(bad), Set(ep_.valid, name, base + bad),
           App(400, name), Req(400, "JSON"));
      // The same bytes unencoded in the request target.
      Raw(name + " invalid UTF-8 unencoded in the query " + client::UrlEncode(bad),
          "?" + client::FormEncode(Drop(ep_.valid, name)) + "&" + name + "=" +
              client::UrlEncode(base) + bad,
          "", kForm, App(400, name));
    }
    Each(name + " of 256 bytes", Set(ep_.valid, name, std::string(256, 'x')), App(400, name));
  }

  // Missing, empty, non-numeric, overflowing and negative-overflowing values; JSON values of the
  // wrong type.
  void Number(const std::string& name, bool required, bool is_int) {
    if (required) {
      Each(name + " missing", Drop(ep_.valid, name), Req(400, name));
      Each(name + " empty", Set(ep_.valid, name, ""), Req(400, name));
    }
    for (const char* bad : {"abc", "1.5", "0x10", "1e3", " 5", "5 ", "++5", "-", "--1", "5-",
                            "\xef\xbc\x91" /* fullwidth 1 */, "1_000", "Infinity", "NaN"}) {
      Each(name + " not a number '" + bad + "'", Set(ep_.valid, name, bad), Req(400, name));
    }
    for (const char* over :
         is_int ? std::vector<const char*>{"2147483648", "-2147483649", "9223372036854775808"}
                : std::vector<const char*>{"9223372036854775808", "-9223372036854775809",
                                           "99999999999999999999999"}) {
      Each(name + " out of range " + over, Set(ep_.valid, name, over), Req(400, name));
    }
    for (const char* lit : {"1.5", "1e3", "-0.0", "true", "[1]", "{\"v\":1}", "9223372036854775808",
                            "-9223372036854775809"}) {
      Json(name + " as JSON " + lit, JsonOf(ep_.valid, {{name, lit}}), Req(400, name));
    }
  }

  void Bool(const std::string& name, bool required) {
    if (required) {
      Each(name + " missing", Drop(ep_.valid, name), Req(400, name));
      Each(name + " empty", Set(ep_.valid, name, ""), Req(400, name));
      Json(name + " as JSON null", JsonOf(ep_.valid, {{name, "null"}}), Req(400, name));
    }
    for (const char* bad : {"maybe", "2", "-1", "tru", "truee", " true", "t", "y", "nope"}) {
      Each(name + " not a boolean '" + bad + "'", Set(ep_.valid, name, bad), Req(400, name));
    }
    for (const char* lit : {"2", "[true]", "{\"v\":true}", "1.0"}) {
      Json(name + " as JSON " + lit, JsonOf(ep_.valid, {{name, lit}}), Req(400, name));
    }
  }

  // Each parameter of the valid request given twice in the same place.
  void Duplicates() {
    for (const auto& [name, value] : ep_.valid) {
      std::string twice = client::UrlEncode(name) + "=" + client::UrlEncode(value);
      Raw(name + " twice in the form body", "", client::FormEncode(ep_.valid) + "&" + twice, kForm,
          Req(400, name));
      Raw(name + " twice in the query", "?" + client::FormEncode(ep_.valid) + "&" + twice, "",
          kForm, Req(400, name));
      std::string json = JsonOf(ep_.valid);
      json.insert(json.size() - 1, "," + JsonString(name) + ":" + JsonString(value));
      Json(name + " twice in the JSON body", json, Req(400, name));
      // The second time spelled with an escape.
      std::string escaped = JsonOf(ep_.valid);
      escaped.insert(escaped.size() - 1, ",\"\\u00" + fmt::format("{:02x}", name[0]) +
                                             name.substr(1) + "\":" + JsonString(value));
      Json(name + " twice in the JSON body, once escaped", escaped, Req(400, name));
    }
    Raw("unknown parameter twice in the form body", "", client::FormEncode(ep_.valid) + "&x=1&x=1",
        kForm, Req(400, "x"));
  }

  // A hostile number of distinct parameters, then the first one again: answered at once (the
  // duplicate check must not be quadratic) and named.
  void ManyParameters() {
    const auto& [first, value] = ep_.valid.front();
    std::string form = client::FormEncode(ep_.valid);
    std::string json = JsonOf(ep_.valid);
    json.pop_back();
    for (int i = 0; i < 200'000; ++i) {
      form += "&p" + std::to_string(i) + "=";
      json += ",\"p" + std::to_string(i) + "\":1";
    }
    form += "&" + client::UrlEncode(first) + "=" + client::UrlEncode(value);
    json += "," + JsonString(first) + ":" + JsonString(value) + "}";
    Raw("200,000 parameters, then " + first + " twice (form)", "", std::move(form), kForm,
        Req(400, first));
    Json("200,000 parameters, then " + first + " twice (JSON)", std::move(json), Req(400, first));
  }

  // Broken percent-encoding in a value and in a name, in the body and in the query.
  void Percent() {
    const auto& [first, value] = ep_.valid.front();
    std::string rest = client::FormEncode(Drop(ep_.valid, first));
    for (const char* bad : {"%ZZ", "%", "%4", "%G1", "%%41", "%-1"}) {
      std::string pair = first + "=" + client::UrlEncode(value) + bad;
      Raw(std::string("broken percent-encoding in the form body: ") + bad, "", rest + "&" + pair,
          kForm, Req(400, "percent-encoding"));
      Raw(std::string("broken percent-encoding in the query: ") + bad, "?" + pair, rest, kForm,
          Req(400, "percent-encoding"));
      Raw(std::string("broken percent-encoding in a name: ") + bad, "",
          client::FormEncode(ep_.valid) + "&x" + bad + "=1", kForm, Req(400, "percent-encoding"));
    }
  }

  // The valid form body under content types that are not form or JSON (the body is ignored, so a
  // required parameter is missing and the message says why), and form/JSON mix-ups.
  void ContentTypes(const std::string& first_required) {
    std::string form = client::FormEncode(ep_.valid);
    for (const char* ct : {"text/plain", "multipart/form-data; boundary=x", "application/xml",
                           "application/octet-stream", ""}) {
      std::string word =
          *ct == 0 ? "(empty)" : std::string(ct).substr(0, std::string(ct).find(';'));
      Raw(std::string("form body sent as '") + ct + "'", "", form, ct, Req(400, word));
    }
    Raw("form body sent as application/json", "", form, kJson, Req(400, "JSON"));
    Raw("JSON body sent as a form", "", JsonOf(ep_.valid), kForm, Req(400, first_required));
  }

  void MalformedJson(const std::string& first_required) {
    std::string v = JsonOf(ep_.valid);
    std::string open = v.substr(0, v.size() - 1);  // without its closing brace
    for (std::string bad :
         {open, open + ",", v.substr(0, v.size() / 2), "[" + v + "]", std::string("\"topic\""),
          std::string("42"), std::string("null"), std::string("true"), v + " x", v + v,
          std::string("{topic:\"a\"}"), std::string("{'topic':'a'}"), std::string("{,}"),
          open + ",}", "/* comment */" + v, std::string("{\"topic\":\"\\ud800\"}"),
          std::string("{\"topic\":\"a\\x41\"}"), std::string("{\"topic\":\"a\xff\"}"),
          "{\"x\":" + std::string(5000, '[') + std::string(5000, ']') + "}"}) {
      std::string shown = bad.size() > 60 ? bad.substr(0, 60) + "..." : bad;
      Json("malformed JSON " + shown, bad, Req(400, "JSON"));
    }
    Json("empty JSON object", "{}", Req(400, first_required));
    Json("empty JSON body", "", Req(400, first_required));
    Json(first_required + " as a JSON object", JsonOf(ep_.valid, {{first_required, "{\"a\":1}"}}),
         Req(400, first_required));
    Json(first_required + " as a JSON array", JsonOf(ep_.valid, {{first_required, "[\"a\"]"}}),
         Req(400, first_required));
  }

  // Other methods (the valid parameters in the query string) and near-miss paths.
  void MethodsAndPaths() {
    std::string query = "?" + client::FormEncode(ep_.valid);
    std::vector<const char*> others =
        ep_.method == "POST"
            ? std::vector<const char*>{"GET", "PUT", "DELETE", "PATCH", "OPTIONS", "BREW"}
            : std::vector<const char*>{"POST", "PUT", "DELETE", "PATCH", "OPTIONS", "BREW"};
    for (const char* m : others) {
      Expect e = Req(405, m);
      e.allow = ep_.method;
      rows_.push_back(Row{ep_.op + ": method " + m, m, ep_.path() + query, "", kForm, e});
    }
    for (const std::string& p :
         {ep_.path() + "/", kQueue + Lower(ep_.op), ep_.path() + "%20", ep_.path() + ".json",
          kQueue + "/" + ep_.op, "/camellia/delayqueue/" + ep_.op, "/camellia/" + ep_.op}) {
      rows_.push_back(Row{ep_.op + ": unknown path " + p, ep_.method, p + query,
                          ep_.method == "POST" ? client::FormEncode(ep_.valid) : "", kForm,
                          Req(404, "endpoint")});
    }
  }

  std::string Value(const std::string& name) const {
    for (const auto& [k, v] : ep_.valid) {
      if (k == name) return v;
    }
    return {};
  }

 private:
  Endpoint ep_;
  Rows rows_;
};

// Table::Number's rows for `name`, on t's endpoint with `valid` as the valid request (Number's
// JSON rows replace a parameter of the valid request, so `valid` must give `name`).
inline void NumberOn(Table& t, Form valid, const std::string& name, bool is_int) {
  Table with({t.ep().op, t.ep().method, std::move(valid)});
  with.Number(name, false, is_int);
  t.rows().insert(t.rows().end(), with.rows().begin(), with.rows().end());
}

class BadInputFixture : public ServerTest {
 protected:
  void SetUp() override {
    ServerTest::SetUp();
    if (HasFatalFailure()) return;
    t_ = Topic("known");
    // c1: delivered and not acked (ack timeout one day: it does not move while the clock stands).
    SendOk(t_, "consuming", 0, {{"msgId", "c1"}});
    std::vector<json::object> pulled = PullOk(t_, 1, kDay);
    ASSERT_EQ(pulled.size(), 1u);
    ASSERT_EQ(MsgId(pulled[0]), "c1");
    SendOk(t_, "ready", 0, {{"msgId", "r1"}});
    SendOk(t_, "waiting", kHour, {{"msgId", "w1"}});
    ASSERT_EQ(StatusOf(t_, "w1"), 1);
    ASSERT_EQ(StatusOf(t_, "r1"), 2);
    ASSERT_EQ(StatusOf(t_, "c1"), 3);
    json::object info = TopicInfo(t_);
    ASSERT_EQ(Int(info["waitingQueueSize"]), 1);
    ASSERT_EQ(Int(info["readyQueueSize"]), 1);
    ASSERT_EQ(Int(info["ackQueueSize"]), 1);
    known_ = State();
  }

  // Everything a bad row could have changed, as the server reports it.
  std::string State() {
    std::string s = "list: " + api().Monitor("getTopicInfoList").http.body;
    s += "\ninfo: " + api().Monitor("getTopicInfo", {{"topic", t_}}).http.body;
    for (const char* id : {"w1", "r1", "c1", "new"}) {
      s += std::string("\n") + id + ": " + GetMsg(t_, id).http.body;
    }
    s += "\nhealth: " + api().Get("/camellia/health/status").http.body;
    if (with_topic_config_) {
      s += "\nconfig: " + api().Monitor("getTopicConfig", {{"topic", t_}}).http.body;
    }
    return s;
  }
  void ExpectUnchanged(const std::string& what) {
    std::string now = State();
    EXPECT_EQ(now, known_) << "the queue changed after: " << what;
    known_ = now;  // report each change once
  }

  // The known topic's ids, in valid requests to each endpoint.
  Endpoint SendMsg() const {
    return {"sendMsg",
            "POST",
            {{"topic", t_},
             {"msgId", "new"},
             {"msg", "m"},
             {"delayMillis", "0"},
             {"ttlMillis", "60000"},
             {"maxRetry", "3"}}};
  }
  Endpoint PullMsg(const std::string& op = "pullMsg") const {
    Form f = {{"topic", t_}, {"batch", "5"}, {"ackTimeoutMillis", "60000"}};
    if (op == "longPollingMsg") f.emplace_back("longPollingTimeoutMillis", "1000");
    return {op, "POST", f};
  }
  Endpoint AckMsg() const {
    return {"ackMsg", "POST", {{"topic", t_}, {"msgId", "c1"}, {"ack", "true"}}};
  }
  Endpoint DeleteMsg() const {
    return {"deleteMsg", "POST", {{"topic", t_}, {"msgId", "r1"}, {"release", "true"}}};
  }
  Endpoint GetMsgEp() const { return {"getMsg", "POST", {{"topic", t_}, {"msgId", "r1"}}}; }
  Endpoint TopicInfoEp() const { return {"getTopicInfo", "GET", {{"topic", t_}}}; }

  // The rows every endpoint with parameters gets.
  static void Common(Table& t, const std::string& first_required) {
    t.Duplicates();
    t.ManyParameters();
    t.Percent();
    t.ContentTypes(first_required);
    t.MalformedJson(first_required);
    t.MethodsAndPaths();
  }

  // ackMsg, deleteMsg, getMsg: topic and msgId required, then the boolean `flag` (if any).
  void RunWithTopicAndId(Table t, const std::string& flag, bool flag_required) {
    t.Identifier("topic", true);
    t.Identifier("msgId", true);
    if (!flag.empty()) t.Bool(flag, flag_required);
    Common(t, "topic");
    Run(t.rows());
  }

  void Check(const Row& row, const ApiResponse& r) {
    const Expect& e = row.expect;
    std::string_view path = std::string_view(row.target).substr(0, row.target.find('?'));
    if (!e.exact_body.empty()) {
      EXPECT_EQ(r.status, e.http) << r.Describe();
      EXPECT_EQ(r.http.body, e.exact_body) << r.Describe();
      EXPECT_EQ(r.header("Content-Type"), "application/json") << r.Describe();
    } else if (e.http != 200) {
      ExpectRequestError(r, e.http, path, e.word);
      if (!e.allow.empty()) {
        EXPECT_EQ(r.header("Allow"), e.allow) << r.Describe();
      }
    } else {
      ExpectAppCode(r, e.code, e.word);
      auto keys = answer_keys_.find(std::string(path));
      if (keys != answer_keys_.end()) {
        // Every answer, success or error, has the fields of the success shape (API.md section 2).
        EXPECT_EQ(Keys(r.json), keys->second) << r.Describe();
      }
      if (e.code != 200 && r.json.is_object()) {
        // Error bodies carry the success shape with the payload as null (API.md section 2).
        for (const auto& kv : r.json.as_object()) {
          if (kv.key() != "code" && kv.key() != "msg") {
            EXPECT_TRUE(kv.value().is_null()) << kv.key() << " in " << r.Describe();
          }
        }
      }
    }
    if (!e.also.empty()) {
      EXPECT_NE(r.msg().find(e.also), std::string::npos)
          << "msg should mention '" << e.also << "': " << r.Describe();
    }
    if (!e.items.empty()) CheckItems(e.items, r);
  }

  static void CheckItems(const std::vector<std::pair<int, std::string>>& items,
                         const ApiResponse& r) {
    const json::value& results = r.at("results");
    ASSERT_TRUE(results.is_array()) << r.Describe();
    ASSERT_EQ(results.as_array().size(), items.size()) << r.Describe();
    for (size_t i = 0; i < items.size(); ++i) {
      const json::value& item = results.as_array()[i];
      ASSERT_TRUE(item.is_object()) << "results[" << i << "] in " << r.Describe();
      EXPECT_EQ(Int(item.as_object().at("code")), items[i].first)
          << "results[" << i << "] in " << r.Describe();
      const std::string msg = Str(item.as_object().at("msg"));
      EXPECT_NE(msg.find(items[i].second), std::string::npos)
          << "results[" << i << "].msg should mention '" << items[i].second
          << "': " << r.Describe();
    }
  }

  void Run(const Rows& rows) {
    ASSERT_FALSE(rows.empty());
    for (const Row& row : rows) {
      std::string shown = row.body.size() > 120 ? row.body.substr(0, 120) + "..." : row.body;
      SCOPED_TRACE(row.what + "\n  " + row.method + " " + row.target.substr(0, 200) + "\n  " +
                   row.content_type + ": " + shown);
      ApiResponse r = api().Request(row.method, row.target, row.body, row.content_type, kRowBound);
      if (r.status == 0) api().Close();
      Check(row, r);
      ExpectUnchanged(row.what);
    }
    std::printf("[ bad input ] %zu rows\n", rows.size());
  }

  std::string t_;
  std::string known_;
  // The known topic's configuration is part of the state (the topic-configuration endpoints'
  // rows); set before SetUp reads the known state.
  bool with_topic_config_ = false;
  // Path -> the keys every application answer (HTTP 200) of that endpoint must have, in order;
  // endpoints not in it are not checked so.
  std::map<std::string, std::vector<std::string>> answer_keys_;
};

}  // namespace chronoq::it::bad_input
