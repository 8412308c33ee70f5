// The gRPC API in process: a GrpcServer on a loopback port over the service and the embedded
// engine (in-memory store, manual clock), driven by the generated C++ client. What a gRPC client
// relies on: the service's answers and sentences with the right status codes, the size limit,
// Consume's credit, acks on the stream and redelivery after a broken stream, long polls that take
// nothing once the client's deadline passed, the figures, and the streams' end at shutdown.
#include <grpcpp/generic/generic_stub.h>
#include <grpcpp/grpcpp.h>
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <fstream>
#include <future>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "base/mutex.h"
#include "chronoq/v1/delay_queue.grpc.pb.h"
#include "grpc_api/grpc_server.h"
#include "grpc_api/h2_wire.h"
#include "metrics/exposition.h"
#include "tests/testutil/grpc_world.h"

namespace chronoq::grpc_api {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;

constexpr size_t kMaxMsgBytes = 1024;

std::chrono::system_clock::time_point In(std::chrono::milliseconds d) {
  return std::chrono::system_clock::now() + d;
}

// The service's size limit is kMaxMsgBytes; its push targets allowed are hooks.example's (no pusher
// runs).
service::ServiceOptions Options() {
  service::ServiceOptions o;
  o.limits.max_msg_bytes = kMaxMsgBytes;
  o.push_allowed = core::TargetAllowlist::Parse("hooks.example").value();
  return o;
}

class GrpcApiTest : public ::testing::Test, protected testutil::GrpcWorld {
 protected:
  // `engine`: grpc-engine.
  explicit GrpcApiTest(const char* engine = "grpc++") : GrpcWorld("grpc", Options()) {
    GrpcOptions g;
    g.max_msg_bytes = kMaxMsgBytes;
    g.engine = engine;
    StartServer(g);
    if (server_ == nullptr) return;
    stub_ = v1::DelayQueue::NewStub(grpc::CreateChannel(
        "127.0.0.1:" + std::to_string(server_->port()), grpc::InsecureChannelCredentials()));
  }

  grpc::Status Send(const std::string& id, int64_t delay_ms, v1::SendResponse* out = nullptr,
                    const std::string& topic = "t") {
    v1::SendRequest req;
    req.set_topic(topic);
    req.set_msg_id(id);
    req.set_msg("payload-" + id);
    req.set_delay_millis(delay_ms);
    v1::SendResponse resp;
    grpc::ClientContext ctx;
    ctx.set_deadline(In(seconds(10)));
    grpc::Status s = stub_->Send(&ctx, req, &resp);
    if (out != nullptr) *out = resp;
    return s;
  }

  // Messages "m<first>".."m<first + n - 1>" of topic "t" with `payload`, due now, in one
  // SendBatch.
  void SendMany(int first, int n, const std::string& payload) {
    v1::SendBatchRequest batch;
    batch.set_topic("t");
    for (int i = first; i < first + n; ++i) {
      v1::SendRequest* m = batch.add_msgs();
      m->set_msg_id("m" + std::to_string(i));
      m->set_msg(payload);
      m->set_delay_millis(0);
    }
    v1::SendBatchResponse resp;
    grpc::ClientContext ctx;
    grpc::Status sent = stub_->SendBatch(&ctx, batch, &resp);
    ASSERT_TRUE(sent.ok()) << sent.error_message();
  }

  // A Consume stream: its context and reader-writer.
  struct Stream {
    grpc::ClientContext ctx;
    std::unique_ptr<grpc::ClientReaderWriter<v1::ConsumeRequest, v1::ConsumeResponse>> rw;
  };
  std::unique_ptr<Stream> Subscribe(const std::string& topic, int credit, int64_t ack_timeout,
                                    milliseconds deadline = seconds(20)) {
    auto s = std::make_unique<Stream>();
    s->ctx.set_deadline(In(deadline));
    s->rw = stub_->Consume(&s->ctx);
    v1::ConsumeRequest req;
    req.mutable_subscribe()->set_topic(topic);
    req.mutable_subscribe()->set_credit(credit);
    req.mutable_subscribe()->set_ack_timeout_millis(ack_timeout);
    EXPECT_TRUE(s->rw->Write(req));
    return s;
  }
  static v1::ConsumeResponse Next(Stream& s) {
    v1::ConsumeResponse r;
    EXPECT_TRUE(s.rw->Read(&r)) << "the stream ended: " << s.rw->Finish().error_message();
    return r;
  }
  static void AckOnStream(Stream& s, const std::string& id) {
    v1::ConsumeRequest req;
    req.mutable_ack()->add_ack(id);
    EXPECT_TRUE(s.rw->Write(req));
  }

