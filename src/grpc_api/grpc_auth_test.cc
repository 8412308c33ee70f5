// gRPC authentication and namespaces (docs/security.md) through a loopback GrpcServer with
// tokens: every method x every role x {no metadata, wrong token, right token}, the sentences and
// codes (UNAUTHENTICATED, PERMISSION_DENIED), and a namespace's client seeing its own topics only.
#include <grpcpp/grpcpp.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <fstream>
#include <functional>
#include <memory>
#include <string>

#include "auth/authenticator.h"
#include "chronoq/v1/delay_queue.grpc.pb.h"
#include "grpc_api/grpc_server.h"
#include "tests/testutil/grpc_world.h"

namespace chronoq::grpc_api {
namespace {

const std::string kProducer = "prod-0123456789abcdef";
const std::string kConsumer = "cons-0123456789abcdef";
const std::string kAdmin = "admn-0123456789abcdef";
const std::string kRoot = "root-0123456789abcdef";
const std::string kBank = "bank-0123456789abcdef";
const std::string kLimited = "limt-0123456789abcdef";  // one call per 1,000 s

// On every engine (grpc-engine; our own server, h2 or nghttp2, authenticates through the same
// AuthenticateHeader, unary_methods.h and consume_stream.h).
class GrpcAuthTest : public ::testing::Test,
                     public ::testing::WithParamInterface<const char*>,
                     protected testutil::GrpcWorld {
 protected:
  GrpcAuthTest() : GrpcWorld("grpc") {
    // A file of this process's own: ctest runs each engine's case as a process of its own, in
    // parallel, and one writing the file while another loads it made the load fail.
    const std::string path = ::testing::TempDir() + "/grpc_auth_tokens." + std::to_string(getpid());
    std::ofstream(path, std::ios::trunc) << kProducer << " shop producer\n"
                                         << kConsumer << " shop consumer\n"
                                         << kAdmin << " shop admin\n"
                                         << kRoot << " * admin\n"
                                         << kBank << " bank admin\n"
                                         << kLimited << " shop producer rate=0.001\n";
    EXPECT_TRUE(auth_.Load(path).ok());
    std::remove(path.c_str());
    GrpcOptions g;
    g.authenticator = &auth_;
    g.engine = GetParam();
    StartServer(g);
    if (server_ == nullptr) return;
    stub_ = v1::DelayQueue::NewStub(grpc::CreateChannel(
        "127.0.0.1:" + std::to_string(server_->port()), grpc::InsecureChannelCredentials()));
  }
  ~GrpcAuthTest() override { StopServer(); }  // before auth_, which the server uses, is deleted

  // A context carrying `token` ("": none), with a deadline.
  static std::unique_ptr<grpc::ClientContext> Ctx(const std::string& token) {
    auto ctx = std::make_unique<grpc::ClientContext>();
    ctx->set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(10));
    if (!token.empty()) ctx->AddMetadata("authorization", "Bearer " + token);
    return ctx;
  }

