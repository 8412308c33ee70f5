// Bad input, table-driven (issue 7): for every endpoint of API.md section 4, malformed requests
// (missing, empty, non-numeric, overflowing, negative and huge values; invalid UTF-8 and control
// characters in topic and msgId; duplicated parameters; wrong content types; broken
// percent-encoding; malformed JSON; bad request lines, headers and chunked framing; oversized
// headers and bodies; unknown methods and paths) each get the exact answer of API.md sections 1, 2
// and 8, and leave the queue as it was.
//
// Each test puts a known state in the queue, and checks after every row that the row changed
// nothing (bad_input_table.h, which holds the machinery). Parameter rows are sent three ways where
// the API accepts them: as a form body, as a query string and as a JSON body. Protocol rows go over
// a raw connection.
#include "tests/integration/bad_input_table.h"

#include <fmt/format.h>

#include <optional>

namespace chronoq::it {
namespace {

using namespace std::chrono_literals;
using namespace bad_input;  // NOLINT: the table's vocabulary (Row, Table, Req, App, ...)

class BadInputTableTest : public BadInputFixture {};

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
