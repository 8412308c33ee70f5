// The workloads over the gRPC API with the bench's own HTTP/2 client (h2_grpc_client.h: plain
// h2c, or TLS with ALPN h2 when --server is https://), the default of `--grpc-client`; messages are
// the C++ generated from the proto.
//   produce --grpc: Send (or SendBatch with --batch) on --connections connections of one epoll
//     thread, --calls-per-connection calls in flight on each (HTTP/2 streams).
//   e2e --grpc: HTTP producers as in e2e (LoadLoop, this thread); the consumers are Consume
//     streams (credit --batch) on a thread of their own, one connection each, acking on the
//     stream the messages of each DATA frame together; lateness as in e2e.
#include <fmt/format.h>

#include <atomic>
#include <random>
#include <thread>

#include "bench/h2_grpc_client.h"
#include "bench/sessions.h"
#include "bench/workloads.h"
#include "chronoq/v1/delay_queue.pb.h"

namespace chronoq::bench {
namespace {

using std::chrono::duration;

constexpr std::string_view kSend = "/chronoq.v1.DelayQueue/Send";
constexpr std::string_view kSendBatch = "/chronoq.v1.DelayQueue/SendBatch";
constexpr std::string_view kConsume = "/chronoq.v1.DelayQueue/Consume";

// The gRPC server's endpoint from --grpc's HOST:PORT: plain h2c, or TLS (h2 by ALPN) when
// --server is https://, with the same --ca-file, --cert-file and --key-file.
Result<client::Endpoint> GrpcEndpoint(const CommonOptions& c, const std::string& address) {
  Result<client::Endpoint> ep =
      client::ParseServerUrl((c.endpoint.tls ? "https://" : "http://") + address);
  if (ep.has_value()) ep->tls_options = c.endpoint.tls_options;
  return ep;
}

std::string Protocol(const CommonOptions& c, const std::string& address) {
  return (c.endpoint.tls ? "grpc over tls " : "grpc ") + address + " (h2 client)";
}

std::string Authorization(const CommonOptions& c) {
  return c.token.empty() ? std::string() : "Bearer " + c.token;
}

// What the Send calls of a produce run share (all on the loop's thread).
struct H2Produce {
  const ProduceOptions* o = nullptr;
  GrpcH2Loop* loop = nullptr;
  std::mt19937_64 rng{42};
  v1::SendRequest send;        // topic and payload set once; the delay per call
  v1::SendBatchRequest batch;  // the same, per item
  std::string request;         // the serialized request being started
  int64_t next = 0;            // next message index
  int64_t ok = 0;
  int64_t failed = 0;
  std::string first_failure;
  Histogram latency;

  int64_t Delay() {
    int64_t delay = o->delay_min_ms;
    if (o->delay_max_ms > delay) {
      delay += static_cast<int64_t>(rng() % static_cast<uint64_t>(o->delay_max_ms - delay + 1));
    }
    return delay;
  }
  void Fail(int64_t items, std::string why) {
    failed += items;
    if (first_failure.empty()) first_failure = std::move(why);
  }
};

// One call in flight at a time; a connection carries --calls-per-connection of them.
class SendCall final : public GrpcCall {
 public:
  SendCall(H2Produce* st, int conn) : st_(st), conn_(conn) {}

  // Starts the next call; false when every message is sent (or the connection is gone).
  bool Next() {
    const ProduceOptions& o = *st_->o;
    const int64_t n = std::max(1, o.batch);
    if (st_->next >= o.count) return false;
    in_request_ = std::min(n, o.count - st_->next);
    st_->next += in_request_;
    if (o.batch > 1) {
      v1::SendBatchRequest& b = st_->batch;
      while (b.msgs_size() > in_request_) b.mutable_msgs()->RemoveLast();
      while (b.msgs_size() < in_request_) b.add_msgs()->set_msg(st_->send.msg());
      for (v1::SendRequest& m : *b.mutable_msgs()) m.set_delay_millis(st_->Delay());
      b.SerializeToString(&st_->request);
    } else {
      st_->send.set_delay_millis(st_->Delay());
      st_->send.SerializeToString(&st_->request);
    }
    answer_.Clear();
    answered_ = false;
    start_ = SteadyClock::now();
    if (st_->loop->Start(conn_, o.batch > 1 ? kSendBatch : kSend, st_->request, true, this) < 0) {
      st_->Fail(in_request_, "the connection is gone");
      return false;
    }
    return true;
  }

  void OnMessage(std::string_view bytes) override {
    if (st_->o->batch > 1) answered_ = answer_.ParseFromArray(bytes.data(), bytes.size());
  }