  auth::Authenticator auth_;
  std::unique_ptr<v1::DelayQueue::Stub> stub_;
};

struct Method {
  std::string name;
  std::string roles;  // P producer, C consumer, A shop's admin, R admin of '*'
  std::function<grpc::Status(v1::DelayQueue::Stub&, grpc::ClientContext*)> call;
};

std::vector<Method> Methods() {
  using Stub = v1::DelayQueue::Stub;
  using Ctx = grpc::ClientContext;
  std::vector<Method> m;
  m.push_back({"Send", "PAR", [](Stub& s, Ctx* c) {
                 v1::SendRequest r;
                 r.set_topic("t");
                 r.set_msg("x");
                 r.set_delay_millis(0);
                 v1::SendResponse out;
                 return s.Send(c, r, &out);
               }});
  m.push_back({"SendBatch", "PAR", [](Stub& s, Ctx* c) {
                 v1::SendBatchRequest r;
                 r.set_topic("t");
                 v1::SendBatchResponse out;
                 return s.SendBatch(c, r, &out);
               }});
  auto ref_call = [](auto fn) { return [fn](Stub& s, Ctx* c) { return fn(s, c); }; };
  m.push_back({"Get", "PCAR", ref_call([](Stub& s, Ctx* c) {
                 v1::MessageRef r;
                 r.set_topic("t");
                 r.set_msg_id("m");
                 v1::Message out;
                 return s.Get(c, r, &out);
               })});
  m.push_back({"Delete", "PAR", [](Stub& s, Ctx* c) {
                 v1::DeleteRequest r;
                 r.set_topic("t");
                 r.set_msg_id("m");
                 v1::DeleteResponse out;
                 return s.Delete(c, r, &out);
               }});
  m.push_back({"Update", "PAR", [](Stub& s, Ctx* c) {
                 v1::UpdateRequest r;
                 r.set_topic("t");
                 r.set_msg_id("m");
                 r.set_priority(1);
                 v1::Message out;
                 return s.Update(c, r, &out);
               }});
  m.push_back({"Touch", "CAR", [](Stub& s, Ctx* c) {
                 v1::TouchRequest r;
                 r.set_topic("t");
                 r.set_msg_id("m");
                 v1::Message out;
                 return s.Touch(c, r, &out);
               }});
  m.push_back({"Count", "PAR", [](Stub& s, Ctx* c) {
                 v1::CountRequest r;
                 r.set_topic("t");
                 r.set_msg_id("m");
                 v1::Message out;
                 return s.Count(c, r, &out);
               }});
  m.push_back({"List", "AR", [](Stub& s, Ctx* c) {
                 v1::ListRequest r;
                 r.set_topic("t");
                 v1::ListResponse out;
                 return s.List(c, r, &out);
               }});
  m.push_back({"Pull", "CAR", [](Stub& s, Ctx* c) {
                 v1::PullRequest r;
                 r.set_topic("t");
                 v1::PullResponse out;
                 return s.Pull(c, r, &out);
               }});
  m.push_back({"Pull(wait)", "CAR", [](Stub& s, Ctx* c) {
                 v1::PullRequest r;
                 r.set_topic("t");
                 r.set_wait_millis(1);
                 c->set_deadline(std::chrono::system_clock::now() + std::chrono::milliseconds(300));
                 v1::PullResponse out;
                 grpc::Status st = s.Pull(c, r, &out);
                 // Parked on the manual clock: its deadline ends it (allowed, not refused).
                 return st.error_code() == grpc::StatusCode::DEADLINE_EXCEEDED ? grpc::Status::OK
                                                                               : st;
               }});
  m.push_back({"Ack", "CAR", [](Stub& s, Ctx* c) {
                 v1::AckRequest r;
                 r.set_topic("t");
                 r.add_ack("m");
                 v1::AckResponse out;
                 return s.Ack(c, r, &out);
               }});
  m.push_back({"TopicInfo", "PCAR", [](Stub& s, Ctx* c) {
                 v1::TopicRef r;
                 r.set_topic("t");
                 v1::TopicInfoResponse out;
                 return s.TopicInfo(c, r, &out);
               }});
  m.push_back({"ListTopics", "PCAR", [](Stub& s, Ctx* c) {
                 v1::ListTopicsRequest r;
                 v1::ListTopicsResponse out;
                 return s.ListTopics(c, r, &out);
               }});
  m.push_back({"GetTopicConfig", "AR", [](Stub& s, Ctx* c) {
                 v1::TopicRef r;
                 r.set_topic("t");
                 v1::TopicConfig out;
                 return s.GetTopicConfig(c, r, &out);
               }});
  m.push_back({"SetTopicConfig", "AR", [](Stub& s, Ctx* c) {
                 v1::TopicConfig r;
                 r.set_topic("t");
                 r.set_max_retry(3);
                 v1::TopicConfig out;
                 return s.SetTopicConfig(c, r, &out);
               }});
  m.push_back({"DeleteTopicConfig", "AR", [](Stub& s, Ctx* c) {
                 v1::TopicRef r;
                 r.set_topic("t");
                 v1::DeleteResponse out;
                 return s.DeleteTopicConfig(c, r, &out);
               }});
  m.push_back({"Purge", "AR", [](Stub& s, Ctx* c) {
                 v1::PurgeRequest r;
                 r.set_topic("t");
                 v1::CountResponse out;
                 return s.Purge(c, r, &out);
               }});
  m.push_back({"Redrive", "AR", [](Stub& s, Ctx* c) {
                 v1::RedriveRequest r;
                 r.set_topic("t");
                 v1::CountResponse out;
                 return s.Redrive(c, r, &out);
               }});
  m.push_back({"Consume", "CAR", [](Stub& s, Ctx* c) {
                 c->set_deadline(std::chrono::system_clock::now() + std::chrono::milliseconds(300));
                 auto rw = s.Consume(c);
                 v1::ConsumeRequest req;
                 req.mutable_subscribe()->set_topic("t");
                 req.mutable_subscribe()->set_credit(1);
                 rw->Write(req);
                 rw->WritesDone();
                 v1::ConsumeResponse resp;
                 while (rw->Read(&resp)) {
                 }
                 grpc::Status st = rw->Finish();
                 return st.error_code() == grpc::StatusCode::DEADLINE_EXCEEDED ? grpc::Status::OK
                                                                               : st;
               }});
  return m;
}

INSTANTIATE_TEST_SUITE_P(Engines, GrpcAuthTest, ::testing::Values("grpc++", "nghttp2", "h2"),
                         [](const ::testing::TestParamInfo<const char*>& info) {
                           const std::string_view e = info.param;
                           return std::string(e == "grpc++" ? "grpcpp" : e);
                         });

TEST_P(GrpcAuthTest, EveryMethodEveryRoleEveryCredential) {
  const std::vector<std::pair<char, std::string>> roles = {
      {'P', kProducer}, {'C', kConsumer}, {'A', kAdmin}, {'R', kRoot}};
  for (const Method& m : Methods()) {
    SCOPED_TRACE(m.name);
    grpc::Status s = m.call(*stub_, Ctx("").get());
    EXPECT_EQ(s.error_code(), grpc::StatusCode::UNAUTHENTICATED) << s.error_message();
    EXPECT_EQ(s.error_message(),
              "authentication required: give a token as 'Authorization: Bearer <token>'");
    s = m.call(*stub_, Ctx("wrong-0123456789abcdef").get());
    EXPECT_EQ(s.error_code(), grpc::StatusCode::UNAUTHENTICATED) << s.error_message();
    EXPECT_EQ(s.error_message(), "the token is not valid");
    for (const auto& [role, token] : roles) {
      SCOPED_TRACE(std::string("role ") + role);
      s = m.call(*stub_, Ctx(token).get());
      if (m.roles.find(role) != std::string::npos) {
        EXPECT_NE(s.error_code(), grpc::StatusCode::UNAUTHENTICATED) << s.error_message();
        EXPECT_NE(s.error_code(), grpc::StatusCode::PERMISSION_DENIED) << s.error_message();
      } else {
        EXPECT_EQ(s.error_code(), grpc::StatusCode::PERMISSION_DENIED) << s.error_message();
        EXPECT_NE(s.error_message().find(" may not "), std::string::npos) << s.error_message();
      }
    }
  }
  EXPECT_GT(auth_.failures(auth::Failure::kForbidden), 0u);
}

TEST_P(GrpcAuthTest, ANamespaceSeesItsOwnTopicsOnly) {
  v1::SendRequest r;
  r.set_topic("orders");
  r.set_msg_id("m1");
  r.set_msg("shop");
  r.set_delay_millis(0);
  v1::SendResponse sent;
  ASSERT_TRUE(stub_->Send(Ctx(kProducer).get(), r, &sent).ok());
  EXPECT_EQ(sent.message().topic(), "orders");
  v1::MessageRef ref;
  ref.set_topic("orders");
  ref.set_msg_id("m1");
  v1::Message got;
  grpc::Status s = stub_->Get(Ctx(kBank).get(), ref, &got);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::NOT_FOUND) << s.error_message();
  EXPECT_EQ(s.error_message().find("shop"), std::string::npos) << s.error_message();
  ASSERT_TRUE(stub_->Get(Ctx(kConsumer).get(), ref, &got).ok());
  EXPECT_EQ(got.topic(), "orders");
  v1::ListTopicsResponse topics;
  ASSERT_TRUE(stub_->ListTopics(Ctx(kBank).get(), v1::ListTopicsRequest(), &topics).ok());
  EXPECT_EQ(topics.topics_size(), 0);
  ASSERT_TRUE(stub_->ListTopics(Ctx(kRoot).get(), v1::ListTopicsRequest(), &topics).ok());
  EXPECT_EQ(topics.topics_size(), 0);  // '*' is the unnamed namespace
  ASSERT_TRUE(stub_->ListTopics(Ctx(kAdmin).get(), v1::ListTopicsRequest(), &topics).ok());
  ASSERT_EQ(topics.topics_size(), 1);
  EXPECT_EQ(topics.topics(0).topic(), "orders");
  v1::PullRequest pull;
  pull.set_topic("orders");
  v1::PullResponse pulled;
  ASSERT_TRUE(stub_->Pull(Ctx(kBank).get(), pull, &pulled).ok());
  EXPECT_EQ(pulled.messages_size(), 0);
  ASSERT_TRUE(stub_->Pull(Ctx(kConsumer).get(), pull, &pulled).ok());
  ASSERT_EQ(pulled.messages_size(), 1);
  EXPECT_EQ(pulled.messages(0).topic(), "orders");
}

TEST_P(GrpcAuthTest, ARateLimitedTokenGetsResourceExhausted) {
  v1::MessageRef ref;
  ref.set_topic("t");
  ref.set_msg_id("m");
  v1::Message got;
  EXPECT_EQ(stub_->Get(Ctx(kLimited).get(), ref, &got).error_code(), grpc::StatusCode::NOT_FOUND);
  grpc::Status s = stub_->Get(Ctx(kLimited).get(), ref, &got);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::RESOURCE_EXHAUSTED) << s.error_message();
  EXPECT_EQ(s.error_message(),
            "the token's rate limit (0.001 requests per second) is reached; retry later");
}

}  // namespace
}  // namespace chronoq::grpc_api
