#include "http/request_parser.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace chronoq::http {
namespace {

using Event = RequestParser::Event;

RequestLimits SmallLimits() { return RequestLimits{256, 64}; }

// A connection's worth of bytes through one parser, `chunk` bytes arriving at a time (0: all at
// once), as the server reads them: unread bytes are kept and fed again with what arrives next.
// Returns what the parser said, one line per event, and stops at an error or when the bytes end.
std::vector<std::string> Transcript(std::string_view bytes, size_t chunk,
                                    RequestLimits limits = SmallLimits()) {
  RequestParser parser(limits);
  std::vector<std::string> out;
  std::string unread;
  size_t sent = 0;
  for (;;) {
    RequestParser::Step step = parser.Feed(unread);
    unread.erase(0, step.consumed);
    if (step.event == Event::kContinue) {
      out.push_back("100 Continue");
    } else if (step.event == Event::kRequest) {
      const ParsedRequest& p = parser.request();
      out.push_back(
          std::string(p.request.method) + " " + std::string(p.request.target) +
          " ct=" + (p.request.has_content_type ? std::string(p.request.content_type) : "-") +
          " body=" + p.request.body + " v=" + std::to_string(p.version) +
          (p.keep_alive ? " keep" : " close") + (p.head ? " head" : "") +
          (p.request.has_authorization ? " auth=" + std::string(p.request.authorization) : "") +
          (p.request.if_none_match.empty() ? "" : " inm=" + std::string(p.request.if_none_match)));
      parser.Reset();
    } else if (step.event == Event::kError) {
      const RequestFailure& f = parser.failure();
      out.push_back(std::to_string(f.status) + " " + f.message + " path=" + f.path);
      return out;
    } else if (sent == bytes.size()) {
      if (!unread.empty() || parser.header_done()) out.push_back("incomplete");
      return out;
    } else {
      size_t n = chunk == 0 ? bytes.size() - sent : std::min(chunk, bytes.size() - sent);
      unread.append(bytes.substr(sent, n));
      sent += n;
    }
  }
}

struct Case {
  std::string what;
  std::string bytes;
  std::vector<std::string> expect;
};

std::vector<Case> Cases() {
  const std::string big(300, 'a');  // over SmallLimits' 256 header bytes
  return {
      {"GET", "GET /a?x=1 HTTP/1.1\r\nHost: h\r\n\r\n", {"GET /a?x=1 ct=- body= v=11 keep"}},
      {"POST with a body",
       "POST /a HTTP/1.1\r\nHost: h\r\nContent-Type: text/plain\r\nContent-Length: 5\r\n\r\nhello",
       {"POST /a ct=text/plain body=hello v=11 keep"}},
      {"the first Content-Type counts",
       "POST /a HTTP/1.1\r\nHost: h\r\ncontent-type: x\r\nContent-Type: y\r\n\r\n",
       {"POST /a ct=x body= v=11 keep"}},
      {"pipelined",
       "POST /a HTTP/1.1\r\nHost: h\r\nContent-Length: 2\r\n\r\nhi"
       "GET /b HTTP/1.1\r\nHost: h\r\n\r\n"
       "HEAD /c HTTP/1.1\r\nHost: h\r\nConnection: close\r\n\r\n",
       {"POST /a ct=- body=hi v=11 keep", "GET /b ct=- body= v=11 keep",
        "HEAD /c ct=- body= v=11 close head"}},
      {"chunked",
       "POST /a HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: gzip, chunked\r\n\r\n"
       "3;ext=1\r\nabc\r\n2\r\nde\r\n0\r\nTrailer: t\r\n\r\n",
       {"POST /a ct=- body=abcde v=11 keep"}},
      {"HTTP/1.0", "GET /a HTTP/1.0\r\n\r\n", {"GET /a ct=- body= v=10 close"}},
      {"HTTP/1.0 keep-alive",
       "GET /a HTTP/1.0\r\nConnection: keep-alive\r\n\r\n",
       {"GET /a ct=- body= v=10 keep"}},
      {"absolute-form",
       "GET http://host:1/a?x HTTP/1.1\r\nHost: h\r\n\r\nGET HTTPS://host?q=1 HTTP/1.1\r\nHost: "
       "h\r\n\r\nGET http://host HTTP/1.1\r\nHost: h\r\n\r\n",
       {"GET /a?x ct=- body= v=11 keep", "GET /?q=1 ct=- body= v=11 keep",
        "GET / ct=- body= v=11 keep"}},
      {"100-continue",
       "POST /a HTTP/1.1\r\nHost: h\r\nExpect: 100-Continue\r\nContent-Length: 2\r\n\r\nhi",
       {"100 Continue", "POST /a ct=- body=hi v=11 keep"}},
      {"no 100-continue without a body",
       "POST /a HTTP/1.1\r\nHost: h\r\nExpect: 100-continue\r\n\r\n",
       {"POST /a ct=- body= v=11 keep"}},
      {"no 100-continue for HTTP/1.0",
       "POST /a HTTP/1.0\r\nExpect: 100-continue\r\nContent-Length: 2\r\n\r\nhi",
       {"POST /a ct=- body=hi v=10 close"}},
      {"body exactly at the limit",
       "POST /a HTTP/1.1\r\nHost: h\r\nContent-Length: 64\r\n\r\n" + std::string(64, 'b'),
       {"POST /a ct=- body=" + std::string(64, 'b') + " v=11 keep"}},
      {"an incomplete body",
       "POST /a HTTP/1.1\r\nHost: h\r\nContent-Length: 3\r\n\r\nab",
       {"incomplete"}},
      {"an incomplete header", "POST /a HTTP/1.1\r\nHost: h\r\n", {"incomplete"}},
      // Errors: status, sentence and the path when the request line was read.
      {"garbage", "GARBAGE\r\n\r\n", {"400 malformed HTTP request: bad method path="}},
      {"bad header line",
       "GET /a?q HTTP/1.1\r\nBogus header\r\n\r\n",
       {"400 malformed HTTP request: bad field path=/a"}},
      {"HTTP/1.1 without Host",
       "GET /a HTTP/1.1\r\n\r\n",
       {"400 malformed HTTP request: an HTTP/1.1 request needs exactly one Host header path=/a"}},
      {"two Host headers",
       "GET /a HTTP/1.1\r\nHost: a\r\nHost: b\r\n\r\n",
       {"400 malformed HTTP request: an HTTP/1.1 request needs exactly one Host header path=/a"}},
      {"Transfer-Encoding not ending in chunked",
       "POST /a HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked, gzip\r\n\r\nxyz",
       {"400 malformed HTTP request: the last Transfer-Encoding must be chunked path=/a"}},
      {"Transfer-Encoding: gzip",
       "POST /a HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: gzip\r\n\r\n",
       {"400 malformed HTTP request: the last Transfer-Encoding must be chunked path=/a"}},
      {"Content-Length and chunked",
       "POST /a HTTP/1.1\r\nHost: h\r\nContent-Length: 3\r\nTransfer-Encoding: chunked\r\n\r\n",
       {"400 malformed HTTP request: bad Transfer-Encoding path=/a"}},
      {"bad chunk",
       "POST /a HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n",
       {"400 malformed HTTP request: bad chunk path=/a"}},
      {"error after a good request",
       "GET /a HTTP/1.1\r\nHost: h\r\n\r\nGET /b HTTP/9.9\r\n\r\n",
       {"GET /a ct=- body= v=11 keep", "400 malformed HTTP request: bad version path="}},
      {"request line over the header limit",
       "GET /" + big + " HTTP/1.1\r\nHost: h\r\n\r\n",
       {"431 request headers are larger than 256 bytes (max-header-bytes) path="}},
      {"header fields over the header limit",
       "GET http://h/a?x HTTP/1.1\r\nHost: h\r\nX-Big: " + big + "\r\n\r\n",
       {"431 request headers are larger than 256 bytes (max-header-bytes) path=/a"}},
      {"a syntax error before the header limit",
       "GET /a HTTP/1.1\r\nHost: h\r\nX(A): 1\r\nX-Big: " + big + "\r\n\r\n",
       {"400 malformed HTTP request: bad field path=/a"}},
      {"Content-Length over the body limit",
       "POST /a?x HTTP/1.1\r\nHost: h\r\nContent-Length: 65\r\n\r\n",
       {"413 request body is larger than 64 bytes (max-body-bytes) path=/a"}},
      {"100-continue over the body limit",
       "POST /a HTTP/1.1\r\nHost: h\r\nExpect: 100-continue\r\nContent-Length: 65\r\n\r\n",
       {"413 request body is larger than 64 bytes (max-body-bytes) path=/a"}},
      {"chunked body over the body limit",
       "POST /a HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n20\r\n" +
           std::string(32, 'c') + "\r\n21\r\n",
       {"413 request body is larger than 64 bytes (max-body-bytes) path=/a"}},
  };
}

TEST(RequestParserTest, EachCaseGivesItsExpectedEvents) {
  for (const Case& c : Cases()) {
    EXPECT_EQ(Transcript(c.bytes, 0), c.expect) << c.what;
  }
}

TEST(RequestParserTest, HowTheBytesAreSplitDoesNotMatter) {
  for (const Case& c : Cases()) {
    std::vector<std::string> at_once = Transcript(c.bytes, 0);
    for (size_t chunk : {1, 2, 3, 7, 64}) {
      EXPECT_EQ(Transcript(c.bytes, chunk), at_once) << c.what << ", " << chunk << " at a time";
    }
  }
}

// Requests near the fast path's edges (request_parser.h): each must read the same with it and
// without it (Beast alone), however the bytes are split.
std::vector<std::string> FastPathEdges() {
  const std::string line = "POST /camellia/delayQueue/sendMsg HTTP/1.1\r\n";
  const std::string form = "Content-Type: application/x-www-form-urlencoded\r\n";
  return {
      line + "Host: h\r\n" + form + "Content-Length: 9\r\n\r\ntopic=t&x",
      line + "host: h\r\ncontent-length: 2\r\nconnection: keep-alive\r\n\r\nab",
      line + "Host: h\r\nConnection: close\r\nContent-Length: 0\r\n\r\n",
      line + "Host: h\r\nConnection: Keep-Alive, close\r\n\r\n",
      line + "Host: h\r\nConnection: upgrade\r\nUpgrade: h2c\r\n\r\n",
      line + "Host: h\r\nProxy-Connection: close\r\n\r\n",
      line + "Host: h\r\nAuthorization: Bearer abc\r\nAuthorization: Bearer x\r\n\r\n",
      "GET /dashboard/app.js HTTP/1.1\r\nHost: h\r\nIf-None-Match: \"e1\"\r\n\r\n",
      line + "Host:\th \t\r\nX-A:  a\tb  \r\nContent-Length: 1\r\n\r\nz",
      line + "Host: h\r\nX-Empty:\r\nX-Spaces:   \r\n\r\n",
      line + "Host: h\r\nX-Fold: a\r\n b\r\n\r\n",
      line + "Host: h\r\nContent-Length: 01\r\n\r\nab",
      line + "Host: h\r\nContent-Length: 1,1\r\n\r\na",
      line + "Host: h\r\nContent-Length: 1, 2\r\n\r\nab",
      line + "Host: h\r\nContent-Length: 1\r\nContent-Length: 1\r\n\r\na",
      line + "Host: h\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\nab",
      line + "Host: h\r\nContent-Length: +1\r\n\r\na",
      line + "Host: h\r\nContent-Length: 99999999999999999999\r\n\r\n",
      line + "Host: h\r\nX-Del: a\x7f\r\n\r\n",
      line + "Host: h\r\nX-Obs: caf\xc3\xa9\r\n\r\n",
      line + "Host: h\r\nX-Nul: a\0b\r\n\r\n",
      line + "Host: h\r\nX_Under: a\r\nX.Dot: b\r\n\r\n",
      line + "Host: h\r\nBad Name: a\r\n\r\n",
      line + "Host : h\r\n\r\n",
      line + "Host: h\nX: bare LF\r\n\r\n",
      line + "Host: h\r\n\n",
      "POST /a?\x80\xff HTTP/1.1\r\nHost: h\r\n\r\n",
      "POST  /a HTTP/1.1\r\nHost: h\r\n\r\n",
      "POST /a  HTTP/1.1\r\nHost: h\r\n\r\n",
      "POST /a HTTP/1.10\r\nHost: h\r\n\r\n",
      "POST /a HTTP/1.1 \r\nHost: h\r\n\r\n",
      "POST http://h/a HTTP/1.1\r\nHost: h\r\n\r\n",
      "POST * HTTP/1.1\r\nHost: h\r\n\r\n",
      "GET /a HTTP/1.1\r\nHost: h\r\nContent-Length: 3\r\n\r\nabcGET /b HTTP/1.1\r\nHost: "
      "h\r\n\r\n",
      "post /a HTTP/1.1\r\nHost: h\r\n\r\n",
      "\r\nPOST /a HTTP/1.1\r\nHost: h\r\n\r\n",
      line + "Host: h\r\nTransfer-Encoding: chunked\r\n\r\n1\r\na\r\n0\r\n\r\n",
      line + "Host: h\r\nExpect: 100-continue\r\nContent-Length: 1\r\n\r\na",
      line + "Host: h\r\nContent-Length: 65\r\n\r\n" + std::string(65, 'b'),
      line + "Host: h\r\nX-Pad: " + std::string(100, 'p') + "\r\n\r\n",  // past half the limit
  };
}

TEST(RequestParserTest, TheFastPathReadsEveryRequestAsBeastDoes) {
  RequestLimits beast_only = SmallLimits();
  beast_only.fast_path = false;
  std::vector<std::string> inputs = FastPathEdges();
  for (const Case& c : Cases()) inputs.push_back(c.bytes);
  // The scans read 16 or 8 bytes at a time: a byte the fast path does not take, at every place
  // of a long target and of a long field value, and field names of eight bytes or more (compared
  // a word at a time) in other cases and differing from a known name in one byte.
  for (size_t at = 0; at < 40; ++at) {
    for (char bad : {'\x7f', '\x80', '\xff', '\0', '\t', ' ', '\x1f'}) {
      std::string target = "/" + std::string(40, 't');
      std::string value(40, 'v');
      target[at + 1 == target.size() ? at : at + 1] = bad;
      value[at] = bad;
      inputs.push_back("GET " + target + " HTTP/1.1\r\nHost: h\r\n\r\n");
      inputs.push_back("GET /a HTTP/1.1\r\nHost: h\r\nContent-Type: " + value + "\r\n\r\n");
      std::string name = "X-" + std::string(38, 'n');
      name[at] = bad;
      inputs.push_back("GET /a HTTP/1.1\r\nHost: h\r\n" + name + ": 1\r\n\r\n");
    }
    for (char bad : {'@', '[', '`', '{', '/', ':', '_', '.', '\xc1', '\xe1'}) {
      std::string name = "X-" + std::string(38, 'N');
      name[at] = bad;
      inputs.push_back("GET /a HTTP/1.1\r\nHost: h\r\n" + name + ": 1\r\n\r\n");
    }
  }
  for (std::string name :
       {"CONTENT-LENGTH", "content-length", "Content-Lengtx", "Dontent-Length", "Content-Length2",
        "Content-Lengt", "CoNtEnT-tYpE", "Content-Typf", "TRANSFER-ENCODING", "Transfer-Encodinf",
        "Proxy-Connection", "Proxy-Connectioo", "Authorization", "IF-NONE-MATCH", "Connection"}) {
    inputs.push_back("POST /a HTTP/1.1\r\nHost: h\r\n" + name + ": 2\r\n\r\nab");
  }
  for (const std::string& bytes : inputs) {
    for (size_t chunk : {0, 1, 5, 64}) {
      EXPECT_EQ(Transcript(bytes, chunk), Transcript(bytes, chunk, beast_only))
          << "'" << bytes << "', " << chunk << " bytes at a time";
    }
  }
  // The common request is read whole by the fast path; the answers agree on its fields.
  EXPECT_EQ(Transcript(FastPathEdges()[6], 0),
            std::vector<std::string>{"POST /camellia/delayQueue/sendMsg ct=- body= v=11 keep "
                                     "auth=Bearer abc"});
  EXPECT_EQ(Transcript(FastPathEdges()[8], 0),
            std::vector<std::string>{"POST /camellia/delayQueue/sendMsg ct=- body=z v=11 keep"});
}

TEST(RequestParserTest, ConsumesExactlyOneRequestAndLeavesThePipelinedRest) {
  RequestParser parser(SmallLimits());
  const std::string first = "POST /a HTTP/1.1\r\nHost: h\r\nContent-Length: 2\r\n\r\nhi";
  const std::string second = "GET /b HTTP/1.1\r\nHost: h\r\n\r\n";
  RequestParser::Step step = parser.Feed(first + second);
  EXPECT_EQ(step.event, Event::kRequest);
  EXPECT_EQ(step.consumed, first.size());
  EXPECT_EQ(parser.request().request.body, "hi");
  parser.Reset();
  step = parser.Feed(second);
  EXPECT_EQ(step.event, Event::kRequest);
  EXPECT_EQ(step.consumed, second.size());
  EXPECT_EQ(parser.request().request.target, "/b");
}

TEST(RequestParserTest, ContinueIsSaidOnceAndTheBodyFollows) {
  RequestParser parser(SmallLimits());
  std::string head =
      "POST /a HTTP/1.1\r\nHost: h\r\nExpect: 100-continue\r\nContent-Length: 4\r\n\r\n";
  RequestParser::Step step = parser.Feed(head);
  EXPECT_EQ(step.event, Event::kContinue);
  EXPECT_EQ(step.consumed, head.size());
  EXPECT_TRUE(parser.header_done());
  step = parser.Feed("");
  EXPECT_EQ(step.event, Event::kNeedMore);
  step = parser.Feed("ab");
  EXPECT_EQ(step.event, Event::kNeedMore);
  EXPECT_EQ(step.consumed, 2u);
  step = parser.Feed("cdGET");
  EXPECT_EQ(step.event, Event::kRequest);
  EXPECT_EQ(step.consumed, 2u);
  EXPECT_EQ(parser.request().request.body, "abcd");
}

TEST(RequestParserTest, HeaderLimitAppliesToTheRequestLineAndToTheFields) {
  // As Beast applies it: the request line, and the header fields with the empty line ending
  // them, are each at most max_header_bytes.
  const RequestLimits limits{1024, 64};
  const std::string line = "GET /a HTTP/1.1\r\n";
  auto with_fields_of = [&](size_t n) {
    std::string host = "Host: h\r\n";
    std::string pad = "X: ";
    std::string fields = host + pad + std::string(n - host.size() - pad.size() - 4, 'p') + "\r\n";
    return line + fields + "\r\n";
  };
  EXPECT_EQ(Transcript(with_fields_of(1024), 0, limits).at(0).substr(0, 6), "GET /a");
  EXPECT_EQ(Transcript(with_fields_of(1025), 0, limits).at(0).substr(0, 4), "431 ");
  std::string long_line = "GET /" + std::string(1024 - 16, 'l') + " HTTP/1.1\r\n";
  ASSERT_EQ(long_line.size(), 1024u);
  EXPECT_EQ(Transcript(long_line + "Host: h\r\n\r\n", 0, limits).at(0).substr(0, 4), "GET ");
  EXPECT_EQ(
      Transcript("GET /x" + long_line.substr(5) + "Host: h\r\n\r\n", 0, limits).at(0).substr(0, 4),
      "431 ");
}

TEST(RequestParserTest, AHeaderThatNeverEndsIsRefusedOnceOverTheLimit) {
  // No end of header: 431 once the bytes held leave no doubt, not only at the request timeout.
  RequestParser parser(SmallLimits());
  std::string bytes = "GET /a HTTP/1.1\r\nHost: h\r\nX: ";
  RequestParser::Step step = parser.Feed(bytes);
  EXPECT_EQ(step.event, Event::kNeedMore);
  for (int i = 0; i < 600 && step.event == Event::kNeedMore; ++i) {
    bytes += 'x';
    step = parser.Feed(bytes);
  }
  EXPECT_EQ(step.event, Event::kError);
  EXPECT_EQ(parser.failure().status, 431);
  EXPECT_EQ(parser.failure().path, "/a");
  EXPECT_LE(bytes.size(), 2 * SmallLimits().max_header_bytes);
}

TEST(RequestParserTest, ResetKeepsServingRequestsOnOneConnection) {
  RequestParser parser(RequestLimits{});
  for (int i = 0; i < 1000; ++i) {
    std::string body = std::to_string(i);
    std::string req =
        "POST /n HTTP/1.1\r\nHost: h\r\nContent-Length: " + std::to_string(body.size()) +
        "\r\n\r\n" + body;
    RequestParser::Step step = parser.Feed(req);
    ASSERT_EQ(step.event, Event::kRequest) << i;
    ASSERT_EQ(step.consumed, req.size());
    ASSERT_EQ(parser.request().request.body, body);
    parser.Reset();
  }
}

}  // namespace
}  // namespace chronoq::http
