// Which reading a request gets: the fast path (request_parser.cc, "The fast path") or Beast. A
// fast path that refuses a request it was meant to take gives the same answer, only slower, so
// request_parser_test.cc and the differential fuzz target cannot see it: these tests can
// (ParsedRequest::fast_path).
#include <gtest/gtest.h>

#include <string>
#include <string_view>
#include <tuple>
#include <vector>

#include "http/request_parser.h"

namespace chronoq::http {
namespace {

using Event = RequestParser::Event;

// One request as the parser read it.
struct Read {
  bool fast = false;
  std::string method, target, content_type, body;
  bool keep_alive = true;
};

// What a connection's bytes give, arriving in the pieces `cuts` makes (offsets, increasing), as
// the server feeds them: every unread byte again with what came next. Requests in `reads`;
// `errors` counts refusals (the parsing stops at one), `left` the bytes never consumed.
struct Outcome {
  std::vector<Read> reads;
  int errors = 0;
  size_t left = 0;
};
Outcome Parse(std::string_view bytes, std::vector<size_t> cuts = {},
              RequestLimits limits = RequestLimits{}) {
  RequestParser parser(limits);
  Outcome out;
  std::string unread;
  cuts.push_back(bytes.size());
  size_t sent = 0;
  for (size_t cut : cuts) {
    unread.append(bytes.substr(sent, cut - sent));
    sent = cut;
    for (;;) {
      RequestParser::Step step = parser.Feed(unread);
      unread.erase(0, step.consumed);
      if (step.event == Event::kError) {
        ++out.errors;
        return out;
      }
      if (step.event == Event::kContinue) continue;  // (the server would send 100 Continue)
      if (step.event != Event::kRequest) break;
      const ParsedRequest& p = parser.request();
      out.reads.push_back({p.fast_path, std::string(p.request.method),
                           std::string(p.request.target), std::string(p.request.content_type),
                           p.request.body, p.keep_alive});
      parser.Reset();
    }
  }
  out.left = unread.size();
  return out;
}

// Every piece boundary: the bytes one at a time.
std::vector<size_t> EveryByte(size_t n) {
  std::vector<size_t> cuts;
  for (size_t i = 1; i < n; ++i) cuts.push_back(i);
  return cuts;
}

// A request's bytes: its request line and header fields, each ended by CRLF, the empty line,
// the body.
std::string Http(const std::vector<std::string>& lines, std::string_view body = "") {
  std::string out;
  for (const std::string& line : lines) out += line + "\r\n";
  return out + "\r\n" + std::string(body);
}

std::string Length(std::string_view body) {
  return "Content-Length: " + std::to_string(body.size());
}

// The requests chronoq's clients send, byte for byte, and what each must read as.
struct ClientRequest {
  std::string who;
  std::string bytes;
  Read expect;
};

std::vector<ClientRequest> ClientRequests() {
  std::vector<ClientRequest> out;
  const std::string form = "application/x-www-form-urlencoded";
  const std::string json = "application/json";
  const std::string api = "/camellia/delayQueue/";
  // camellia's Java SDK (CamelliaDelayQueueApi): OkHttp 3 posts each operation as a form; OkHttp
  // adds the charset to the media type and, from its bridge, Host, Connection: Keep-Alive,
  // Accept-Encoding: gzip and its User-Agent, in that order.
  const std::vector<std::pair<std::string, std::string>> sdk = {
      {"sendMsg", "msg=hello%20world&maxRetry=3&ttlMillis=86400000&delayMillis=5000&topic=t"},
      {"pullMsg", "batch=1&timeoutMillis=30000&topic=t"},
      {"longPollingMsg", "batch=1&ackTimeoutMillis=30000&topic=t&timeoutMillis=10000"},
      {"ackMsg", "ack=true&msgId=5f3c2a&topic=t"},
      {"getMsg", "msgId=5f3c2a&topic=t"},
      {"deleteMsg", "msgId=5f3c2a&topic=t"},
  };
  for (const auto& [op, body] : sdk) {
    out.push_back(
        {"camellia SDK " + op,
         Http({"POST " + api + op + " HTTP/1.1", "Content-Type: " + form + "; charset=utf-8",
               Length(body), "Host: 10.0.0.7:8080", "Connection: Keep-Alive",
               "Accept-Encoding: gzip", "User-Agent: okhttp/3.14.9"},
              body),
         {true, "POST", api + op, form + "; charset=utf-8", body}});
  }
  // curl 7.88.1, as captured on a socket: `curl -d 'topic=t&msg=hello&delayMillis=1000' URL`,
  // the same with `-H 'Content-Type: application/json'` and a JSON body, and a plain GET.
  const std::string form_body = "topic=t&msg=hello&delayMillis=1000";
  const std::string json_body = R"({"topic":"t","msg":"hello","delayMillis":1000})";
  const std::vector<std::string> curl = {"Host: 127.0.0.1:8080", "User-Agent: curl/7.88.1",
                                         "Accept: */*"};
  out.push_back({"curl -d",
                 Http({"POST " + api + "sendMsg HTTP/1.1", curl[0], curl[1], curl[2],
                       Length(form_body), "Content-Type: " + form},
                      form_body),
                 {true, "POST", api + "sendMsg", form, form_body}});
  out.push_back({"curl -H json -d",
                 Http({"POST " + api + "sendMsg HTTP/1.1", curl[0], curl[1], curl[2],
                       "Content-Type: " + json, Length(json_body)},
                      json_body),
                 {true, "POST", api + "sendMsg", json, json_body}});
  out.push_back({"curl GET",
                 Http({"GET " + api + "getTopicInfo?topic=t HTTP/1.1", curl[0], curl[1], curl[2]}),
                 {true, "GET", api + "getTopicInfo?topic=t", "", ""}});
  // The bench (src/bench/common.cc FormPost and JsonPost): sends, long polls and acks.
  const std::string send = "topic=t&delayMillis=0&msg=" + std::string(100, 'p');
  const std::string poll = "topic=t&batch=16&timeoutMillis=1000&ackTimeoutMillis=30000";
  const std::string acks = R"({"topic":"t","msgIds":["a1","a2","a3"]})";
  for (const auto& [op, type, body] :
       {std::tuple{"sendMsg", form, send}, std::tuple{"longPollingMsg", form, poll},
        std::tuple{"ackMsgBatch", json, acks}}) {
    out.push_back({std::string("bench ") + op,
                   Http({"POST " + api + op + " HTTP/1.1", "Host: 127.0.0.1:41234",
                         "Content-Type: " + type, Length(body)},
                        body),
                   {true, "POST", api + op, type, body}});
  }
  // chronoq's own client (src/client/http_client.cc Format), with a token: the CLI.
  const std::string batch = R"({"topic":"t","msgs":[{"msg":"a","delayMillis":1}]})";
  out.push_back({"chronoq client",
                 Http({"POST " + api + "sendMsgBatch HTTP/1.1", "Host: localhost:8080",
                       "Authorization: Bearer s3cret", "Content-Type: " + json, Length(batch)},
                      batch),
                 {true, "POST", api + "sendMsgBatch", json, batch}});
  return out;
}

void ExpectRead(const Read& got, const Read& want, const std::string& what) {
  EXPECT_TRUE(got.fast) << what << ": read by Beast, not by the fast path";
  EXPECT_EQ(got.method, want.method) << what;
  EXPECT_EQ(got.target, want.target) << what;
  EXPECT_EQ(got.content_type, want.content_type) << what;
  EXPECT_EQ(got.body, want.body) << what;
  EXPECT_EQ(got.keep_alive, want.keep_alive) << what;
}

TEST(RequestParserFastPathTest, TheClientsRequestsTakeIt) {
  for (const ClientRequest& c : ClientRequests()) {
    Outcome o = Parse(c.bytes);
    ASSERT_EQ(o.reads.size(), 1u) << c.who;
    ExpectRead(o.reads[0], c.expect, c.who);
    EXPECT_EQ(o.left, 0u) << c.who;
  }
}

TEST(RequestParserFastPathTest, KeepAliveAndPipelinedRequestsTakeItEachTime) {
  std::string all;
  std::vector<Read> want;
  for (const ClientRequest& c : ClientRequests()) {
    all += c.bytes;
    want.push_back(c.expect);
  }
  // All at once (pipelined: each Feed holds the rest behind the request), and in pieces that
  // end inside one request's header or body and hold the front of the next.
  for (std::vector<size_t> cuts : {std::vector<size_t>{}, std::vector<size_t>{100, 450, 1000},
                                   std::vector<size_t>{37, 301, 302, 777, all.size() - 1}}) {
    Outcome o = Parse(all, cuts);
    ASSERT_EQ(o.reads.size(), want.size());
    for (size_t i = 0; i < want.size(); ++i)
      ExpectRead(o.reads[i], want[i], "request " + std::to_string(i));
  }
  // Connection: close is read too, and says so.
  Outcome o = Parse("GET /health HTTP/1.1\r\nHost: h\r\nConnection: close\r\n\r\n");
  ASSERT_EQ(o.reads.size(), 1u);
  ExpectRead(o.reads[0], {true, "GET", "/health", "", "", false}, "Connection: close");
}

TEST(RequestParserFastPathTest, ARequestSplitAtAnyByteTakesIt) {
  for (const ClientRequest& c : ClientRequests()) {
    for (size_t cut = 1; cut < c.bytes.size(); ++cut) {
      Outcome o = Parse(c.bytes, {cut});
      ASSERT_EQ(o.reads.size(), 1u) << c.who << ", cut at " << cut;
      ExpectRead(o.reads[0], c.expect, c.who + ", cut at " + std::to_string(cut));
    }
    Outcome o = Parse(c.bytes, EveryByte(c.bytes.size()));
    ASSERT_EQ(o.reads.size(), 1u) << c.who << ", a byte at a time";
    ExpectRead(o.reads[0], c.expect, c.who + ", a byte at a time");
  }
}

TEST(RequestParserFastPathTest, ABodyStillComingIsTakenAsItComes) {
  // The header read, the body follows: the parser uses each byte once, the header counts as
  // done (the server's request timeout applies, not the idle one), and pipelined bytes behind
  // the body stay unread.
  RequestParser parser(RequestLimits{});
  const std::string head =
      "POST /camellia/delayQueue/sendMsg HTTP/1.1\r\nHost: h\r\nContent-Length: 10\r\n\r\n";
  RequestParser::Step step = parser.Feed(head + "topic");
  EXPECT_EQ(step.event, Event::kNeedMore);
  EXPECT_EQ(step.consumed, head.size() + 5);
  EXPECT_TRUE(parser.header_done());
  step = parser.Feed("");
  EXPECT_EQ(step.event, Event::kNeedMore);
  EXPECT_EQ(step.consumed, 0u);
  step = parser.Feed("=t&");
  EXPECT_EQ(step.event, Event::kNeedMore);
  EXPECT_EQ(step.consumed, 3u);
  step = parser.Feed("m=GET /next");
  EXPECT_EQ(step.event, Event::kRequest);
  EXPECT_EQ(step.consumed, 2u);
  EXPECT_TRUE(parser.request().fast_path);
  EXPECT_EQ(parser.request().request.body, "topic=t&m=");
}

// Header fields of every length around the scans' 16-byte blocks (and their 8-byte words and
// byte-wise tails), at every alignment the lengths before them make.
TEST(RequestParserFastPathTest, NamesValuesAndTargetsOfEveryLengthTakeIt) {
  for (size_t len = 1; len <= 50; ++len) {
    const std::string target = "/" + std::string(len - 1, 't');
    const std::string name = "X" + std::string(len - 1, 'n');
    const std::string value(len, 'v');
    const std::string type = "text/" + std::string(len, 'c');
    const std::string bytes = "POST " + target + " HTTP/1.1\r\nHost: h\r\n" + name + ": " + value +
                              "\r\n" + name + ":" + value + " \t\r\nContent-Type: " + type +
                              "\r\nContent-Length: 2\r\n\r\nab";
    Outcome o = Parse(bytes);
    ASSERT_EQ(o.reads.size(), 1u) << len;
    ExpectRead(o.reads[0], {true, "POST", target, type, "ab"}, "length " + std::to_string(len));
  }
}

// What the fast path's own comment leaves to Beast: each is read by Beast or refused by it (a
// refusal is always Beast's).
TEST(RequestParserFastPathTest, WhatItLeavesToBeastGoesToBeast) {
  const std::string line = "POST /a HTTP/1.1\r\n";
  const std::string host = "Host: h\r\n";
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"another method", "PUT /a HTTP/1.1\r\n" + host + "\r\n"},
      {"HEAD", "HEAD /a HTTP/1.1\r\n" + host + "\r\n"},
      {"a method in lower case", "post /a HTTP/1.1\r\n" + host + "\r\n"},
      {"HTTP/1.0", "GET /a HTTP/1.0\r\n\r\n"},
      {"absolute-form", "GET http://h/a HTTP/1.1\r\n" + host + "\r\n"},
      {"asterisk-form", "GET * HTTP/1.1\r\n" + host + "\r\n"},
      {"obs-fold", line + host + "X-A: a\r\n b\r\n\r\n"},
      {"obs-text in a value", line + host + "X-A: caf\xc3\xa9\r\n\r\n"},
      {"obs-text in the target", "GET /caf\xc3\xa9 HTTP/1.1\r\n" + host + "\r\n"},
      {"DEL in a value", line + host + "X-A: a\x7f\r\n\r\n"},
      {"NUL in a value", line + host + std::string("X-A: a\0b\r\n\r\n", 12)},
      {"a bare LF", line + "Host: h\nX-A: a\r\n\r\n"},
      {"chunked", line + host + "Transfer-Encoding: chunked\r\n\r\n1\r\na\r\n0\r\n\r\n"},
      {"Expect", line + host + "Expect: 100-continue\r\nContent-Length: 1\r\n\r\na"},
      {"Upgrade", line + host + "Connection: Upgrade\r\nUpgrade: h2c\r\n\r\n"},
      {"Upgrade alone", line + host + "Upgrade: h2c\r\n\r\n"},
      {"Proxy-Connection", line + host + "Proxy-Connection: keep-alive\r\n\r\n"},
      {"a Connection list", line + host + "Connection: keep-alive, close\r\n\r\n"},
      {"Content-Length with a zero in front", line + host + "Content-Length: 01\r\n\r\na"},
      {"Content-Length with a sign", line + host + "Content-Length: +1\r\n\r\na"},
      {"Content-Length as a list", line + host + "Content-Length: 1,1\r\n\r\na"},
      {"Content-Length twice", line + host + "Content-Length: 1\r\nContent-Length: 1\r\n\r\na"},
      {"no Host", line + "\r\n"},
      {"two Hosts", line + host + host + "\r\n"},
      {"an empty value", line + host + "X-A:\r\n\r\n"},
      {"a name with `_`", line + host + "X_A: a\r\n\r\n"},
      {"a space before the colon", line + "Host : h\r\n\r\n"},
      {"fields past half the header limit",
       line + host + "X-Pad: " + std::string(200, 'p') + "\r\n\r\n"},
      {"a body over the limit", line + host + "Content-Length: 65\r\n\r\n" + std::string(65, 'b')},
  };
  const RequestLimits small{256, 64};
  for (const auto& [what, bytes] : cases) {
    for (std::vector<size_t> cuts : {std::vector<size_t>{}, EveryByte(bytes.size())}) {
      Outcome o = Parse(bytes, cuts, small);
      EXPECT_EQ(o.reads.size() + static_cast<size_t>(o.errors), 1u) << what;
      for (const Read& r : o.reads) EXPECT_FALSE(r.fast) << what << ": read by the fast path";
    }
  }
  // A byte the fast path does not take, after pieces it did: Beast reads the request whole.
  Outcome o = Parse(line + host + "X-A: caf\xc3\xa9\r\n\r\n", {10, 20, 30});
  ASSERT_EQ(o.reads.size(), 1u);
  EXPECT_FALSE(o.reads[0].fast);
}

}  // namespace
}  // namespace chronoq::http
