#include "core/callback.h"

#include <gtest/gtest.h>

namespace chronoq::core {
namespace {

TargetAllowlist Allow(std::string_view patterns) {
  auto a = TargetAllowlist::Parse(patterns);
  EXPECT_TRUE(a.has_value()) << a.error().ToString();
  return a.has_value() ? *a : TargetAllowlist{};
}

Callback Http(std::string url) {
  Callback cb;
  cb.url = std::move(url);
  return cb;
}

Callback Grpc(std::string target, std::string method) {
  Callback cb;
  cb.type = CallbackType::kGrpc;
  cb.target = std::move(target);
  cb.method = std::move(method);
  return cb;
}

Callback Kafka(std::string brokers, std::string topic) {
  Callback cb;
  cb.type = CallbackType::kKafka;
  cb.brokers = std::move(brokers);
  cb.kafka_topic = std::move(topic);
  return cb;
}

std::string Error(const Callback& cb, std::string_view allowed = "*") {
  Status s = ValidateCallback(cb, Allow(allowed));
  EXPECT_EQ(s.code(), s.ok() ? Errc::kOk : Errc::kInvalidArgument);
  return s.ok() ? "" : s.message();
}

TEST(CallbackTest, ValidCallbacksOfEachTypePass) {
  EXPECT_EQ(Error(Http("http://orders.internal:8080/hooks/cancel?x=1")), "");
  EXPECT_EQ(Error(Http("https://example.com")), "");
  EXPECT_EQ(Error(Http("http://[::1]:9000/a")), "");
  EXPECT_EQ(Error(Grpc("127.0.0.1:50051", "/pkg.v1.Orders/Cancel")), "");
  EXPECT_EQ(Error(Kafka("k1:9092, k2:9092", "orders.cancel-v1")), "");
}

TEST(CallbackTest, EachBadFieldGetsASentenceNamingIt) {
  EXPECT_EQ(Error(Http("")), "callback.url is missing");
  EXPECT_EQ(Error(Http("ftp://x/")),
            "callback.url must start with http:// or https://, got 'ftp://x/'");
  EXPECT_EQ(Error(Http("http://a b/")),
            "callback.url may hold only printable ASCII without spaces (percent-encode the rest)");
  EXPECT_EQ(Error(Http("http://user@x/")),
            "callback.url must not carry user information ('user@host')");
  EXPECT_EQ(Error(Http("http://x:0/")),
            "callback.url has no valid port in 'x:0' (a port is 1..65535)");
  EXPECT_EQ(Error(Http("http://x:99999/")),
            "callback.url has no valid port in 'x:99999' (a port is 1..65535)");
  Callback get = Http("http://x/");
  get.method = "TRACE";
  EXPECT_EQ(Error(get),
            "callback.method must be GET, POST, PUT, PATCH or DELETE for an http callback, got "
            "'TRACE'");
  Callback host = Http("http://x/");
  host.headers = {{"Host", "y"}};
  EXPECT_EQ(Error(host), "callback.headers may not set 'Host' (chronoq sets it itself)");
  Callback masked = Http("http://x/");
  masked.headers = {{"Authorization", "***"}};
  EXPECT_EQ(Error(masked),
            "callback.headers.Authorization is '***', what read answers show in place of a "
            "header's value; send its real value");
  Callback bad_name = Http("http://x/");
  bad_name.headers = {{"a b", "y"}};
  EXPECT_EQ(Error(bad_name),
            "callback.headers has a name that is not a valid HTTP header name: 'a b'");
  Callback crlf = Http("http://x/");
  crlf.headers = {{"X-Trace", "a\r\nInjected: 1"}};
  EXPECT_EQ(Error(crlf), "callback.headers.X-Trace contains a control character");
  Callback slow = Http("http://x/");
  slow.timeout = Millis(0);
  EXPECT_EQ(Error(slow), "callback.timeoutMillis must be 1..600000, got 0");
  Callback retry = Http("http://x/");
  retry.retry_interval = Millis(-1);
  EXPECT_EQ(Error(retry), "callback.retryIntervalMillis must be 0..315360000000, got -1");

  EXPECT_EQ(Error(Grpc("", "/a.B/C")), "callback.target is missing");
  EXPECT_EQ(Error(Grpc("host", "/a.B/C")), "callback.target needs a port in 'host' (host:port)");
  EXPECT_EQ(Error(Grpc("h:1", "a.B/C")),
            "callback.method must be a gRPC method '/package.Service/Method', got 'a.B/C'");
  EXPECT_EQ(Error(Grpc("h:1", "/a.B/")),
            "callback.method must be a gRPC method '/package.Service/Method', got '/a.B/'");

  EXPECT_EQ(Error(Kafka("", "t")), "callback.brokers is missing");
  EXPECT_EQ(Error(Kafka("k1", "t")), "callback.brokers needs a port in 'k1' (host:port)");
  EXPECT_EQ(Error(Kafka("k1:9092", "bad topic")),
            "callback.topic must be a Kafka topic name (1 to 249 of letters, digits, '.', '_', "
            "'-'), got 'bad topic'");
  EXPECT_EQ(Error(Kafka("k1:9092", "")), "callback.topic is missing");
}

TEST(CallbackTest, TheAllowlistRefusesEveryTargetItDoesNotName) {
  EXPECT_EQ(Error(Http("http://127.0.0.1:8080/"), ""),
            "callback target '127.0.0.1:8080' is not allowed: push-allowed-targets is empty, so "
            "push delivery is off (set it to the hosts chronoq may call)");
  EXPECT_EQ(Error(Http("http://127.0.0.1:8080/"), "127.0.0.1"), "");
  EXPECT_EQ(Error(Http("http://127.0.0.1:8080/"), "127.0.0.1:8080"), "");
  EXPECT_EQ(Error(Http("http://127.0.0.1:8081/"), "127.0.0.1:8080"),
            "callback target '127.0.0.1:8081' is not allowed by push-allowed-targets "
            "('127.0.0.1:8080')");
  // The default port of the scheme is the port the allowlist sees.
  EXPECT_EQ(Error(Http("https://api.example.com/x"), "*.example.com:443"), "");
  EXPECT_EQ(Error(Http("http://api.example.com/x"), "*.example.com:443"),
            "callback target 'api.example.com:80' is not allowed by push-allowed-targets "
            "('*.example.com:443')");
  // "*.example.com" is for subdomains, not a host that merely ends the same way.
  EXPECT_NE(Error(Http("http://badexample.com/"), "*.example.com"), "");
  EXPECT_NE(Error(Http("http://example.com/"), "*.example.com"), "");
  // Hosts compare without case; IPv6 in brackets.
  EXPECT_EQ(Error(Http("http://API.Example.COM/"), "api.example.com"), "");
  EXPECT_EQ(Error(Http("http://[::1]:9/"), "[::1]"), "");
  EXPECT_EQ(Error(Http("http://[::1]:9/"), "localhost"),
            "callback target '[::1]:9' is not allowed by push-allowed-targets ('localhost')");
  // Every broker of a Kafka callback must be allowed.
  EXPECT_EQ(Error(Kafka("k1:9092,k2:9092", "t"), "k1"),
            "callback target 'k2:9092' is not allowed by push-allowed-targets ('k1')");
  EXPECT_EQ(Error(Grpc("g:50051", "/a.B/C"), "k1, g:50051"), "");
}

TEST(CallbackTest, AllowlistPatternsThatAreNotHostsAreRefusedAtStart) {
  EXPECT_FALSE(TargetAllowlist::Parse("a b").has_value());
  EXPECT_FALSE(TargetAllowlist::Parse("host:0").has_value());
  EXPECT_FALSE(TargetAllowlist::Parse("http://x").has_value());
  auto bad = TargetAllowlist::Parse("ok, */x");
  ASSERT_FALSE(bad.has_value());
  EXPECT_EQ(bad.error().message(),
            "push-allowed-targets has a pattern that is not host, host:port, *.domain or *: '*/x'");
  EXPECT_TRUE(Allow("").empty());
  EXPECT_TRUE(Allow(" , ").empty());
}

TEST(CallbackTest, TheBinaryFormRoundTripsEveryField) {
  Callback http = Http("http://x:1/p");
  http.method = "PUT";
  http.headers = {{"A", "1"}, {"B", ""}};
  http.raw_body = true;
  http.timeout = Millis(250);
  http.retry_interval = Millis(0);
  Callback grpc = Grpc("g:1", "/a.B/C");
  grpc.base64 = true;
  grpc.retry_interval = Millis(60'000);
  Callback kafka = Kafka("k:1,k:2", "t");
  kafka.key = "order-1";
  for (const Callback& cb : {http, grpc, kafka}) {
    std::string bytes = EncodeCallback(cb);
    auto back = DecodeCallback(bytes);
    ASSERT_TRUE(back.has_value());
    EXPECT_EQ(*back, cb);
    // Every truncation and a trailing byte are refused, never misread.
    for (size_t n = 0; n < bytes.size(); ++n) {
      EXPECT_FALSE(DecodeCallback(std::string_view(bytes).substr(0, n)).has_value()) << n;
    }
    EXPECT_EQ(DecodeCallback(bytes + "x").error().code(), Errc::kCorruption);
  }
}

TEST(CallbackTest, TheBinaryFormHasOneEncodingPerCallback) {
  // The stores re-encode what they read (record metadata, topic configuration): an overlong
  // varint (the timeout 250 as three bytes instead of two) is refused, not read as the same value.
  Callback cb = Http("http://x:1/p");
  cb.timeout = Millis(250);
  std::string bytes = EncodeCallback(cb);
  ASSERT_EQ(static_cast<uint8_t>(bytes[2]), 0xfa);  // 250 = 0xfa 0x01
  ASSERT_EQ(static_cast<uint8_t>(bytes[3]), 0x01);
  std::string overlong = bytes.substr(0, 3) + "\x81" + std::string(1, '\0') + bytes.substr(4);
  EXPECT_EQ(DecodeCallback(overlong).error().code(), Errc::kCorruption);
}

}  // namespace
}  // namespace chronoq::core
