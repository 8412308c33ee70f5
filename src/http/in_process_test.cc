#include "http/in_process.h"

#include <gtest/gtest.h>

#include <string>

namespace chronoq::http {
namespace {

Router EchoRouter() {
  Router r;
  r.Add("/echo", auth::Operation::kHealthCheck, {"POST"},
        [](HttpRequest& req, RequestContext&, Reply reply) {
          HttpResponse res;
          res.body = std::string(req.target) + "|" + req.body;
          reply(std::move(res));
        });
  return r;
}

TEST(InProcessTest, AnswersPipelinedRequestsInOrder) {
  Router r = EchoRouter();
  std::string bytes =
      "POST /echo?a=1 HTTP/1.1\r\nHost: h\r\nContent-Length: 2\r\n\r\nhi"
      "POST http://host:1/echo HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n"
      "3\r\nabc\r\n0\r\n\r\n"
      "GET /echo HTTP/1.1\r\nHost: h\r\n\r\n"
      "GET /nope HTTP/1.1\r\nHost: h\r\nConnection: close\r\n\r\n"
      "GET /never HTTP/1.1\r\nHost: h\r\n\r\n";
  InProcessResult res = ServeInProcess(r, {}, bytes, [] {});
  ASSERT_TRUE(res.settled);
  ASSERT_EQ(res.exchanges.size(), 4u);
  EXPECT_EQ(res.exchanges[0].response.body, "/echo?a=1|hi");
  EXPECT_EQ(res.exchanges[1].response.body, "/echo|abc");  // absolute-form to origin-form
  EXPECT_EQ(res.exchanges[2].response.status, 405);
  EXPECT_EQ(res.exchanges[3].response.status, 404);
  EXPECT_FALSE(res.exchanges[3].keep_alive);
}

TEST(InProcessTest, ErrorsCloseTheConnection) {
  Router r = EchoRouter();
  InProcessOptions o;
  o.max_header_bytes = 64;
  o.max_body_bytes = 4;
  auto one = [&](std::string bytes) {
    InProcessResult res =
        ServeInProcess(r, o, bytes + "POST /echo HTTP/1.1\r\nHost: h\r\n\r\n", [] {});
    EXPECT_EQ(res.exchanges.size(), 1u) << bytes;
    return res.exchanges.empty() ? 0 : res.exchanges[0].response.status;
  };
  EXPECT_EQ(one("BAD\r\n\r\n"), 400);
  EXPECT_EQ(one("POST /echo HTTP/1.1\r\nHost: h\r\nX: " + std::string(100, 'a') + "\r\n\r\n"), 431);
  EXPECT_EQ(one("POST /echo HTTP/1.1\r\nHost: h\r\nContent-Length: 5\r\n\r\nhello"), 413);
  EXPECT_EQ(one("POST /echo HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n"
                "5\r\nhello\r\n0\r\n\r\n"),
            413);
  // An incomplete request gets no answer.
  EXPECT_TRUE(
      ServeInProcess(r, o, "POST /echo HTTP/1.1\r\nHost: h\r\nContent-Length: 3\r\n\r\nab", [] {
      }).exchanges.empty());
}

TEST(InProcessTest, SettlesALateReply) {
  Router r;
  Reply parked;
  r.Add("/later", auth::Operation::kHealthCheck, {},
        [&](HttpRequest&, RequestContext&, Reply reply) { parked = std::move(reply); });
  int settles = 0;
  InProcessResult res = ServeInProcess(r, {}, "GET /later HTTP/1.1\r\nHost: h\r\n\r\n", [&] {
    if (++settles == 2) parked(HttpResponse{});
  });
  ASSERT_TRUE(res.settled);
  EXPECT_EQ(settles, 2);
  ASSERT_EQ(res.exchanges.size(), 1u);
  EXPECT_EQ(res.exchanges[0].response.status, 200);
}

// Regression (issue 13): ServeInProcess had its own copy of the server's request reading, without
// the framing checks, so these got the router's answer (405 here) instead of the server's 400.
TEST(InProcessTest, FramingProblemsAre400AsOnTheServer) {
  Router r = EchoRouter();
  auto first = [&](std::string bytes) {
    InProcessResult res = ServeInProcess(r, {}, bytes, [] {});
    EXPECT_EQ(res.exchanges.size(), 1u) << bytes;
    return res.exchanges.empty() ? InProcessExchange{} : res.exchanges[0];
  };
  InProcessExchange x = first("GET /echo HTTP/1.1\r\n\r\nGET /echo HTTP/1.1\r\nHost: h\r\n\r\n");
  EXPECT_EQ(x.response.status, 400);
  EXPECT_NE(x.response.body.find("an HTTP/1.1 request needs exactly one Host header"),
            std::string::npos)
      << x.response.body;
  EXPECT_NE(x.response.body.find(R"("path":"/echo")"), std::string::npos) << x.response.body;
  EXPECT_FALSE(x.keep_alive);
  x = first("POST /echo HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: gzip\r\n\r\nabc");
  EXPECT_EQ(x.response.status, 400);
  EXPECT_NE(x.response.body.find("the last Transfer-Encoding must be chunked"), std::string::npos)
      << x.response.body;
  // HTTP/1.0 needs no Host.
  EXPECT_EQ(first("POST /echo HTTP/1.0\r\nContent-Length: 1\r\n\r\nx").response.status, 200);
}

// What the server would write: status line, headers (Connection as the keep-alive decision
// says), no body for HEAD, 100 Continue before the answer when the client waited for it.
TEST(InProcessTest, GivesTheBytesTheServerWrites) {
  Router r = EchoRouter();
  r.Add("/any", auth::Operation::kHealthCheck, {}, [](HttpRequest&, RequestContext&, Reply reply) {
    HttpResponse res;
    res.body = "{}";
    reply(std::move(res));
  });
  InProcessResult res = ServeInProcess(
      r, {},
      "POST /echo HTTP/1.1\r\nHost: h\r\nExpect: 100-continue\r\nContent-Length: 1\r\n\r\nx"
      "HEAD /any HTTP/1.1\r\nHost: h\r\n\r\n"
      "GET /any HTTP/1.0\r\nConnection: keep-alive\r\n\r\n"
      "GET /any HTTP/1.0\r\n\r\n",
      [] {});
  ASSERT_EQ(res.exchanges.size(), 4u);
  auto without_date = [](std::string wire) {
    size_t at = wire.find("Date: ");
    if (at != std::string::npos) wire.erase(at, wire.find("\r\n", at) + 2 - at);
    return wire;
  };
  EXPECT_EQ(without_date(res.exchanges[0].wire),
            "HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 200 OK\r\nServer: chronoq\r\n"
            "Content-Type: application/json\r\nContent-Length: 7\r\n\r\n/echo|x");
  EXPECT_EQ(without_date(res.exchanges[1].wire),
            "HTTP/1.1 200 OK\r\nServer: chronoq\r\nContent-Type: application/json\r\n"
            "Content-Length: 2\r\n\r\n");
  EXPECT_EQ(without_date(res.exchanges[2].wire),
            "HTTP/1.1 200 OK\r\nServer: chronoq\r\nContent-Type: application/json\r\n"
            "Content-Length: 2\r\nConnection: keep-alive\r\n\r\n{}");
  EXPECT_EQ(without_date(res.exchanges[3].wire),
            "HTTP/1.1 200 OK\r\nServer: chronoq\r\nContent-Type: application/json\r\n"
            "Content-Length: 2\r\nConnection: close\r\n\r\n{}");
  EXPECT_FALSE(res.exchanges[3].keep_alive);
}

// The dashboard's revalidation on the wire: the first If-None-Match reaches the handler, and a
// 304 goes out without a body or a Content-Length.
TEST(InProcessTest, IfNoneMatchReachesTheHandlerAnd304HasNoContentLength) {
  Router r;
  r.Add("/asset", auth::Operation::kHealthCheck, {"GET"},
        [](HttpRequest& req, RequestContext&, Reply reply) {
          HttpResponse res;
          res.status = req.if_none_match == "\"v1\"" ? 304 : 200;
          if (res.status == 200) res.body = "body";
          reply(std::move(res));
        });
  InProcessResult res = ServeInProcess(
      r, {},
      "GET /asset HTTP/1.1\r\nHost: h\r\nIf-None-Match: \"v1\"\r\nIf-None-Match: \"v2\"\r\n\r\n"
      "GET /asset HTTP/1.1\r\nHost: h\r\n\r\n",
      [] {});
  ASSERT_EQ(res.exchanges.size(), 2u);
  const std::string& not_modified = res.exchanges[0].wire;
  EXPECT_EQ(not_modified.substr(0, 29), "HTTP/1.1 304 Not Modified\r\nSe");
  EXPECT_EQ(not_modified.find("Content-Length"), std::string::npos) << not_modified;
  EXPECT_TRUE(not_modified.ends_with("\r\n\r\n"));
  // The header does not carry over to the next request on the connection.
  EXPECT_EQ(res.exchanges[1].response.status, 200);
  EXPECT_NE(res.exchanges[1].wire.find("Content-Length: 4\r\n"), std::string::npos);
}

}  // namespace
}  // namespace chronoq::http
