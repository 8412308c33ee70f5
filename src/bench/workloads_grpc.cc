// The workloads over the gRPC API; the only file of the bench tool that includes gRPC. Calls run
// on gRPC's callback API (gRPC's threads).
// Lifetimes: no gRPC thread ever drops the last reference to a channel (destroying a channel
// there can release gRPC's callback queue, whose threads would then join themselves: the push
// transport's double free, src/push/grpc_transport.cc). The callbacks capture `this` only; the
// stubs (each holding its channel) and the ClientContexts (which refer to their channel too) are
// destroyed by the Run function on its own thread, once the last completion has been counted
// (`running`, `open`); a completion replaces its connection's previous ClientContext while the
// stub still holds the channel.
//   produce --grpc: Send (or SendBatch with --batch), with the same figures as over HTTP. Each
//     "connection" is a channel of its own (its own TCP connection) with one call in flight, as
//     each HTTP connection has one request in flight, so that the two protocols are compared on
//     the same connections; --calls-per-connection=N keeps N calls in flight on each (HTTP/2
//     streams of one connection).
//   e2e --grpc: HTTP producers as in e2e; the consumers are Consume streams (credit --batch),
//     each on its own channel, acking on the stream what they receive; lateness as in e2e.
#include <fmt/format.h>
#include <grpcpp/grpcpp.h>

#include <atomic>
#include <condition_variable>
#include <fstream>
#include <memory>
#include <mutex>
#include <random>
#include <sstream>

#include "bench/sessions.h"
#include "bench/workloads.h"
#include "chronoq/v1/delay_queue.grpc.pb.h"