  void OnClose(int status, std::string_view message) override {
    st_->latency.Record(
        std::chrono::duration_cast<std::chrono::microseconds>(SteadyClock::now() - start_).count());
    if (status != 0) {
      st_->Fail(in_request_, fmt::format("{} {}", status, message));
    } else if (st_->o->batch > 1) {
      int64_t items_failed = answered_ ? 0 : in_request_;
      for (const v1::ItemResult& r : answer_.results()) {
        if (r.code() == 0) continue;
        ++items_failed;
        if (st_->first_failure.empty())
          st_->first_failure = fmt::format("{} {}", r.code(), r.msg());
      }
      st_->ok += in_request_ - items_failed;
      st_->failed += items_failed;
    } else {
      st_->ok += in_request_;
    }
    Next();
  }

 private:
  H2Produce* st_;
  int conn_;
  int64_t in_request_ = 1;
  v1::SendBatchResponse answer_;
  bool answered_ = false;
  SteadyClock::time_point start_;
};

// What the Consume streams of an e2e run share: ConsumeState on the consumers' thread; the
// counts the other thread reads, atomic.
struct H2Consume {
  ConsumeState cs;
  GrpcH2Loop* loop = nullptr;
  bool ack = true;
  std::atomic<int64_t> received{0};
  std::atomic<bool> stop{false};  // set by the producers' thread when the run is over early
  bool finished() const {
    return cs.unique >= cs.expected && (!ack || cs.acked + cs.ack_failures >= cs.unique);
  }
};

// One Consume stream: records each message, acks the messages of a DATA frame in one request.
class ConsumeCall final : public GrpcCall {
 public:
  ConsumeCall(H2Consume* st, int conn) : st_(st), conn_(conn) {}