  v1::Message Get(const std::string& id) {
    v1::MessageRef ref;
    ref.set_topic("t");
    ref.set_msg_id(id);
    v1::Message m;
    grpc::ClientContext ctx;
    EXPECT_TRUE(stub_->Get(&ctx, ref, &m).ok());
    return m;
  }

  std::string Scrape() {
    metrics::TextWriter w;
    registry_.Render(w);
    return w.Take();
  }

  std::unique_ptr<v1::DelayQueue::Stub> stub_;
};

// The tests of the unary methods and Consume, on every engine (docs/grpc.md: our own server, h2
// or nghttp2, serves them through the same unary_methods.h and consume_stream.h).
class GrpcEnginesTest : public GrpcApiTest, public ::testing::WithParamInterface<const char*> {
 protected:
  GrpcEnginesTest() : GrpcApiTest(GetParam()) {}
};
INSTANTIATE_TEST_SUITE_P(Engines, GrpcEnginesTest, ::testing::Values("grpc++", "nghttp2", "h2"),
                         [](const ::testing::TestParamInfo<const char*>& info) {
                           const std::string_view e = info.param;
                           return std::string(e == "grpc++" ? "grpcpp" : e);
                         });

TEST_P(GrpcEnginesTest, UnaryMethodsAnswerWithTheServiceRulesCodesAndSentences) {
  v1::SendResponse sent;
  ASSERT_TRUE(Send("a", 5'000, &sent).ok());
  EXPECT_EQ(sent.message().status(), 1);      // waiting
  EXPECT_EQ(sent.message().max_retry(), 10);  // the server default, applied below the protocol
  EXPECT_FALSE(sent.existing());
  ASSERT_TRUE(Send("a", 0, &sent).ok());
  EXPECT_TRUE(sent.existing());  // a task created twice is one task

  // The HTTP API's sentence, as the status message.
  grpc::Status s = Send("b", 0, nullptr, "");
  EXPECT_EQ(s.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_EQ(s.error_message(), "topic is empty");
  v1::SendRequest both;
  both.set_topic("t");
  both.set_msg("x");
  both.set_delay_millis(1);
  both.set_trigger_time(1);
  {
    grpc::ClientContext ctx;
    v1::SendResponse r;
    s = stub_->Send(&ctx, both, &r);
    EXPECT_EQ(s.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
    EXPECT_EQ(s.error_message(), "give either delayMillis or triggerTime, not both");
  }
  {
    v1::MessageRef ref;
    ref.set_topic("t");
    ref.set_msg_id("nope");
    grpc::ClientContext ctx;
    v1::Message m;
    EXPECT_EQ(stub_->Get(&ctx, ref, &m).error_code(), grpc::StatusCode::NOT_FOUND);
  }
  {
    // Acking a waiting message: refused per item, FAILED_PRECONDITION, with its sentence.
    v1::AckRequest ack;
    ack.set_topic("t");
    ack.add_ack("a");
    grpc::ClientContext ctx;
    v1::AckResponse r;
    ASSERT_TRUE(stub_->Ack(&ctx, ack, &r).ok());
    ASSERT_EQ(r.results_size(), 1);
    EXPECT_EQ(r.results(0).code(), static_cast<int>(grpc::StatusCode::FAILED_PRECONDITION));
    EXPECT_FALSE(r.results(0).msg().empty());
  }
  {
    // A full topic: RESOURCE_EXHAUSTED with the sentence of code 429.
    v1::TopicConfig c;
    c.set_topic("small");
    c.set_capacity(1);
    grpc::ClientContext ctx;
    v1::TopicConfig answer;
    ASSERT_TRUE(stub_->SetTopicConfig(&ctx, c, &answer).ok());
    EXPECT_EQ(answer.capacity(), 1);
    EXPECT_EQ(answer.sources().at("capacity"), "topic");
    ASSERT_TRUE(Send("x1", 0, nullptr, "small").ok());
    s = Send("x2", 0, nullptr, "small");
    EXPECT_EQ(s.error_code(), grpc::StatusCode::RESOURCE_EXHAUSTED);
    EXPECT_EQ(s.error_message(), "topic 'small' is full: 1 messages in life, capacity 1");
  }
  {
    v1::DeleteRequest d;
    d.set_topic("t");
    d.set_msg_id("a");
    grpc::ClientContext ctx;
    v1::DeleteResponse r;
    EXPECT_TRUE(stub_->Delete(&ctx, d, &r).ok());  // cancel the task
    EXPECT_EQ(Get("a").status(), 7);
  }
  std::string text = Scrape();
  EXPECT_NE(text.find("cq_grpc_requests_total{method=\"Send\",code=\"OK\"} 3"), std::string::npos)
      << text;
  EXPECT_NE(text.find("cq_grpc_requests_total{method=\"Send\",code=\"INVALID_ARGUMENT\"} 2"),
            std::string::npos);
  EXPECT_NE(text.find("cq_grpc_request_duration_seconds_count{method=\"Get\"} 2"),
            std::string::npos);
}

TEST_P(GrpcEnginesTest, AnswersShowACallbacksHeaderNamesWithEachValueMasked) {
  v1::SendRequest req;
  req.set_topic("t");
  req.set_msg_id("h");
  req.set_msg("m");
  req.set_delay_millis(60'000);
  v1::Callback::Http* http = req.mutable_callback()->mutable_http();
  http->set_url("http://hooks.example/in");
  (*http->mutable_headers())["Authorization"] = "Bearer s3cret";
  (*http->mutable_headers())["X-Key"] = "k1";
  const std::map<std::string, std::string> masked = {{"Authorization", "***"}, {"X-Key", "***"}};
  auto headers = [](const v1::Message& m) {
    const auto& h = m.callback().http().headers();
    return std::map<std::string, std::string>(h.begin(), h.end());
  };
  grpc::ClientContext ctx;
  v1::SendResponse sent;
  ASSERT_TRUE(stub_->Send(&ctx, req, &sent).ok());
  EXPECT_EQ(headers(sent.message()), masked);
  EXPECT_EQ(headers(Get("h")), masked);
  EXPECT_EQ(Get("h").callback().http().url(), "http://hooks.example/in");
  v1::ListRequest list;
  list.set_topic("t");
  grpc::ClientContext lctx;
  v1::ListResponse page;
  ASSERT_TRUE(stub_->List(&lctx, list, &page).ok());
  ASSERT_EQ(page.messages_size(), 1);
  EXPECT_EQ(headers(page.messages(0)), masked);  // gRPC List has no export: always masked
}

TEST_P(GrpcEnginesTest, GetMsgHistoryAnswersTheEntriesOrRefusesWithTheSentenceAndCode) {
  auto history = [this](const std::string& topic, const std::string& id, v1::MsgHistory* out) {
    v1::MessageRef ref;
    ref.set_topic(topic);
    ref.set_msg_id(id);
    grpc::ClientContext ctx;
    return stub_->GetMsgHistory(&ctx, ref, out);
  };
  ASSERT_TRUE(Send("a", 0).ok());
  v1::MsgHistory h;
  grpc::Status s = history("t", "a", &h);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_EQ(s.error_message().rfind("topic 't' does not record message history", 0), 0u)
      << s.error_message();

  v1::TopicConfig c;
  c.set_topic("h");
  c.set_history(true);
  {
    grpc::ClientContext ctx;
    v1::TopicConfig answer;
    ASSERT_TRUE(stub_->SetTopicConfig(&ctx, c, &answer).ok());
  }
  ASSERT_TRUE(Send("a", 0, nullptr, "h").ok());
  const int64_t sent_at = ToEpochMs(clock_.Now());
  clock_.Advance(milliseconds(5));
  {
    v1::PullRequest pull;
    pull.set_topic("h");
    pull.set_batch(1);
    grpc::ClientContext ctx;
    v1::PullResponse r;
    ASSERT_TRUE(stub_->Pull(&ctx, pull, &r).ok());
    ASSERT_EQ(r.messages_size(), 1);
  }
  ASSERT_TRUE(history("h", "a", &h).ok());
  ASSERT_EQ(h.entries_size(), 2);
  EXPECT_EQ(h.entries(0).event(), "sent");
  EXPECT_EQ(h.entries(0).time(), sent_at);
  EXPECT_EQ(h.entries(0).attempt(), 0);
  EXPECT_EQ(h.entries(0).node(), "chronoq");  // EngineOptions' default node name
  EXPECT_EQ(h.entries(1).event(), "delivered");
  EXPECT_EQ(h.entries(1).time(), sent_at + 5);
  EXPECT_EQ(h.entries(1).attempt(), 1);

  s = history("h", "nope", &h);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::NOT_FOUND);
  EXPECT_EQ(s.error_message(), "message 'nope' not found in topic 'h'");
  s = history("h", "", &h);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_NE(s.error_message().find("msgId"), std::string::npos) << s.error_message();
}

TEST_P(GrpcEnginesTest, ARequestBeyondMaxMsgBytesIsRefusedAndAPayloadOverTheLimitGetsTheSentence) {
  v1::SendRequest req;
  req.set_topic("t");
  req.set_delay_millis(0);
  req.set_msg(std::string(kMaxMsgBytes + 1, 'x'));
  v1::SendResponse resp;
  {
    grpc::ClientContext ctx;
    grpc::Status s = stub_->Send(&ctx, req, &resp);
    EXPECT_EQ(s.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
    EXPECT_EQ(s.error_message(), "msg is 1025 bytes long; the limit is 1024 bytes (max-msg-bytes)");
  }
  req.set_msg(std::string(kMaxMsgBytes + kEnvelopeBytes + 1, 'x'));
  grpc::ClientContext ctx;
  EXPECT_EQ(stub_->Send(&ctx, req, &resp).error_code(), grpc::StatusCode::RESOURCE_EXHAUSTED);
}

TEST_P(GrpcEnginesTest, ConsumeNeverHoldsMoreThanTheCreditAndAcksOnTheStreamGiveItBack) {
  auto stream = Subscribe("t", 2, 30'000);
  for (const char* id : {"a", "b", "c"}) ASSERT_TRUE(Send(id, 0).ok());
  EXPECT_EQ(Next(*stream).message().msg_id(), "a");
  EXPECT_EQ(Next(*stream).message().msg_id(), "b");
  // "c" waits for credit: it comes after the answer to the ack that frees some.
  AckOnStream(*stream, "a");
  v1::ConsumeResponse acked = Next(*stream);
  ASSERT_TRUE(acked.has_acked());
  ASSERT_EQ(acked.acked().results_size(), 1);
  EXPECT_EQ(acked.acked().results(0).code(), 0);
  EXPECT_EQ(Next(*stream).message().msg_id(), "c");
  EXPECT_EQ(Get("a").status(), 4);  // consumed
  EXPECT_EQ(Get("c").status(), 3);  // held by the stream
  // More credit: a message sent now comes at once.
  v1::ConsumeRequest more;
  more.set_add_credit(1);
  ASSERT_TRUE(stream->rw->Write(more));
  ASSERT_TRUE(Send("d", 0).ok());
  EXPECT_EQ(Next(*stream).message().msg_id(), "d");
  // Messages as they become consumable: at their trigger time, not later.
  AckOnStream(*stream, "b");
  EXPECT_TRUE(Next(*stream).has_acked());
  ASSERT_TRUE(Send("later", 1'000).ok());
  sched_.Advance(Millis(1'000));
  EXPECT_EQ(Next(*stream).message().msg_id(), "later");
}

TEST_P(GrpcEnginesTest, AStreamWithMuchCreditGetsEveryMessageOnceBeyondTheClientsWindow) {
  constexpr int kMessages = 600;  // 600 x ~250 bytes: beyond HTTP/2's initial 64 KiB window
  auto stream = Subscribe("t", kMessages, 30'000);
  for (int first = 0; first < kMessages; first += 200) SendMany(first, 200, std::string(200, 'x'));
  std::set<std::string> got;
  for (int i = 0; i < kMessages; ++i) got.insert(Next(*stream).message().msg_id());
  EXPECT_EQ(got.size(), static_cast<size_t>(kMessages));
  EXPECT_EQ(Get("m0").status(), 3);  // held by the stream
}

TEST_P(GrpcEnginesTest, ABrokenStreamLeavesItsUnackedMessagesToTheirAckDeadline) {
  auto first = Subscribe("t", 10, 5'000);
  ASSERT_TRUE(Send("a", 0).ok());
  EXPECT_EQ(Next(*first).message().msg_id(), "a");
  first->ctx.TryCancel();  // the client's connection breaks
  first.reset();
  while (server_->streams() != 0) std::this_thread::yield();  // the server has seen it
  auto next = Subscribe("t", 10, 5'000);
  sched_.Advance(Millis(4'999));
  EXPECT_EQ(Get("a").status(), 3);  // still being consumed
  sched_.Advance(Millis(1));
  v1::ConsumeResponse again = Next(*next);
  EXPECT_EQ(again.message().msg_id(), "a");
  EXPECT_EQ(again.message().retry(), 2);  // its second delivery
}

TEST_P(GrpcEnginesTest, ABadRequestOnTheStreamEndsItWithTheSentence) {
  struct Case {
    std::string topic;
    int credit;
    const char* sentence;
  };
  for (const Case& c :
       {Case{"", 1, "topic is empty"}, Case{"t", 0, "credit must be at least 1, got 0"}}) {
    auto stream = Subscribe(c.topic, c.credit, 1'000);
    v1::ConsumeResponse r;
    EXPECT_FALSE(stream->rw->Read(&r));
    grpc::Status s = stream->rw->Finish();
    EXPECT_EQ(s.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
    EXPECT_EQ(s.error_message(), c.sentence);
  }
  Stream s;
  s.rw = stub_->Consume(&s.ctx);
  v1::ConsumeRequest ack;
  ack.mutable_ack()->add_ack("a");
  ASSERT_TRUE(s.rw->Write(ack));
  v1::ConsumeResponse r;
  EXPECT_FALSE(s.rw->Read(&r));
  EXPECT_EQ(s.rw->Finish().error_message(),
            "the first request of a Consume stream must be a subscribe");
}

TEST_P(GrpcEnginesTest, AStreamPastItsDeadlineEndsAndTakesNothingMore) {
  auto stream = Subscribe("t", 2, 5'000, milliseconds(300));
  ASSERT_TRUE(Send("a", 0).ok());
  EXPECT_EQ(Next(*stream).message().msg_id(), "a");
  v1::ConsumeResponse r;
  EXPECT_FALSE(stream->rw->Read(&r));
  EXPECT_EQ(stream->rw->Finish().error_code(), grpc::StatusCode::DEADLINE_EXCEEDED);
  while (server_->streams() != 0) std::this_thread::yield();  // the server has ended it
  ASSERT_TRUE(Send("b", 0).ok());
  EXPECT_EQ(Get("b").status(), 2);  // ready: the stream, credit left, took nothing more
  EXPECT_EQ(Get("a").status(), 3);  // sent, not acked: it waits for its ack deadline
  sched_.Advance(Millis(5'000));
  EXPECT_EQ(Get("a").status(), 2);
}

TEST_P(GrpcEnginesTest, ARequestOnTheStreamBeyondTheLimitEndsItWithResourceExhausted) {
  auto stream = Subscribe("t", 1, 1'000);
  while (service_->long_polls().parked() == 0) std::this_thread::yield();  // subscribed
  v1::ConsumeRequest ack;
  ack.mutable_ack()->add_ack(std::string(kMaxMsgBytes + kEnvelopeBytes + 1, 'x'));
  stream->rw->Write(ack);  // may fail once the server has refused it
  v1::ConsumeResponse r;
  EXPECT_FALSE(stream->rw->Read(&r));
  EXPECT_EQ(stream->rw->Finish().error_code(), grpc::StatusCode::RESOURCE_EXHAUSTED);
}

TEST(GrpcTimeoutTest, EveryUnitOfGrpcTimeoutIsReadAndAnythingElseIsRefused) {
  using std::chrono::nanoseconds;
  EXPECT_EQ(ParseGrpcTimeout("1H"), nanoseconds(std::chrono::hours(1)));
  EXPECT_EQ(ParseGrpcTimeout("2M"), nanoseconds(std::chrono::minutes(2)));
  EXPECT_EQ(ParseGrpcTimeout("5S"), nanoseconds(seconds(5)));
  EXPECT_EQ(ParseGrpcTimeout("300m"), nanoseconds(milliseconds(300)));
  EXPECT_EQ(ParseGrpcTimeout("100u"), nanoseconds(std::chrono::microseconds(100)));
  EXPECT_EQ(ParseGrpcTimeout("20n"), nanoseconds(20));
  EXPECT_EQ(ParseGrpcTimeout("99999999S"), nanoseconds(seconds(99'999'999)));
  for (const char* bad : {"", "S", "5", "5s", "-5S", "5 S", "123456789S", "1.5S"}) {
    EXPECT_EQ(ParseGrpcTimeout(bad), std::nullopt) << bad;
  }
}

TEST_P(GrpcEnginesTest, AWaitingPullPastItsDeadlineTakesNothing) {
  v1::PullRequest req;
  req.set_topic("t");
  req.set_wait_millis(60'000);
  v1::PullResponse resp;
  grpc::ClientContext ctx;
  ctx.set_deadline(In(milliseconds(200)));
  EXPECT_EQ(stub_->Pull(&ctx, req, &resp).error_code(), grpc::StatusCode::DEADLINE_EXCEEDED);
  ASSERT_TRUE(Send("a", 0).ok());
  v1::PullRequest now;
  now.set_topic("t");
  grpc::ClientContext ctx2;
  ASSERT_TRUE(stub_->Pull(&ctx2, now, &resp).ok());
  ASSERT_EQ(resp.messages_size(), 1);
  EXPECT_EQ(resp.messages(0).retry(), 1);  // its first delivery: the cancelled poll took nothing
  // A waiting Pull answered as the message becomes consumable.
  ASSERT_TRUE(Send("b", 2'000).ok());
  grpc::ClientContext ctx3;
  ctx3.set_deadline(In(seconds(10)));
  v1::PullResponse waited;
  grpc::CompletionQueue cq;
  auto call = stub_->AsyncPull(&ctx3, req, &cq);
  grpc::Status st;
  call->Finish(&waited, &st, reinterpret_cast<void*>(1));
  while (service_->long_polls().parked() == 0) std::this_thread::yield();
  sched_.Advance(Millis(2'000));
  void* tag = nullptr;
  bool ok = false;
  ASSERT_TRUE(cq.Next(&tag, &ok));
  ASSERT_TRUE(st.ok()) << st.error_message();
  ASSERT_EQ(waited.messages_size(), 1);
  EXPECT_EQ(waited.messages(0).msg_id(), "b");
}

// One Consume stream on the client's callback API (no thread of its own): subscribes, counts
// the messages it receives, never acks. gRPC calls into the reactor until OnDone, so destroying
// it cancels the stream and waits for OnDone: a test whose ASSERT fails before the streams end
// (the vector of consumers goes out of scope first) then fails without a use-after-free.
class CountingConsumer : public grpc::ClientBidiReactor<v1::ConsumeRequest, v1::ConsumeResponse> {
 public:
  CountingConsumer(v1::DelayQueue::Stub* stub, int credit) {
    sub_.mutable_subscribe()->set_topic("many");
    sub_.mutable_subscribe()->set_credit(credit);
    stub->async()->Consume(&ctx_, this);
    StartWrite(&sub_);
    StartRead(&in_);
    StartCall();
  }
  ~CountingConsumer() override {
    ctx_.TryCancel();
    base::MutexLock lock(mu_);
    while (!done_) done_cv_.Wait(mu_);
  }
  CountingConsumer(const CountingConsumer&) = delete;
  CountingConsumer& operator=(const CountingConsumer&) = delete;
  void OnReadDone(bool ok) override {
    if (!ok) return;
    received_.fetch_add(1);
    StartRead(&in_);
  }
  void OnDone(const grpc::Status& s) override {
    base::MutexLock lock(mu_);
    status_ = s;
    done_ = true;
    done_cv_.SignalAll();
  }
  int received() const { return received_.load(); }
  void Cancel() { ctx_.TryCancel(); }
  bool done() {
    base::MutexLock lock(mu_);
    return done_;
  }

 private:
  grpc::ClientContext ctx_;
  v1::ConsumeRequest sub_;
  v1::ConsumeResponse in_;
  std::atomic<int> received_{0};
  base::Mutex mu_;
  base::CondVar done_cv_;  // signalled by OnDone
  grpc::Status status_ CQ_GUARDED_BY(mu_);
  bool done_ CQ_GUARDED_BY(mu_) = false;
};

// A number of this process's /proc/self/status ("Threads:", "VmRSS:" in KiB); -1: not there.
int64_t ProcessStatus(std::string_view field) {
  std::ifstream status("/proc/self/status");
  std::string line;
  while (std::getline(status, line)) {
    if (line.starts_with(field)) return std::stoll(line.substr(field.size()));
  }
  return -1;
}

TEST_P(GrpcEnginesTest, AThousandStreamsAtOnceEachGetWhatTheirCreditAllowsWithoutAThreadEach) {
  constexpr int kStreams = 1000;
  // A thousand clients (channels, each its own connection) of one stream each.
  std::vector<std::unique_ptr<v1::DelayQueue::Stub>> stubs;
  for (int c = 0; c < kStreams; ++c) {
    grpc::ChannelArguments args;
    args.SetInt("grpc.channel_id", c);  // distinct channels, not one shared subchannel
    stubs.push_back(v1::DelayQueue::NewStub(grpc::CreateCustomChannel(
        "127.0.0.1:" + std::to_string(server_->port()), grpc::InsecureChannelCredentials(), args)));
  }
  const int64_t rss_before = ProcessStatus("VmRSS:");
  std::vector<std::unique_ptr<CountingConsumer>> consumers;
  for (int i = 0; i < kStreams; ++i) {
    consumers.push_back(std::make_unique<CountingConsumer>(stubs[i].get(), 1));
  }
  auto wait_for = [](auto cond) {
    for (int i = 0; i < 20'000 && !cond(); ++i) std::this_thread::sleep_for(milliseconds(1));
    return cond();
  };
  ASSERT_TRUE(wait_for([&] { return service_->long_polls().parked() == kStreams; }))
      << service_->long_polls().parked() << " parked";
  EXPECT_EQ(server_->streams(), static_cast<size_t>(kStreams));
  EXPECT_LT(ProcessStatus("Threads:"), 200);  // the engine's pools, not a thread per stream
  // 1,500 messages: each stream takes one (its credit), the rest stay ready.
  v1::SendBatchRequest batch;
  batch.set_topic("many");
  for (int i = 0; i < 1'500; ++i) {
    v1::SendRequest* m = batch.add_msgs();
    m->set_msg_id("m" + std::to_string(i));
    m->set_msg("x");
    m->set_delay_millis(0);
    if (batch.msgs_size() == 500) {
      grpc::ClientContext ctx;
      v1::SendBatchResponse resp;
      grpc::Status sent = stub_->SendBatch(&ctx, batch, &resp);
      ASSERT_TRUE(sent.ok()) << sent.error_message();
      batch.clear_msgs();
    }
  }
  auto total = [&] {
    int n = 0;
    for (auto& c : consumers) n += c->received();
    return n;
  };
  ASSERT_TRUE(wait_for([&] { return total() == kStreams; })) << total();
  for (auto& c : consumers) EXPECT_EQ(c->received(), 1);
  // Memory: clients and server (this process) about 0.1 MiB per stream with its connection, a
  // message delivered on each; 2 MiB leaves room for sanitizers. The h2 engine once kept a
  // 4 MiB buffer per connection (a DATA frame of the client's MAX_FRAME_SIZE, gRPC's 4 MiB).
  EXPECT_LT(ProcessStatus("VmRSS:") - rss_before, int64_t{2} * 1024 * kStreams);
  v1::TopicRef ref;
  ref.set_topic("many");
  v1::TopicInfoResponse info;
  grpc::ClientContext ctx;
  ASSERT_TRUE(stub_->TopicInfo(&ctx, ref, &info).ok());
  EXPECT_EQ(info.consuming(), kStreams);
  EXPECT_EQ(info.ready(), 500);
  for (auto& c : consumers) c->Cancel();
  ASSERT_TRUE(wait_for([&] {
    for (auto& c : consumers) {
      if (!c->done()) return false;
    }
    return server_->streams() == 0;
  }));
}

TEST_P(GrpcEnginesTest, StreamsEndWithOkAtShutdown) {
  auto stream = Subscribe("t", 1, 1'000);
  while (server_->streams() == 0) std::this_thread::yield();
  server_->EndStreams();
  v1::ConsumeResponse r;
  EXPECT_FALSE(stream->rw->Read(&r));
  EXPECT_TRUE(stream->rw->Finish().ok());
  EXPECT_NE(Scrape().find("cq_grpc_requests_total{method=\"Consume\",code=\"OK\"} 1"),
            std::string::npos);
}

TEST_P(GrpcEnginesTest, ShutdownEndsAStreamWhoseClientStoppedReading) {
  // A client that never reads, with small HTTP/2 windows: the server's writes fill them and one
  // is in flight when the stream is ended; the shutdown's deadline cancels it, the stream ends.
  grpc::ChannelArguments args;
  args.SetInt(GRPC_ARG_HTTP2_BDP_PROBE, 0);
  args.SetInt(GRPC_ARG_HTTP2_STREAM_LOOKAHEAD_BYTES, 8 * 1024);
  auto stalled = v1::DelayQueue::NewStub(grpc::CreateCustomChannel(
      "127.0.0.1:" + std::to_string(server_->port()), grpc::InsecureChannelCredentials(), args));
  constexpr int kMessages = 200;
  grpc::ClientContext ctx;
  auto rw = stalled->Consume(&ctx);
  v1::ConsumeRequest sub;
  sub.mutable_subscribe()->set_topic("t");
  sub.mutable_subscribe()->set_credit(kMessages);
  ASSERT_TRUE(rw->Write(sub));
  for (int first = 0; first < kMessages; first += 50) SendMany(first, 50, std::string(900, 'x'));
  // Every message taken by the stream (180 KB: beyond the windows).
  while (Get("m" + std::to_string(kMessages - 1)).status() != 3) std::this_thread::yield();
  server_->EndStreams();
  service_->Shutdown();
  auto stopped = std::async(std::launch::async, [this] { server_->Shutdown(milliseconds(200)); });
  ASSERT_EQ(stopped.wait_for(seconds(30)), std::future_status::ready)
      << "the server's shutdown waits for the stream forever";
  EXPECT_EQ(server_->streams(), 0u);
  ctx.TryCancel();
}

TEST_P(GrpcEnginesTest, GetMonitorDataAnswersTheLastCompletedIntervalAsGetMonitorDataDoes) {
  grpc::ClientContext empty_ctx;
  v1::MonitorData empty;
  ASSERT_TRUE(stub_->GetMonitorData(&empty_ctx, v1::GetMonitorDataRequest(), &empty).ok());
  EXPECT_EQ(empty.request_stats_list_size(), 0);  // no interval completed yet

  ASSERT_TRUE(Send("a", 0).ok());
  ASSERT_TRUE(Send("b", 0).ok());
  Get("a");
  clock_.Advance(Millis(60'000));  // the interval of the sends completes
  grpc::ClientContext ctx;
  v1::MonitorData data;
  ASSERT_TRUE(stub_->GetMonitorData(&ctx, v1::GetMonitorDataRequest(), &data).ok());
  ASSERT_EQ(data.request_stats_list_size(), 1);
  EXPECT_EQ(data.request_stats_list(0).topic(), "t");
  EXPECT_EQ(data.request_stats_list(0).send_msg(), 2);
  EXPECT_EQ(data.request_stats_list(0).get_msg(), 1);
  EXPECT_EQ(data.request_stats_list(0).pull_msg(), 0);
  EXPECT_NE(Scrape().find("cq_grpc_requests_total{method=\"GetMonitorData\",code=\"OK\"} 2"),
            std::string::npos);
}

// grpc.health.v1.Health/Check for the whole server: SERVING (1) or NOT_SERVING (2).
int HealthStatus(grpc::Channel* channel) {
  grpc::GenericStub stub(channel->shared_from_this());
  grpc::Slice no_bytes("");  // HealthCheckRequest{service: ""}
  grpc::ByteBuffer request(&no_bytes, 1);
  grpc::ByteBuffer response;
  grpc::ClientContext ctx;
  ctx.set_deadline(In(seconds(10)));
  std::promise<grpc::Status> done;
  stub.UnaryCall(&ctx, "/grpc.health.v1.Health/Check", grpc::StubOptions(), &request, &response,
                 [&done](grpc::Status s) { done.set_value(std::move(s)); });
  const grpc::Status status = done.get_future().get();
  EXPECT_TRUE(status.ok()) << status.error_message();
  std::vector<grpc::Slice> slices;
  EXPECT_TRUE(response.Dump(&slices).ok());
  std::string bytes;
  for (const grpc::Slice& sl : slices)
    bytes.append(reinterpret_cast<const char*>(sl.begin()), sl.size());
  // HealthCheckResponse{status}: field 1, varint.
  EXPECT_EQ(bytes.size(), 2u);
  return bytes.size() == 2 && bytes[0] == 0x08 ? bytes[1] : -1;
}

TEST_P(GrpcEnginesTest, TheHealthServiceFollowsTheNodesOnlineSwitch) {
  auto channel = grpc::CreateChannel("127.0.0.1:" + std::to_string(server_->port()),
                                     grpc::InsecureChannelCredentials());
  EXPECT_EQ(HealthStatus(channel.get()), 1);
  service_->SetOnline(false);  // what POST /camellia/health/offline does
  EXPECT_EQ(HealthStatus(channel.get()), 2);
  service_->SetOnline(true);
  EXPECT_EQ(HealthStatus(channel.get()), 1);
}

TEST_P(GrpcEnginesTest, AServerStartedOnAnOfflineNodeIsNotServing) {
  service_->SetOnline(false);
  GrpcOptions g;
  g.host = "127.0.0.1";
  g.port = 0;
  g.engine = GetParam();
  auto started = StartGrpcServer(g, service_.get(), &clock_, &sched_, nullptr);
  ASSERT_TRUE(started.has_value()) << started.error().message();
  auto channel = grpc::CreateChannel("127.0.0.1:" + std::to_string((*started)->port()),
                                     grpc::InsecureChannelCredentials());
  EXPECT_EQ(HealthStatus(channel.get()), 2);
  (*started)->Shutdown(milliseconds(100));
  service_->SetOnline(true);  // the stopped server is no longer told
}

}  // namespace
}  // namespace chronoq::grpc_api
