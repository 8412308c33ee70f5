#include "http/in_process.h"

#include <gtest/gtest.h>

#include <string>

namespace chronoq::http {
namespace {

Router EchoRouter() {
  Router r;
  r.Add("/echo", {"POST"}, [](HttpRequest& req, RequestContext&, Reply reply) {
    HttpResponse res;
    res.body = std::string(req.target) + "|" + req.body;
    reply(std::move(res));
  });
  return r;
}

TEST(InProcessTest, AnswersPipelinedRequestsInOrder) {
  Router r = EchoRouter();
  std::string bytes =
      "POST /echo?a=1 HTTP/1.1\r\nContent-Length: 2\r\n\r\nhi"
      "POST http://host:1/echo HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n0\r\n\r\n"
      "GET /echo HTTP/1.1\r\n\r\n"
      "GET /nope HTTP/1.1\r\nConnection: close\r\n\r\n"
      "GET /never HTTP/1.1\r\n\r\n";
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
    InProcessResult res = ServeInProcess(r, o, bytes + "POST /echo HTTP/1.1\r\n\r\n", [] {});
    EXPECT_EQ(res.exchanges.size(), 1u) << bytes;
    return res.exchanges.empty() ? 0 : res.exchanges[0].response.status;
  };
  EXPECT_EQ(one("BAD\r\n\r\n"), 400);
  EXPECT_EQ(one("POST /echo HTTP/1.1\r\nX: " + std::string(100, 'a') + "\r\n\r\n"), 431);
  EXPECT_EQ(one("POST /echo HTTP/1.1\r\nContent-Length: 5\r\n\r\nhello"), 413);
  EXPECT_EQ(one("POST /echo HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n0\r\n\r\n"),
            413);
  // An incomplete request gets no answer.
  EXPECT_TRUE(ServeInProcess(r, o, "POST /echo HTTP/1.1\r\nContent-Length: 3\r\n\r\nab", [] {
              }).exchanges.empty());
}

TEST(InProcessTest, SettlesALateReply) {
  Router r;
  Reply parked;
  r.Add("/later", {},
        [&](HttpRequest&, RequestContext&, Reply reply) { parked = std::move(reply); });
  int settles = 0;
  InProcessResult res = ServeInProcess(r, {}, "GET /later HTTP/1.1\r\n\r\n", [&] {
    if (++settles == 2) parked(HttpResponse{});
  });
  ASSERT_TRUE(res.settled);
  EXPECT_EQ(settles, 2);
  ASSERT_EQ(res.exchanges.size(), 1u);
  EXPECT_EQ(res.exchanges[0].response.status, 200);
}

}  // namespace
}  // namespace chronoq::http