  void Start(const std::string& topic, int credit) {
    v1::ConsumeRequest first;
    first.mutable_subscribe()->set_topic(topic);
    first.mutable_subscribe()->set_credit(credit);
    first.mutable_subscribe()->set_ack_timeout_millis(60'000);
    stream_ = st_->loop->Start(conn_, kConsume, first.SerializeAsString(), false, this);
    open_ = stream_ > 0;
    if (!open_) Failed("the connection is gone");
  }
  void Cancel() {
    if (open_) st_->loop->Cancel(conn_, stream_);
  }

  void OnMessage(std::string_view bytes) override {
    if (!in_.ParseFromArray(bytes.data(), static_cast<int>(bytes.size()))) return;
    ConsumeState& cs = st_->cs;
    if (in_.has_message()) {
      const v1::Message& m = in_.message();
      if (RecordDelivery(cs, m.msg_id(), m.trigger_time(), NowEpochMicros()) && st_->ack) {
        out_.mutable_ack()->add_ack(m.msg_id());
      }
      st_->received.store(cs.unique, std::memory_order_relaxed);
    } else if (in_.has_acked()) {
      int64_t ok = 0;
      for (const v1::AckResult& r : in_.acked().results()) ok += r.code() == 0;
      cs.acked += ok;
      cs.ack_failures += in_.acked().results_size() - ok;
    }
  }

  // After the messages of one DATA frame: their acks, in one request.
  void OnReadBatch() override {
    if (!out_.has_ack() || out_.ack().ack_size() == 0) return;
    st_->loop->Write(conn_, stream_, out_.SerializeAsString());
    out_.mutable_ack()->clear_ack();
  }

  void OnClose(int status, std::string_view message) override {
    open_ = false;
    if (status != 0 && !st_->finished() && !st_->stop) {
      Failed(fmt::format("Consume ended: {} {}", status, message));
    }
  }

 private:
  void Failed(std::string why) {
    ++st_->cs.pull_failures;
    if (st_->cs.first_failure.empty()) st_->cs.first_failure = std::move(why);
  }

  H2Consume* st_;
  int conn_;
  int32_t stream_ = -1;
  bool open_ = false;
  v1::ConsumeResponse in_;
  v1::ConsumeRequest out_;
};

}  // namespace

Result<Report> RunProduceGrpcH2(const CommonOptions& c, const ProduceOptions& o) {
  Result<client::Endpoint> ep = GrpcEndpoint(c, o.grpc);
  if (!ep.has_value()) {
    return Status(Errc::kInvalidArgument, "--grpc: " + ep.error().message());
  }
  GrpcH2Loop loop(*ep, Authorization(c));
  H2Produce st;
  st.o = &o;
  st.loop = &loop;
  const std::string topic = c.topic.empty() ? FreshTopic("produce") : c.topic;
  std::mt19937_64 rng(42);
  st.send.set_topic(topic);
  st.send.set_msg(RandomPayload(o.payload_bytes, rng));
  st.batch.set_topic(topic);
  Report r("produce");
  r.Str("protocol", Protocol(c, o.grpc));
  r.Str("topic", topic);
  r.Int("connections", o.connections);
  r.Int("calls_per_connection", o.calls_per_connection);
  r.Int("batch", o.batch);
  r.Int("payload_bytes", static_cast<int64_t>(o.payload_bytes));
  CQ_RETURN_IF_ERROR(loop.Connect(o.connections));
  std::vector<std::unique_ptr<SendCall>> calls;
  for (int i = 0; i < o.connections; ++i) {
    for (int k = 0; k < o.calls_per_connection; ++k) {
      calls.push_back(std::make_unique<SendCall>(&st, i));
    }
  }
  CpuMeter cpu;
  const auto t0 = SteadyClock::now();
  for (auto& call : calls) call->Next();
  Progress progress("produce", c.progress);
  loop.Run(
      SteadyClock::time_point::max(), [&] { return st.next >= o.count && loop.open_calls() == 0; },
      [&] { progress.Update(st.ok + st.failed, o.count); });
  progress.Finish();
  const double secs = duration<double>(SteadyClock::now() - t0).count();
  // Messages never sent (every connection failed) count as failed.
  st.failed += o.count - st.next;
  r.Int("sent_ok", st.ok);
  r.Int("failed", st.failed);
  r.Num("elapsed", secs, "s");
  r.Num("throughput", secs > 0 ? static_cast<double>(st.ok) / secs : 0, "msgs/s");
  r.Latency("send_latency", st.latency);
  if (loop.connection_errors() > 0) r.Int("connection_errors", loop.connection_errors());
  if (!st.first_failure.empty()) r.Warn("first failure: " + st.first_failure);
  cpu.Report(r, st.ok);
  return r;
}

Result<Report> RunE2eGrpcH2(const CommonOptions& c, const E2eOptions& o) {
  Result<client::Endpoint> ep = GrpcEndpoint(c, o.grpc);
  if (!ep.has_value()) {
    return Status(Errc::kInvalidArgument, "--grpc: " + ep.error().message());
  }
  std::string topic = c.topic.empty() ? FreshTopic("e2e") : c.topic;
  std::string prefix = RunPrefix("e2e");
  ProduceState ps;
  ps.endpoint = c.endpoint;
  SetUpE2eSends(ps, topic, prefix, o);
  GrpcH2Loop consumers_loop(*ep, Authorization(c));
  H2Consume gc;
  gc.loop = &consumers_loop;
  gc.ack = o.ack;
  gc.cs.topic = topic;
  gc.cs.Expect(prefix, o.count);
  Report r = E2eReport(topic, o);
  r.Str("protocol", "consume over " + Protocol(c, o.grpc) + ", produce over http");
  r.Int("credit", o.batch);
  CQ_RETURN_IF_ERROR(consumers_loop.Connect(o.consumers));
  std::vector<std::unique_ptr<ConsumeCall>> consumers;
  for (int i = 0; i < o.consumers; ++i) {
    consumers.push_back(std::make_unique<ConsumeCall>(&gc, i));
    consumers.back()->Start(topic, o.batch);
  }
  CpuMeter cpu;
  const auto t0 = SteadyClock::now();
  const auto deadline = E2eDeadline(o);
  // The consumers on a thread of their own until every message is delivered (and acked).
  std::thread consuming([&] {
    consumers_loop.Run(
        deadline, [&] { return gc.stop || gc.finished(); }, nullptr);
    gc.stop = true;
  });
  // The producers, on this thread; then wait for the deliveries.
  LoadLoop loop(c.endpoint);
  std::vector<std::unique_ptr<ProducerSession>> producers;
  Status connected = ConnectProducers(loop, ps, o.producers, &producers);
  Progress progress("e2e", c.progress);
  auto received = [&] { return gc.received.load(std::memory_order_relaxed); };
  if (connected.ok()) {
    ps.start = SteadyClock::now();
    loop.Run(deadline, nullptr, [&] { progress.Update(received(), o.count); });
    while (!gc.stop && SteadyClock::now() < deadline) {
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
      progress.Update(received(), o.count);
    }
  }
  gc.stop = true;
  consuming.join();
  progress.Finish();
  CQ_RETURN_IF_ERROR(connected);
  const double secs = duration<double>(SteadyClock::now() - t0).count();
  AddE2eFigures(r, ps, gc.cs, secs);
  cpu.Report(r);
  return r;
}

}  // namespace chronoq::bench
