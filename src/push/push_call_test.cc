#include "push/push_call.h"

#include <gtest/gtest.h>

namespace chronoq::push {
namespace {

TEST(PushCallTest, ParsesHttpUrls) {
  HttpUrl u;
  ASSERT_TRUE(ParseHttpUrl("http://example.com", &u).ok());
  EXPECT_EQ(u.host, "example.com");
  EXPECT_EQ(u.port, 80);
  EXPECT_EQ(u.target, "/");
  ASSERT_TRUE(ParseHttpUrl("HTTP://10.0.0.1:8080/a/b?x=1&y=2#frag", &u).ok());
  EXPECT_EQ(u.host, "10.0.0.1");
  EXPECT_EQ(u.port, 8080);
  EXPECT_EQ(u.target, "/a/b?x=1&y=2");
  ASSERT_TRUE(ParseHttpUrl("http://[::1]:9000?q", &u).ok());
  EXPECT_EQ(u.host, "::1");
  EXPECT_EQ(u.port, 9000);
  EXPECT_EQ(u.target, "/?q");
  EXPECT_FALSE(u.tls);
  ASSERT_TRUE(ParseHttpUrl("https://pay.example/cb", &u).ok());
  EXPECT_TRUE(u.tls);
  EXPECT_EQ(u.host, "pay.example");
  EXPECT_EQ(u.port, 443);
  EXPECT_EQ(u.target, "/cb");
}

TEST(PushCallTest, RefusesBadUrlsWithASentence) {
  HttpUrl u;
  EXPECT_EQ(ParseHttpUrl("ftp://h/", &u).message(),
            "callback.url must start with http:// or https://, got 'ftp://h/'");
  EXPECT_EQ(ParseHttpUrl("https://", &u).message(),
            "callback.url has no valid host in '' (letters, digits, '-', '.', '_')");
  EXPECT_EQ(ParseHttpUrl("http:///x", &u).message(),
            "callback.url has no valid host in '' (letters, digits, '-', '.', '_')");
  EXPECT_EQ(ParseHttpUrl("http://h:0/", &u).message(),
            "callback.url has no valid port in 'h:0' (a port is 1..65535)");
  EXPECT_EQ(ParseHttpUrl("http://h:99999/", &u).message(),
            "callback.url has no valid port in 'h:99999' (a port is 1..65535)");
  EXPECT_EQ(ParseHttpUrl("http://h:/", &u).message(),
            "callback.url has no valid port in 'h:' (a port is 1..65535)");
  EXPECT_EQ(ParseHttpUrl("http://u:p@h/", &u).message(),
            "callback.url must not carry user information ('user@host')");
  EXPECT_EQ(ParseHttpUrl("http://h/a b", &u).message(),
            "callback.url may hold only printable ASCII without spaces (percent-encode the rest)");
}

TEST(PushCallTest, TargetKeyIsTheIsolationUnit) {
  PushCall c;
  c.kind = Kind::kHttp;
  c.url = "http://Example.com/hook";
  EXPECT_EQ(TargetKey(c), "example.com:80");  // one key however the host is spelt
  c.url = "http://[::1]:81/";
  EXPECT_EQ(TargetKey(c), "[::1]:81");
  c.url = "https://pay.example/cb";
  EXPECT_EQ(TargetKey(c), "pay.example:443");
  c.kind = Kind::kGrpc;
  c.grpc_target = "svc:50051";
  EXPECT_EQ(TargetKey(c), "svc:50051");
  c.kind = Kind::kKafka;
  c.brokers = "k1:9092,k2:9092";
  EXPECT_EQ(TargetKey(c), "k1:9092,k2:9092");
}

TEST(PushCallTest, ValidatesEachKindsFields) {
  PushCall c;
  c.kind = Kind::kHttp;
  c.url = "http://h/";
  EXPECT_TRUE(ValidatePushCall(c).ok());
  c.method = "PO ST";
  EXPECT_EQ(ValidatePushCall(c).message(), "callback method 'PO ST' is not an HTTP method");
  c.method = "POST";
  c.headers = {{"X-A", "1\r\nX-B: 2"}};
  EXPECT_EQ(ValidatePushCall(c).message(),
            "callback header 'X-A' has a line break or NUL in its value");
  c.headers = {};
  c.content_type = "text/plain\r\nX-Evil: 1";
  EXPECT_EQ(ValidatePushCall(c).message(), "callback content type has a line break or NUL");
  c.content_type = "";
  c.msg_id = std::string("a\0b", 3);
  EXPECT_EQ(ValidatePushCall(c).message(), "callback msg id has a line break or NUL");
  c.msg_id = "m";
  c.timeout = std::chrono::milliseconds(0);
  EXPECT_EQ(ValidatePushCall(c).message(), "callback timeout must be at least 1 ms, got 0 ms");
  c.timeout = std::chrono::milliseconds(5);
  c.outcome_reserve = std::chrono::milliseconds(-1);
  EXPECT_EQ(ValidatePushCall(c).message(), "push outcome_reserve must not be negative, got -1 ms");
  c.outcome_reserve = std::chrono::milliseconds(0);
  EXPECT_TRUE(ValidatePushCall(c).ok());

  PushCall g;
  g.kind = Kind::kGrpc;
  g.grpc_target = "h";
  g.grpc_method = "/p.S/M";
  EXPECT_EQ(ValidatePushCall(g).message(), "callback target 'h' must be host:port");
  g.grpc_target = "h:1";
  EXPECT_TRUE(ValidatePushCall(g).ok());
  g.grpc_method = "/p.S/";
  EXPECT_EQ(ValidatePushCall(g).message(),
            "callback method '/p.S/' must be /package.Service/Method");

  PushCall k;
  k.kind = Kind::kKafka;
  k.brokers = "k1:9092,k2";
  k.kafka_topic = "t";
  EXPECT_EQ(ValidatePushCall(k).message(), "callback brokers 'k1:9092,k2': 'k2' is not host:port");
  k.brokers = "k1:9092,k2:9093";
  EXPECT_TRUE(ValidatePushCall(k).ok());
  k.kafka_topic = "";
  EXPECT_EQ(ValidatePushCall(k).message(), "callback Kafka topic is empty");
}

}  // namespace
}  // namespace chronoq::push
