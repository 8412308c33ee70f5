// Bad input, table-driven (issue 7): for every endpoint of API.md section 4, malformed requests
// (missing, empty, non-numeric, overflowing, negative and huge values; invalid UTF-8 and control
// characters in topic and msgId; duplicated parameters; wrong content types; broken
// percent-encoding; malformed JSON; bad request lines, headers and chunked framing; oversized
// headers and bodies; unknown methods and paths) each get the exact answer of API.md sections 1, 2
// and 8, and leave the queue as it was.
//
// Each test first puts a known state in the queue: on one topic a waiting (w1), a ready (r1) and a
// consuming (c1) message. Every row is built so that, were it accepted, it would change that state
// (a send of msgId "new", a pull that would take r1, an ack of c1, a delete of r1...). After each
// row the test reads the state back (getTopicInfoList, getTopicInfo, getMsg of each id, health
// status) and compares it with what it was: the bad row changed nothing and created no topic. The
// server runs on the test clock, so nothing moves by itself.
//
// Parameter rows are sent three ways where the API accepts them: as a form body, as a query string
// and as a JSON body. Protocol rows go over a raw connection.
#include <fmt/format.h>

#include <map>
#include <optional>

#include "tests/integration/it_util.h"

namespace chronoq::it {
namespace {

using namespace std::chrono_literals;

const std::string kForm = "application/x-www-form-urlencoded";
const std::string kJson = "application/json";
const std::string kQueue(testutil::kQueuePath);

// The answer a row must get.
struct Expect {
  int http = 200;          // HTTP status
  int code = 200;          // `code` in the body
  std::string word;        // `msg` must mention it (when not empty)
  std::string allow;       // the Allow header of a 405
  std::string exact_body;  // when set, the whole body (health endpoints)
};
// A request error (API.md section 2, layer 1).
Expect Req(int status, std::string word) { return {status, status, std::move(word), "", ""}; }
// An application result (layer 2): HTTP 200 with `code`.
Expect App(int code, std::string word = {}) { return {200, code, std::move(word), "", ""}; }

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

Form Set(Form f, const std::string& name, std::string value) {
  for (auto& [k, v] : f) {
    if (k == name) {
      v = std::move(value);
      return f;
    }
  }
  f.emplace_back(name, std::move(value));
  return f;
}
Form Drop(Form f, const std::string& name) {
  std::erase_if(f, [&](const auto& p) { return p.first == name; });
  return f;
}

// A JSON string literal: quotes, backslashes and control characters escaped, every other byte
// copied as it is (so invalid UTF-8 stays invalid).
std::string JsonString(std::string_view s) {
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
std::string JsonOf(const Form& f, const std::map<std::string, std::string>& raw = {}) {
  std::string out = "{";
  for (const auto& [k, v] : f) {
    if (out.size() > 1) out += ',';
    auto it = raw.find(k);
    out += JsonString(k) + ":" + (it != raw.end() ? it->second : JsonString(v));
  }
  return out + "}";
}

std::string Lower(std::string s) {
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

class BadInputTableTest : public ServerTest {
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
      if (e.code != 200 && r.json.is_object()) {
        // Error bodies carry the success shape with the payload as null (API.md section 2).
        for (const auto& kv : r.json.as_object()) {
          if (kv.key() != "code" && kv.key() != "msg") {
            EXPECT_TRUE(kv.value().is_null()) << kv.key() << " in " << r.Describe();
          }
        }
      }
    }
  }

  void Run(const Rows& rows) {
    ASSERT_FALSE(rows.empty());
    for (const Row& row : rows) {
      std::string shown = row.body.size() > 120 ? row.body.substr(0, 120) + "..." : row.body;
      SCOPED_TRACE(row.what + "\n  " + row.method + " " + row.target.substr(0, 200) + "\n  " +
                   row.content_type + ": " + shown);
      ApiResponse r = api().Request(row.method, row.target, row.body, row.content_type, 5s);
      if (r.status == 0) api().Close();
      Check(row, r);
      ExpectUnchanged(row.what);
    }
    std::printf("[ bad input ] %zu rows\n", rows.size());
  }

  std::string t_;
  std::string known_;
};

TEST_F(BadInputTableTest, SendMsg) {
  Table t(SendMsg());
  t.Identifier("topic", true);
  t.Identifier("msgId", false, /*empty_is_error=*/false);  // empty: the server generates one
  t.Each("msg missing", Drop(t.ep().valid, "msg"), Req(400, "msg"));
  t.Each("msg empty", Set(t.ep().valid, "msg", ""), App(400, "msg"));
  for (std::string bad : {"\xff", "\xc3", "\xc0\xaf", "\xed\xa0\x80"}) {
    t.Each("msg invalid UTF-8 " + client::UrlEncode(bad), Set(t.ep().valid, "msg", "m" + bad),
           App(400, "msg"), Req(400, "JSON"));
  }
  // One byte over max-msg-bytes (4 MiB), in a body under max-body-bytes (8 MiB).
  t.AsForm("msg over max-msg-bytes",
           Set(t.ep().valid, "msg", std::string(4 * 1024 * 1024 + 1, 'm')), App(400, "msg"));
  t.Number("delayMillis", true, false);
  t.Number("ttlMillis", false, false);
  t.Number("maxRetry", false, true);
  // Huge delays: over max-delay-millis (10 years), and the largest long.
  t.Each("delayMillis over 10 years",
         Set(t.ep().valid, "delayMillis", std::to_string(int64_t{10} * 365 * kDay + 1)),
         App(400, "delayMillis"));
  t.Each("delayMillis the largest long", Set(t.ep().valid, "delayMillis", "9223372036854775807"),
         App(400, "delayMillis"));
  // Negative values are valid (now / the defaults), so the row fails on its empty msg only.
  t.Each("negative numbers with an empty msg",
         Set(Set(Set(Set(t.ep().valid, "msg", ""), "delayMillis", "-5"), "ttlMillis", "-1"),
             "maxRetry", "-1"),
         App(400, "msg"));
  Common(t, "topic");
  Run(t.rows());
}

TEST_F(BadInputTableTest, PullMsg) {
  Table t(PullMsg());
  t.Identifier("topic", true);
  t.Number("batch", false, true);
  t.Number("ackTimeoutMillis", false, false);
  // Negative numbers are the defaults: a valid pull of an unknown topic answers an empty list and
  // does not create the topic.
  t.Each("negative numbers on an unknown topic",
         {{"topic", Topic("unknown")}, {"batch", "-5"}, {"ackTimeoutMillis", "-1"}}, App(200));
  t.Each("huge batch on an unknown topic",
         {{"topic", Topic("unknown")},
          {"batch", "2147483647"},
          {"ackTimeoutMillis", "9223372036854775807"}},
         App(200));
  Common(t, "topic");
  Run(t.rows());
}

TEST_F(BadInputTableTest, LongPollingMsg) {
  // A request error or a code 400 answers at once (API.md section 4); the 5 s client timeout of
  // each row would catch a parked one.
  Table t(PullMsg("longPollingMsg"));
  t.Identifier("topic", true);
  t.Number("batch", false, true);
  t.Number("ackTimeoutMillis", false, false);
  t.Number("longPollingTimeoutMillis", false, false);
  Common(t, "topic");
  Run(t.rows());
  EXPECT_EQ(api().ParkedLongPolls(), 0);
}

TEST_F(BadInputTableTest, AckMsg) { RunWithTopicAndId(Table(AckMsg()), "ack", true); }

TEST_F(BadInputTableTest, DeleteMsg) { RunWithTopicAndId(Table(DeleteMsg()), "release", false); }

TEST_F(BadInputTableTest, GetMsg) {
  Table t(GetMsgEp());
  // A well-formed getMsg of an unknown topic is 404 and does not create the topic.
  t.Each("unknown topic", {{"topic", Topic("unknown")}, {"msgId", "r1"}}, App(404));
  RunWithTopicAndId(std::move(t), "", false);
}

TEST_F(BadInputTableTest, GetTopicInfo) {
  Table t(TopicInfoEp());
  t.Identifier("topic", true);
  // A well-formed getTopicInfo of an unknown topic answers zeros and does not create the topic.
  t.Each("unknown topic", {{"topic", Topic("unknown")}}, App(200));
  Common(t, "topic");
  Run(t.rows());
}

// getTopicInfoList and getMonitorData take no parameters, but read them by the same rules as
// every other delayQueue endpoint (docs/compat.md): unknown ones are ignored, malformed ones are
// HTTP 400.
TEST_F(BadInputTableTest, GetTopicInfoListAndGetMonitorData) {
  Rows rows;
  for (const char* op : {"getTopicInfoList", "getMonitorData"}) {
    Table t({op, "GET", {{"x", "1"}}});
    t.Duplicates();
    t.ManyParameters();
    t.Percent();
    t.MethodsAndPaths();
    for (const char* bad : {"{\"x\":", "[1]", "42", "{\"x\":1} y"}) {
      t.Json(std::string("malformed JSON ") + bad, bad, Req(400, "JSON"));
    }
    // A body of another type is ignored, as is the content of a valid one.
    t.Raw("text/plain body", "", "x=1", "text/plain", App(200));
    t.Each("unknown parameters", {{"topic", t_}, {"batch", "abc"}, {"x", "%ZZ"}}, App(200));
    rows.insert(rows.end(), t.rows().begin(), t.rows().end());
  }
  Run(rows);
}

// Health endpoints answer any method and read no parameters; near-miss paths are 404, and none of
// it switches the node offline.
TEST_F(BadInputTableTest, Health) {
  Rows rows;
  const std::string ok = R"({"code":200})";
  for (const char* p : {"/camellia/health/check", "/camellia/health/status"}) {
    for (const char* m : {"GET", "POST", "PUT", "DELETE", "BREW"}) {
      Expect e = App(200);
      e.exact_body = ok;
      rows.push_back(Row{std::string("health ") + m, m, std::string(p) + "?%ZZ&x=1&x=2",
                         "{\"broken", kJson, e});
    }
  }
  for (const char* p :
       {"/camellia/health/check/", "/camellia/health/Check", "/camellia/health",
        "/camellia/health/", "/camellia/health/offline/", "/camellia/health/offline%20",
        "/camellia/health/OFFLINE", "/camellia/health/offline.json", "/camellia/health//offline"}) {
    rows.push_back(
        Row{std::string("health unknown path ") + p, "GET", p, "", kForm, Req(404, "endpoint")});
    rows.push_back(Row{std::string("health unknown path ") + p, "POST", p, "x=1", kForm,
                       Req(404, "endpoint")});
  }
  Run(rows);
}

// Protocol rows: raw bytes over a fresh connection.
struct RawRow {
  std::string what;
  std::string bytes;
  Expect expect;
  bool closes = true;  // the server closes the connection after the answer
};

// Reads one answer (head and Content-Length body) from `c`.
std::optional<client::Response> ReadAnswer(testutil::RawConnection& c) {
  if (!c.ReadUntil("\r\n\r\n", 5s)) return std::nullopt;
  const std::string& got = c.received();
  size_t head_end = got.find("\r\n\r\n");
  client::Response r;
  std::string_view head(got.data(), head_end);
  size_t line_end = head.find("\r\n");
  std::string_view status_line = head.substr(0, line_end);
  if (status_line.size() < 12) return std::nullopt;
  r.version = std::string(status_line.substr(0, 8));
  r.status = std::atoi(std::string(status_line.substr(9, 3)).c_str());
  size_t length = 0;
  while (line_end != std::string_view::npos) {
    size_t start = line_end + 2;
    line_end = head.find("\r\n", start);
    std::string_view line = head.substr(
        start, line_end == std::string_view::npos ? std::string_view::npos : line_end - start);
    size_t colon = line.find(':');
    if (colon == std::string_view::npos) continue;
    std::string name(line.substr(0, colon));
    std::string value(line.substr(colon + 1));
    while (!value.empty() && value.front() == ' ') value.erase(0, 1);
    if (Lower(name) == "content-length") length = std::stoul(value);
    r.headers.emplace_back(std::move(name), std::move(value));
  }
  while (got.size() < head_end + 4 + length) {
    size_t before = got.size();
    c.ReadFor(200ms);
    if (c.received().size() == before) break;
  }
  r.body = c.received().substr(head_end + 4, length);
  return r;
}

TEST_F(BadInputTableTest, Protocol) {
  const std::string send = kQueue + "sendMsg";
  const std::string body = client::FormEncode(SendMsg().valid);
  const std::string len = std::to_string(body.size());
  const std::string ct = "Content-Type: application/x-www-form-urlencoded\r\n";
  // A valid sendMsg of "new", with `head` between the request line and the Content-Length.
  auto post = [&](const std::string& line, const std::string& head = "") {
    return line + "\r\nHost: x\r\n" + ct + head + "Content-Length: " + len + "\r\n\r\n" + body;
  };
  auto chunked = [&](const std::string& chunks) {
    return "POST " + send + " HTTP/1.1\r\nHost: x\r\n" + ct + "Transfer-Encoding: chunked\r\n\r\n" +
           chunks;
  };
  char hex[16];
  std::snprintf(hex, sizeof(hex), "%zx", body.size());
  const std::string chunk = std::string(hex) + "\r\n" + body + "\r\n";
  const Expect bad = Req(400, "malformed HTTP request");
  std::vector<RawRow> rows = {
      // Request lines.
      {"garbage request line", "GARBAGE\r\n\r\n", bad},
      {"no HTTP version", post("POST " + send), bad},
      {"lowercase version", post("POST " + send + " http/1.1"), bad},
      {"version without digits", post("POST " + send + " HTTP/x.y"), bad},
      {"space in the target", post("POST " + send + "?topic=a b HTTP/1.1"), bad},
      {"two spaces before the target", post("POST  " + send + " HTTP/1.1"), bad},
      {"control character in the target", post("POST " + send + "?x=\x01 HTTP/1.1"), bad},
      {"DEL in the target", post("POST " + send + "?x=\x7f HTTP/1.1"), bad},
      {"HTTP/2.0", post("POST " + send + " HTTP/2.0"), bad},
      {"bad character in the method", post("PO(ST " + send + " HTTP/1.1"), bad},
      {"empty method", post(" " + send + " HTTP/1.1"), bad},
      {"request line ending in a bare CR", "POST " + send + " HTTP/1.1\rHost: x\r\n\r\n", bad},
      // Header lines.
      {"header without a colon", post("POST " + send + " HTTP/1.1", "Bogus header\r\n"), bad},
      {"space before the colon", post("POST " + send + " HTTP/1.1", "X-A : 1\r\n"), bad},
      {"bad character in a header name", post("POST " + send + " HTTP/1.1", "X(A): 1\r\n"), bad},
      {"empty header name", post("POST " + send + " HTTP/1.1", ": 1\r\n"), bad},
      {"control character in a header value",
       post("POST " + send + " HTTP/1.1",
            "X-A: a\x01"
            "b\r\n"),
       bad},
      {"NUL in a header value",
       post("POST " + send + " HTTP/1.1", std::string("X-A: a\0b\r\n", 10)), bad},
      {"Content-Length not a number",
       "POST " + send + " HTTP/1.1\r\nHost: x\r\n" + ct + "Content-Length: abc\r\n\r\n" + body,
       bad},
      {"negative Content-Length",
       "POST " + send + " HTTP/1.1\r\nHost: x\r\n" + ct + "Content-Length: -1\r\n\r\n" + body, bad},
      {"Content-Length with a sign",
       "POST " + send + " HTTP/1.1\r\nHost: x\r\n" + ct + "Content-Length: +" + len + "\r\n\r\n" +
           body,
       bad},
      {"Content-Length beyond 64 bits",
       "POST " + send + " HTTP/1.1\r\nHost: x\r\n" + ct +
           "Content-Length: 99999999999999999999999\r\n\r\n" + body,
       bad},
      {"two different Content-Lengths",
       post("POST " + send + " HTTP/1.1",
            "Content-Length: " + std::to_string(body.size() + 1) + "\r\n"),
       bad},
      {"Content-Length and Transfer-Encoding",
       "POST " + send + " HTTP/1.1\r\nHost: x\r\n" + ct + "Content-Length: " + len +
           "\r\nTransfer-Encoding: chunked\r\n\r\n" + chunk + "0\r\n\r\n",
       bad},
      {"Transfer-Encoding not ending in chunked",
       "POST " + send + " HTTP/1.1\r\nHost: x\r\n" + ct + "Transfer-Encoding: gzip\r\n\r\n" + body,
       bad},
      {"chunked twice",
       "POST " + send + " HTTP/1.1\r\nHost: x\r\n" + ct +
           "Transfer-Encoding: chunked, chunked\r\n\r\n" + chunk + "0\r\n\r\n",
       bad},
      {"Transfer-Encoding identity with a Content-Length",
       post("POST " + send + " HTTP/1.1", "Transfer-Encoding: identity\r\n"), bad},
      {"HTTP/1.1 without Host",
       "POST " + send + " HTTP/1.1\r\n" + ct + "Content-Length: " + len + "\r\n\r\n" + body, bad},
      {"two Host headers", post("POST " + send + " HTTP/1.1", "Host: y\r\n"), bad},
      // Chunked bodies.
      {"chunk size not hex", chunked("zz\r\n" + body + "\r\n0\r\n\r\n"), bad},
      {"negative chunk size", chunked("-5\r\n" + body + "\r\n0\r\n\r\n"), bad},
      {"chunk size beyond 64 bits", chunked("fffffffffffffffffffff\r\n" + body), bad},
      {"chunk data longer than its size",
       chunked(std::string(hex) + "\r\n" + body + "XX\r\n0\r\n\r\n"), bad},
      {"control character in a chunk extension",
       chunked(std::string(hex) + ";\x01\r\n" + body + "\r\n0\r\n\r\n"), bad},
      {"bad trailer", chunked(chunk + "0\r\nBogus trailer\r\n\r\n"), bad},
      // Oversized headers (max-header-bytes, 16 KiB) and bodies (max-body-bytes, 8 MiB).
      {"one header over 16 KiB",
       post("POST " + send + " HTTP/1.1", "X-Big: " + std::string(17 * 1024, 'a') + "\r\n"),
       Req(431, "max-header-bytes")},
      {"many headers over 16 KiB in all",
       post("POST " + send + " HTTP/1.1",
            [] {
              std::string h;
              for (int i = 0; i < 1000; ++i) h += "X-H" + std::to_string(i) + ": vvvvvvvvvv\r\n";
              return h;
            }()),
       Req(431, "max-header-bytes")},
      {"query string over 16 KiB",
       post("POST " + send + "?pad=" + std::string(17 * 1024, 'p') + " HTTP/1.1"),
       Req(431, "max-header-bytes")},
      {"Content-Length over 8 MiB",
       "POST " + send + " HTTP/1.1\r\nHost: x\r\n" + ct + "Content-Length: 8388609\r\n\r\n",
       Req(413, "max-body-bytes")},
      {"chunk over 8 MiB", chunked("800001\r\n"), Req(413, "max-body-bytes")},
      // Unknown methods and paths answer and keep the connection.
      {"unknown method", post("BREW " + send + " HTTP/1.1"), Req(405, "BREW"), false},
      {"unknown method on a GET endpoint",
       "PROPFIND " + kQueue + "getTopicInfo?topic=x HTTP/1.1\r\nHost: x\r\n\r\n",
       Req(405, "PROPFIND"), false},
      {"unknown path", post("POST " + kQueue + "sendMessage HTTP/1.1"), Req(404, "endpoint"),
       false},
      {"target without a leading slash", post("POST camellia/delayQueue/sendMsg HTTP/1.1"),
       Req(404, "endpoint"), false},
      {"malformed request to health/offline",
       "GET /camellia/health/offline HTTP/1.1\r\nHost x\r\n\r\n", bad},
  };
  for (const RawRow& row : rows) {
    SCOPED_TRACE(row.what);
    testutil::RawConnection c;
    ASSERT_TRUE(c.Connect(server().endpoint()).ok());
    ASSERT_TRUE(c.Send(row.bytes).ok());
    std::optional<client::Response> answer = ReadAnswer(c);
    ASSERT_TRUE(answer.has_value()) << "no answer; received: " << c.received();
    if (row.closes) {
      EXPECT_TRUE(c.WaitClosed(5s)) << "connection left open";
    } else {
      c.Clear();
      ASSERT_TRUE(c.Send("GET /camellia/health/check HTTP/1.1\r\nHost: x\r\n\r\n").ok());
      EXPECT_TRUE(c.ReadUntil(R"({"code":200})", 5s)) << "connection not kept: " << c.received();
    }
    // A framing error may come before the target is known (so may a 431 for a long request line):
    // for those, check all but the path.
    const bool loose = row.expect.http == 400 || row.expect.http == 431;
    std::string path;
    if (!loose) {  // the path the answer names: the target without its query
      size_t sp = row.bytes.find(' ');
      std::string target = row.bytes.substr(sp + 1, row.bytes.find(' ', sp + 1) - sp - 1);
      path = target.substr(0, target.find('?'));
    }
    ApiResponse r = testutil::ToApiResponse(*answer);
    if (loose) {
      EXPECT_EQ(r.status, row.expect.http) << r.Describe();
      EXPECT_EQ(r.code(), row.expect.http) << r.Describe();
      EXPECT_EQ(Int(r.at("status")), row.expect.http) << r.Describe();
      EXPECT_EQ(r.header("Content-Type"), "application/json") << r.Describe();
      EXPECT_NE(r.msg().find(row.expect.word), std::string::npos) << r.Describe();
    } else {
      ExpectRequestError(r, row.expect.http, path, row.expect.word);
    }
    ExpectUnchanged(row.what);
  }
  std::printf("[ bad input ] %zu rows\n", rows.size());
}

}  // namespace
}  // namespace chronoq::it
