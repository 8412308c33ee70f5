// Push delivery to gRPC and Kafka targets (issue 16, docs/push.md) through the real binary, on
// every storage and on two nodes sharing one Redis: a real gRPC server of the library the server
// uses (a generic service: any method, raw bytes) and librdkafka's mock cluster (a real Kafka
// protocol broker in this process), whose records the test consumes back.
#include <fmt/format.h>

#include <chrono>
#include <set>

#include "push/testing/grpc_receiver.h"
#include "push/testing/kafka_mock.h"
#include "tests/integration/push/push_it.h"

namespace chronoq::it {
namespace {

using push::testing::GrpcReceiver;
using push::testing::GrpcRequest;
using push::testing::KafkaMock;
using push::testing::KafkaRecord;

class PushGrpcKafkaTest : public PushTest {
 protected:
  static std::string GrpcCallback(const GrpcReceiver& r, std::string_view extra = "") {
    return fmt::format(R"({{"type":"grpc","target":"{}","method":"/pkg.Svc/Do"{}}})", r.Target(),
                       extra);
  }
  static std::string KafkaCallback(const KafkaMock& k, std::string_view extra = "") {
    return fmt::format(R"({{"type":"kafka","brokers":"{}","topic":"k"{}}})", k.brokers(), extra);
  }
};

TEST_F(PushGrpcKafkaTest, AGrpcCallbackCallsTheMethodWithThePayloadBytesAndMetadata) {
  GrpcReceiver target;
  const std::string t = Topic();
  SendOk(t, "payload \x01 bytes", 30'000, {{"msgId", "g1"}, {"callback", GrpcCallback(target)}});
  EXPECT_FALSE(target.WaitForRequests(1, 200ms)) << "called before its trigger time";
  Advance(30'000);
  ASSERT_TRUE(target.WaitForRequests(1, 10s));
  json::object m = WaitForStatus(t, "g1", 4);
  EXPECT_EQ(Int(m.at("attempts")), 1);
  EXPECT_EQ(Str(m.at("callback").at("type")), "grpc");
  const GrpcRequest r = target.Requests().at(0);
  EXPECT_EQ(r.method, "/pkg.Svc/Do");
  EXPECT_EQ(r.bytes, "payload \x01 bytes");
  EXPECT_EQ(r.Metadata("x-chronoq-msg-id"), "g1");
  EXPECT_EQ(r.Metadata("x-chronoq-topic"), t);
  EXPECT_EQ(r.Metadata("x-chronoq-attempt"), "1");
  EXPECT_EQ(target.RequestCount(), 1u);  // acked: never again
}

TEST_F(PushGrpcKafkaTest, ABase64GrpcCallbackSendsTheDecodedBytes) {
  GrpcReceiver target;
  const std::string t = Topic();
  const std::string bytes("\x08\x96\x01\x00\xff proto", 11);
  SendOk(t, "CJYBAP8gcHJvdG8=", 0,  // base64 of `bytes`
         {{"msgId", "g2"}, {"callback", GrpcCallback(target, R"(,"format":"base64")")}});
  ASSERT_TRUE(target.WaitForRequests(1, 10s));
  EXPECT_EQ(target.Requests().at(0).bytes, bytes);
  WaitForStatus(t, "g2", 4);
}

TEST_F(PushGrpcKafkaTest, AFailingGrpcStatusIsTheLastErrorAndRetried) {
  GrpcReceiver target({.mode = GrpcReceiver::Mode::kFail,
                       .fail_code = 9,  // FAILED_PRECONDITION
                       .fail_message = "order is locked"});
  const std::string t = Topic();
  SendOk(t, "m", 0,
         {{"msgId", "g3"},
          {"maxRetry", "1"},
          {"callback", GrpcCallback(target, R"(,"retryIntervalMillis":5000)")}});
  ASSERT_TRUE(target.WaitForRequests(1, 10s));
  json::object m = WaitForStatus(t, "g3", 1);
  EXPECT_EQ(Int(m.at("attempts")), 1);
  EXPECT_EQ(Str(m.at("lastError")), "gRPC FAILED_PRECONDITION: order is locked");
  Advance(5'000);
  ASSERT_TRUE(target.WaitForRequests(2, 10s));
  m = WaitForStatus(t, "g3", 6);
  EXPECT_EQ(Int(m.at("attempts")), 2);
  EXPECT_EQ(Str(m.at("lastError")), "gRPC FAILED_PRECONDITION: order is locked");
  EXPECT_EQ(target.Requests().at(1).Metadata("x-chronoq-attempt"), "2");
  EXPECT_EQ(target.RequestCount(), 2u);
}

TEST_F(PushGrpcKafkaTest, AKafkaCallbackProducesOneRecordPerMessageKeyedByMsgId) {
  KafkaMock kafka;
  ASSERT_TRUE(kafka.CreateTopic("k").ok());
  const std::string t = Topic();
  constexpr int kMessages = 6;
  for (int i = 0; i < kMessages; ++i) {
    const std::string extra = i == 0 ? R"(,"key":"order-key")" : "";
    SendOk(t, fmt::format("value {}", i), 0,
           {{"msgId", fmt::format("k{}", i)}, {"callback", KafkaCallback(kafka, extra)}});
  }
  for (int i = 0; i < kMessages; ++i) {
    json::object m = WaitForStatus(t, fmt::format("k{}", i), 4, 30s);
    EXPECT_EQ(Int(m.at("attempts")), 1);
  }
  int64_t end = -1;
  std::vector<KafkaRecord> got = kafka.Consume("k", kMessages, 20s, &end);
  ASSERT_EQ(got.size(), static_cast<size_t>(kMessages));
  EXPECT_EQ(end, kMessages) << "one record per acked message, no more";
  std::set<std::string> ids;
  for (const KafkaRecord& r : got) {
    const std::string id = r.headers.count("x-chronoq-msg-id") ? r.headers.at("x-chronoq-msg-id")
                                                               : std::string("<absent>");
    ids.insert(id);
    EXPECT_EQ(r.value, "value " + id.substr(1)) << id;
    EXPECT_EQ(r.key, id == "k0" ? "order-key" : id);
    EXPECT_EQ(r.headers.at("x-chronoq-topic"), t);
    EXPECT_EQ(r.headers.at("x-chronoq-attempt"), "1");
  }
  EXPECT_EQ(ids.size(), static_cast<size_t>(kMessages));
}

}  // namespace
}  // namespace chronoq::it