namespace chronoq::bench {
namespace {

using std::chrono::duration;

// Where the gRPC calls go: plain, or TLS when --server is https:// (with the same --ca-file,
// --cert-file and --key-file).
struct GrpcTarget {
  std::string address;  // --grpc
  std::shared_ptr<grpc::ChannelCredentials> credentials;
};

std::string ReadFileOrEmpty(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

GrpcTarget Target(const CommonOptions& c, const std::string& address) {
  if (!c.endpoint.tls) return {address, grpc::InsecureChannelCredentials()};
  grpc::SslCredentialsOptions o;
  const tls::ClientOptions& t = c.endpoint.tls_options;
  if (!t.ca_file.empty()) o.pem_root_certs = ReadFileOrEmpty(t.ca_file);
  if (!t.cert_file.empty()) {
    o.pem_cert_chain = ReadFileOrEmpty(t.cert_file);
    o.pem_private_key = ReadFileOrEmpty(t.key_file);
  }
  return {address, grpc::SslCredentials(o)};
}

std::shared_ptr<v1::DelayQueue::Stub> NewStub(const GrpcTarget& target, int id) {
  grpc::ChannelArguments args;
  args.SetInt("chronoq.bench.connection", id);  // a channel (and TCP connection) of its own
  return v1::DelayQueue::NewStub(
      grpc::CreateCustomChannel(target.address, target.credentials, args));
}

struct GrpcProduce {
  const ProduceOptions* o = nullptr;
  std::string topic;
  std::string payload;
  std::atomic<int64_t> next{0};  // next message index
  std::atomic<int64_t> ok{0};
  std::atomic<int64_t> failed{0};
  std::mutex mu;
  std::condition_variable all_done;
  int running = 0;            // connections with a call in flight (under mu)
  std::string first_failure;  // under mu
};

// One call in flight at a time on a channel (a connection has --calls-per-connection of them).
class Connection {
 public:
  Connection(GrpcProduce* st, std::shared_ptr<v1::DelayQueue::Stub> stub)
      : st_(st), stub_(std::move(stub)) {}

  // Sends the next request; false when every message is sent.
  bool Next() {
    const int64_t n = std::max(1, st_->o->batch);
    const int64_t first = st_->next.fetch_add(n);
    if (first >= st_->o->count) return false;
    in_request_ = std::min(n, st_->o->count - first);
    ctx_ = std::make_unique<grpc::ClientContext>();
    ctx_->set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(30));
    start_ = SteadyClock::now();
    if (st_->o->batch > 1) {
      batch_.Clear();
      batch_.set_topic(st_->topic);
      for (int64_t i = 0; i < in_request_; ++i) Fill(batch_.add_msgs());
      batch_resp_.Clear();
      stub_->async()->SendBatch(ctx_.get(), &batch_, &batch_resp_,
                                [this](grpc::Status s) { Done(std::move(s)); });
    } else {
      Fill(&send_);
      send_.set_topic(st_->topic);
      stub_->async()->Send(ctx_.get(), &send_, &send_resp_,
                           [this](grpc::Status s) { Done(std::move(s)); });
    }
    return true;
  }

  const Histogram& latency() const { return latency_; }

 private:
  void Fill(v1::SendRequest* m) {
    m->set_msg(st_->payload);
    int64_t delay = st_->o->delay_min_ms;
    if (st_->o->delay_max_ms > delay) {
      delay += static_cast<int64_t>(rng_() % (st_->o->delay_max_ms - delay + 1));
    }
    m->set_delay_millis(delay);
  }

  void Done(grpc::Status s) {
    latency_.Record(
        std::chrono::duration_cast<std::chrono::microseconds>(SteadyClock::now() - start_).count());
    int64_t items_failed = 0;
    std::string why;
    if (!s.ok()) {
      items_failed = in_request_;
      why = fmt::format("{} {}", static_cast<int>(s.error_code()), s.error_message());
    } else if (st_->o->batch > 1) {
      for (const v1::ItemResult& r : batch_resp_.results()) {
        if (r.code() != 0) {
          ++items_failed;
          if (why.empty()) why = fmt::format("{} {}", r.code(), r.msg());
        }
      }
    }
    st_->ok.fetch_add(in_request_ - items_failed);
    st_->failed.fetch_add(items_failed);
    if (!why.empty()) {
      std::lock_guard<std::mutex> lock(st_->mu);
      if (st_->first_failure.empty()) st_->first_failure = why;
    }
    if (Next()) return;
    std::lock_guard<std::mutex> lock(st_->mu);
    if (--st_->running == 0) st_->all_done.notify_all();
  }

  GrpcProduce* st_;
  std::shared_ptr<v1::DelayQueue::Stub> stub_;
  std::unique_ptr<grpc::ClientContext> ctx_;
  v1::SendRequest send_;
  v1::SendResponse send_resp_;
  v1::SendBatchRequest batch_;
  v1::SendBatchResponse batch_resp_;
  int64_t in_request_ = 1;
  SteadyClock::time_point start_;
  std::mt19937_64 rng_{42};
  Histogram latency_;  // only this connection's completions touch it, one at a time
};

// What the Consume streams of an e2e run share.
struct GrpcConsume {
  std::mutex mu;
  ConsumeState cs;  // under mu
  std::condition_variable changed;
  int open = 0;  // streams not done (under mu)
};

// One Consume stream: reads messages, acks them on the stream (the ids that arrive while an ack
// is being written go together in the next one).
class Consumer final : public grpc::ClientBidiReactor<v1::ConsumeRequest, v1::ConsumeResponse> {
 public:
  Consumer(GrpcConsume* st, const GrpcTarget& target, int id, const std::string& topic, int credit,
           bool ack)
      : st_(st), ack_(ack), stub_(NewStub(target, id)) {
    out_.mutable_subscribe()->set_topic(topic);
    out_.mutable_subscribe()->set_credit(credit);
    out_.mutable_subscribe()->set_ack_timeout_millis(60'000);
    writing_ = true;
    stub_->async()->Consume(&ctx_, this);
    StartWrite(&out_);
    StartRead(&in_);
    StartCall();
  }

  void OnReadDone(bool ok) override {
    if (!ok) return;
    if (in_.has_message()) {
      const int64_t now_us = NowEpochMicros();
      bool own = false;
      {
        std::lock_guard<std::mutex> lock(st_->mu);
        own = RecordDelivery(st_->cs, in_.message().msg_id(), in_.message().trigger_time(), now_us);
        if (st_->cs.unique >= st_->cs.expected) st_->changed.notify_all();
      }
      if (own && ack_) {
        std::lock_guard<std::mutex> lock(wmu_);
        pending_.push_back(in_.message().msg_id());
      }
      MaybeWrite();
    } else if (in_.has_acked()) {
      int64_t ok_n = 0;
      for (const v1::AckResult& r : in_.acked().results()) ok_n += r.code() == 0;
      std::lock_guard<std::mutex> lock(st_->mu);
      st_->cs.acked += ok_n;
      st_->cs.ack_failures += in_.acked().results_size() - ok_n;
      st_->changed.notify_all();
    }
    StartRead(&in_);
  }

  void OnWriteDone(bool ok) override {
    {
      std::lock_guard<std::mutex> lock(wmu_);
      writing_ = false;
    }
    if (ok) MaybeWrite();
  }

  void OnDone(const grpc::Status& s) override {
    std::lock_guard<std::mutex> lock(st_->mu);
    if (!s.ok() && s.error_code() != grpc::StatusCode::CANCELLED) {
      ++st_->cs.pull_failures;
      if (st_->cs.first_failure.empty()) st_->cs.first_failure = s.error_message();
    }
    --st_->open;
    st_->changed.notify_all();
  }

  void Cancel() { ctx_.TryCancel(); }

 private:
  void MaybeWrite() {
    {
      std::lock_guard<std::mutex> lock(wmu_);
      if (writing_ || pending_.empty()) return;
      writing_ = true;
      out_.Clear();
      for (std::string& id : pending_) out_.mutable_ack()->add_ack(std::move(id));
      pending_.clear();
    }
    StartWrite(&out_);
  }

  GrpcConsume* st_;
  const bool ack_;
  std::shared_ptr<v1::DelayQueue::Stub> stub_;
  grpc::ClientContext ctx_;
  v1::ConsumeResponse in_;
  std::mutex wmu_;
  v1::ConsumeRequest out_;  // being written while writing_
  bool writing_ = false;
  std::vector<std::string> pending_;
};

}  // namespace

Result<Report> RunE2eGrpc(const CommonOptions& c, const E2eOptions& o) {
  std::string topic = c.topic.empty() ? FreshTopic("e2e") : c.topic;
  std::string prefix = RunPrefix("e2e");
  ProduceState ps;
  ps.endpoint = c.endpoint;
  SetUpE2eSends(ps, topic, prefix, o);
  GrpcConsume gc;
  gc.cs.topic = topic;
  gc.cs.Expect(prefix, o.count);
  Report r = E2eReport(topic, o);
  r.Str("protocol", "consume over grpc " + o.grpc + ", produce over http");
  r.Int("credit", o.batch);
  CpuMeter cpu;
  const auto t0 = SteadyClock::now();
  std::vector<std::unique_ptr<Consumer>> consumers;
  gc.open = o.consumers;
  for (int i = 0; i < o.consumers; ++i) {
    consumers.push_back(
        std::make_unique<Consumer>(&gc, Target(c, o.grpc), i, topic, o.batch, o.ack));
  }
  const auto deadline = E2eDeadline(o);
  // The producers, on this thread; then wait for the deliveries.
  LoadLoop loop(c.endpoint);
  std::vector<std::unique_ptr<ProducerSession>> producers;
  Status connected = ConnectProducers(loop, ps, o.producers, &producers);
  Progress progress("e2e", c.progress);
  auto received = [&] {
    std::lock_guard<std::mutex> lock(gc.mu);
    return gc.cs.unique;
  };
  if (connected.ok()) {
    ps.start = SteadyClock::now();
    loop.Run(deadline, nullptr, [&] { progress.Update(received(), o.count); });
    std::unique_lock<std::mutex> lock(gc.mu);
    // Every message delivered, and (acking) every ack answered.
    auto finished = [&] {
      return gc.cs.unique >= gc.cs.expected &&
             (!o.ack || gc.cs.acked + gc.cs.ack_failures >= gc.cs.unique);
    };
    while (!finished() && gc.open > 0 && SteadyClock::now() < deadline) {
      gc.changed.wait_for(lock, std::chrono::milliseconds(250));
      lock.unlock();
      progress.Update(received(), o.count);
      lock.lock();
    }
  }
  progress.Finish();
  for (auto& consumer : consumers) consumer->Cancel();
  {
    std::unique_lock<std::mutex> lock(gc.mu);
    gc.changed.wait(lock, [&] { return gc.open == 0; });
  }
  CQ_RETURN_IF_ERROR(connected);
  const double secs = duration<double>(SteadyClock::now() - t0).count();
  AddE2eFigures(r, ps, gc.cs, secs);
  cpu.Report(r);
  return r;
}

Result<Report> RunProduceGrpc(const CommonOptions& c, const ProduceOptions& o) {
  GrpcProduce st;
  st.o = &o;
  st.topic = c.topic.empty() ? FreshTopic("produce") : c.topic;
  std::mt19937_64 rng(42);
  st.payload = RandomPayload(o.payload_bytes, rng);
  Report r("produce");
  r.Str("protocol", (c.endpoint.tls ? "grpc over tls " : "grpc ") + o.grpc);
  r.Str("topic", st.topic);
  r.Int("connections", o.connections);
  r.Int("calls_per_connection", o.calls_per_connection);
  r.Int("batch", o.batch);
  r.Int("payload_bytes", static_cast<int64_t>(o.payload_bytes));
  std::vector<std::unique_ptr<Connection>> conns;
  for (int i = 0; i < o.connections; ++i) {
    std::shared_ptr<v1::DelayQueue::Stub> stub = NewStub(Target(c, o.grpc), i);
    for (int k = 0; k < o.calls_per_connection; ++k) {
      conns.push_back(std::make_unique<Connection>(&st, stub));
    }
  }
  CpuMeter cpu;
  const auto t0 = SteadyClock::now();
  {
    std::lock_guard<std::mutex> lock(st.mu);
    st.running = static_cast<int>(conns.size());
  }
  for (auto& conn : conns) {
    if (!conn->Next()) {
      std::lock_guard<std::mutex> lock(st.mu);
      --st.running;
    }
  }
  Progress progress("produce", c.progress);
  {
    std::unique_lock<std::mutex> lock(st.mu);
    while (!st.all_done.wait_for(lock, std::chrono::milliseconds(200),
                                 [&] { return st.running == 0; })) {
      lock.unlock();
      progress.Update(st.ok + st.failed, o.count);
      lock.lock();
    }
  }
  progress.Finish();
  const double secs = duration<double>(SteadyClock::now() - t0).count();
  Histogram latency;
  for (auto& conn : conns) latency.Merge(conn->latency());
  r.Int("sent_ok", st.ok);
  r.Int("failed", st.failed);
  r.Num("elapsed", secs, "s");
  r.Num("throughput", secs > 0 ? static_cast<double>(st.ok) / secs : 0, "msgs/s");
  r.Latency("send_latency", latency);
  if (!st.first_failure.empty()) r.Warn("first failure: " + st.first_failure);
  cpu.Report(r, st.ok);
  return r;
}

}  // namespace chronoq::bench
