// produce --grpc: the produce workload over the gRPC API (Send, or SendBatch with --batch), with
// the same figures as over HTTP. Each "connection" is a channel of its own (its own TCP
// connection) with one call in flight, as each HTTP connection has one request in flight, so
// that the two protocols are compared on the same connections. The calls run on gRPC's callback
// API (gRPC's threads); the only file of the bench tool that includes gRPC.
#include <fmt/format.h>
#include <grpcpp/grpcpp.h>

#include <atomic>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <random>

#include "bench/workloads.h"
#include "chronoq/v1/delay_queue.grpc.pb.h"

namespace chronoq::bench {
namespace {

using std::chrono::duration;

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

// One connection: a channel and its call in flight.
class Connection {
 public:
  Connection(GrpcProduce* st, const std::string& target, int id) : st_(st) {
    grpc::ChannelArguments args;
    args.SetInt("chronoq.bench.connection", id);  // a channel (and TCP connection) of its own
    stub_ = v1::DelayQueue::NewStub(
        grpc::CreateCustomChannel(target, grpc::InsecureChannelCredentials(), args));
  }

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
  std::unique_ptr<v1::DelayQueue::Stub> stub_;
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

}  // namespace

Result<Report> RunProduceGrpc(const CommonOptions& c, const ProduceOptions& o) {
  GrpcProduce st;
  st.o = &o;
  st.topic = c.topic.empty() ? FreshTopic("produce") : c.topic;
  std::mt19937_64 rng(42);
  st.payload = RandomPayload(o.payload_bytes, rng);
  Report r("produce");
  r.Str("protocol", "grpc " + o.grpc);
  r.Str("topic", st.topic);
  r.Int("connections", o.connections);
  r.Int("batch", o.batch);
  r.Int("payload_bytes", static_cast<int64_t>(o.payload_bytes));
  std::vector<std::unique_ptr<Connection>> conns;
  for (int i = 0; i < o.connections; ++i) {
    conns.push_back(std::make_unique<Connection>(&st, o.grpc, i));
  }
  CpuMeter cpu;
  const auto t0 = SteadyClock::now();
  {
    std::lock_guard<std::mutex> lock(st.mu);
    st.running = o.connections;
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
  cpu.Report(r);
  return r;
}

}  // namespace chronoq::bench
