// produce and e2e against beanstalkd (`--beanstalkd=HOST:PORT`): the same load loop, connections
// and payloads as over HTTP, in beanstalkd's text protocol (its protocol.txt):
//   use <tube>                      -> USING <tube>
//   put <pri> <delay-s> <ttr> <n>   -> INSERTED <id>      (then <n> bytes of payload and \r\n)
//   watch <tube>, ignore default    -> WATCHING <count>
//   reserve-with-timeout <s>        -> RESERVED <id> <n>\r\n<payload> | TIMED_OUT
//   delete <id>                     -> DELETED
// beanstalkd's delays are whole seconds: the e2e delays are drawn from the whole seconds in
// [--delay-min-ms, --delay-max-ms]. Each e2e job's payload begins with "<msgId> <trigger-ms> " so
// that the consumer computes lateness as over HTTP (receive time - trigger time, the trigger time
// being the put's send time plus its delay).
#include <fmt/format.h>

#include <charconv>
#include <memory>

#include "bench/sessions.h"
#include "bench/workloads.h"

namespace chronoq::bench {
namespace {

using std::chrono::duration;

constexpr int kStatusOk = 200;
constexpr int kStatusFailed = 500;

bool StartsWith(std::string_view s, std::string_view prefix) { return s.rfind(prefix, 0) == 0; }

// Frames one beanstalkd answer: a line, and for RESERVED its job body (body = the payload, or the
// line without its \r\n). Status 200 for the answers a workload expects, 500 for any other.
size_t ParseBeanstalkAnswer(std::string_view in, int* status, std::string_view* body) {
  size_t eol = in.find("\r\n");
  if (eol == std::string_view::npos) return 0;
  std::string_view line = in.substr(0, eol);
  *status = kStatusOk;
  if (StartsWith(line, "RESERVED ")) {
    size_t sp = line.rfind(' ');
    size_t bytes = 0;
    std::from_chars(line.data() + sp + 1, line.data() + line.size(), bytes);
    size_t total = eol + 2 + bytes + 2;
    if (in.size() < total) return 0;
    *body = in.substr(0, total - 2);  // the line, \r\n, the payload
    return total;
  }
  *body = line;
  if (!StartsWith(line, "INSERTED ") && !StartsWith(line, "USING ") &&
      !StartsWith(line, "WATCHING ") && line != "DELETED" && line != "TIMED_OUT" &&
      line != "DEADLINE_SOON") {
    *status = kStatusFailed;
  }
  return eol + 2;
}

Result<client::Endpoint> ParseHostPort(std::string_view flag, std::string_view value) {
  Result<client::Endpoint> ep = client::ParseServerUrl(value);
  if (!ep.has_value()) {
    return InvalidArgument(fmt::format("--{}: {}", flag, ep.error().message()));
  }
  return ep;
}

// Puts the messages of a ProduceState into `tube`; make_body appends a job's payload and sets
// *delay_s. The first request of each connection is `use <tube>`.
struct BeanstalkSends {
  std::string tube;
  std::function<void(int64_t i, int64_t* delay_s, std::string* payload)> make_job;
};

class BeanstalkProducer final : public Session {
 public:
  BeanstalkProducer(ProduceState* st, const BeanstalkSends* sends) : st_(st), sends_(sends) {}
  size_t ParseAnswer(std::string_view in, int* status, std::string_view* body) override {
    return ParseBeanstalkAnswer(in, status, body);
  }
  Next NextRequest(std::string* out) override {
    if (!used_) {
      out->append(fmt::format("use {}\r\n", sends_->tube));
      return Next::Send();
    }
    if (st_->stop || st_->next >= st_->count) return Next::Done();
    if (st_->rate > 0) {
      auto due = st_->start + std::chrono::duration_cast<SteadyClock::duration>(
                                  duration<double>(st_->next / st_->rate));
      if (due > SteadyClock::now()) return Next::WaitUntil(due);
    }
    payload_.clear();
    int64_t delay_s = 0;
    sends_->make_job(st_->next++, &delay_s, &payload_);
    out->append(fmt::format("put 1024 {} 60 {}\r\n", delay_s, payload_.size()));
    out->append(payload_);
    out->append("\r\n");
    return Next::Send();
  }
  void OnResponse(int status, std::string_view body, std::chrono::microseconds latency) override {
    if (!used_) {
      used_ = true;
      if (status != kStatusOk) Fail(body);
      return;
    }
    st_->latency.Record(latency.count());
    if (status == kStatusOk) {
      ++st_->ok;
    } else {
      Fail(body);
    }
  }
  void OnError(std::string_view what) override { Fail(what); }

 private:
  void Fail(std::string_view what) {
    ++st_->failed;
    if (st_->first_failure.empty()) st_->first_failure = std::string(what.substr(0, 300));
  }

  ProduceState* st_;
  const BeanstalkSends* sends_;
  bool used_ = false;
  std::string payload_;
};

// Watches the tube (and ignores "default"), then reserves one job at a time; the delete of a job
// goes out with the next reserve, in one write ("delete <id>\r\nreserve-with-timeout 1\r\n"),
// so a job costs one round trip as a pulled message does over HTTP.
class BeanstalkConsumer final : public Session {
 public:
  explicit BeanstalkConsumer(ConsumeState* st) : st_(st) {}
  size_t ParseAnswer(std::string_view in, int* status, std::string_view* body) override {
    if (!deleting_) return ParseBeanstalkAnswer(in, status, body);
    int deleted = 0;
    std::string_view first;
    size_t n1 = ParseBeanstalkAnswer(in, &deleted, &first);
    if (n1 == 0) return 0;
    delete_ok_ = deleted == kStatusOk && first == "DELETED";
    if (!reserving_) {
      *status = deleted;
      *body = first;
      return n1;
    }
    size_t n2 = ParseBeanstalkAnswer(in.substr(n1), status, body);
    return n2 == 0 ? 0 : n1 + n2;
  }
  Next NextRequest(std::string* out) override {
    if (step_ == 0) {
      out->append(fmt::format("watch {}\r\n", st_->topic));
      return Next::Send();
    }
    if (step_ == 1) {
      out->append("ignore default\r\n");
      return Next::Send();
    }
    deleting_ = !to_delete_.empty();
    if (deleting_) out->append(fmt::format("delete {}\r\n", to_delete_));
    to_delete_.clear();
    reserving_ = !st_->stop;
    if (reserving_) out->append("reserve-with-timeout 1\r\n");
    return deleting_ || reserving_ ? Next::Send() : Next::Done();
  }
  void OnResponse(int status, std::string_view body, std::chrono::microseconds) override {
    if (step_ < 2) {
      ++step_;
      if (status != kStatusOk) Failure(body);
      return;
    }
    if (deleting_) {
      ++(delete_ok_ ? st_->acked : st_->ack_failures);
      deleting_ = false;
    }
    if (!reserving_) return;
    ++st_->pulls;
    if (status != kStatusOk) {
      Failure(body);
      return;
    }
    if (!StartsWith(body, "RESERVED ")) return;  // TIMED_OUT or DEADLINE_SOON
    int64_t now_us = NowEpochMicros();
    size_t eol = body.find("\r\n");
    std::string_view line = body.substr(0, eol);
    std::string_view job = body.substr(eol + 2);
    // "RESERVED <id> <bytes>", payload "<msgId> <trigger-ms> ..."
    std::string_view rest = line.substr(9);
    std::string_view id = rest.substr(0, rest.find(' '));
    size_t sp1 = job.find(' ');
    size_t sp2 = job.find(' ', sp1 + 1);
    int64_t trigger_ms = 0;
    if (sp1 != std::string_view::npos && sp2 != std::string_view::npos) {
      std::from_chars(job.data() + sp1 + 1, job.data() + sp2, trigger_ms);
    }
    RecordDelivery(*st_, job.substr(0, sp1), trigger_ms, now_us);
    if (st_->ack) to_delete_ = std::string(id);
    if (st_->unique >= st_->expected) st_->stop = true;
  }
  void OnError(std::string_view what) override { Failure(what); }

 private:
  void Failure(std::string_view what) {
    ++st_->pull_failures;
    if (st_->first_failure.empty()) st_->first_failure = std::string(what.substr(0, 300));
  }

  ConsumeState* st_;
  int step_ = 0;  // 0: watch, 1: ignore default, 2: reserving
  std::string to_delete_;
  bool deleting_ = false;   // the request in flight begins with a delete
  bool reserving_ = false;  // the request in flight (ends with) a reserve
  bool delete_ok_ = false;
};

}  // namespace

Result<Report> RunProduceBeanstalkd(const CommonOptions& c, const ProduceOptions& o) {
  CQ_ASSIGN_OR_RETURN(client::Endpoint ep, ParseHostPort("beanstalkd", o.beanstalkd));
  if (o.batch > 1) return InvalidArgument("--batch: beanstalkd has no batch put; use --batch=1");
  BeanstalkSends sends;
  sends.tube = c.topic.empty() ? FreshTopic("produce") : c.topic;
  auto rng = std::make_shared<std::mt19937_64>(42);
  auto payload = std::make_shared<std::string>(RandomPayload(o.payload_bytes, *rng));
  const int64_t min_s = (o.delay_min_ms + 999) / 1000;
  const int64_t max_s = std::max(min_s, o.delay_max_ms / 1000);
  sends.make_job = [=](int64_t, int64_t* delay_s, std::string* job) {
    *delay_s =
        min_s == max_s ? min_s : min_s + static_cast<int64_t>((*rng)() % (max_s - min_s + 1));
    job->append(*payload);
  };
  ProduceState ps;
  ps.endpoint = ep;
  ps.count = o.count;
  ps.rate = o.rate;

  Report r("produce");
  r.Str("protocol", "beanstalkd " + o.beanstalkd);
  r.Str("tube", sends.tube);
  r.Int("connections", o.connections);
  r.Int("payload_bytes", static_cast<int64_t>(o.payload_bytes));
  LoadLoop loop(ep);
  std::vector<std::unique_ptr<BeanstalkProducer>> sessions;
  std::vector<Session*> ptrs;
  for (int i = 0; i < o.connections; ++i) {
    sessions.push_back(std::make_unique<BeanstalkProducer>(&ps, &sends));
    ptrs.push_back(sessions.back().get());
  }
  CQ_RETURN_IF_ERROR(loop.Connect(ptrs));
  CpuMeter cpu;
  Progress progress("produce (beanstalkd)", c.progress);
  ps.start = SteadyClock::now();
  auto t0 = SteadyClock::now();
  loop.Run(SteadyClock::time_point::max(), nullptr, [&] { progress.Update(ps.ok, ps.count); });
  progress.Finish();
  AddProduceFigures(r, ps, duration<double>(SteadyClock::now() - t0).count());
  cpu.Report(r);
  return r;
}

Result<Report> RunE2eBeanstalkd(const CommonOptions& c, const E2eOptions& o) {
  CQ_ASSIGN_OR_RETURN(client::Endpoint ep, ParseHostPort("beanstalkd", o.beanstalkd));
  const int64_t min_s = (o.delay_min_ms + 999) / 1000;
  const int64_t max_s = o.delay_max_ms / 1000;
  if (max_s < min_s) {
    return InvalidArgument(
        "--delay-min-ms and --delay-max-ms: beanstalkd's delays are whole seconds, and no whole "
        "second lies between them");
  }
  BeanstalkSends sends;
  sends.tube = c.topic.empty() ? FreshTopic("e2e") : c.topic;
  std::string prefix = RunPrefix("e2e");
  auto rng = std::make_shared<std::mt19937_64>(7);
  auto payload = std::make_shared<std::string>(RandomPayload(o.payload_bytes, *rng));
  sends.make_job = [=](int64_t i, int64_t* delay_s, std::string* job) {
    *delay_s = min_s + static_cast<int64_t>((*rng)() % (max_s - min_s + 1));
    const int64_t trigger_ms = NowEpochMicros() / 1000 + *delay_s * 1000;
    // "<msgId> <trigger-ms> " then the payload, cut to keep the job at payload_bytes or more.
    size_t at = job->size();
    fmt::format_to(std::back_inserter(*job), "{}{} {} ", prefix, i, trigger_ms);
    size_t head = job->size() - at;
    job->append(*payload, 0, payload->size() > head ? payload->size() - head : 0);
  };
  ProduceState ps;
  ps.endpoint = ep;
  ps.count = o.count;
  ps.rate = o.rate;
  ConsumeState cs;
  cs.endpoint = ep;
  cs.topic = sends.tube;
  cs.ack = o.ack;
  cs.Expect(prefix, o.count);

  Report r = E2eReport(sends.tube, o);
  r.Str("protocol", "beanstalkd " + o.beanstalkd);
  r.Str("delays_used", fmt::format("uniform {}..{} s (whole seconds)", min_s, max_s));
  LoadLoop loop(ep);
  cs.loop = &loop;
  std::vector<std::unique_ptr<Session>> sessions;
  std::vector<Session*> ptrs;
  for (int i = 0; i < o.producers; ++i) {
    sessions.push_back(std::make_unique<BeanstalkProducer>(&ps, &sends));
    ptrs.push_back(sessions.back().get());
  }
  // As many connections as consume over HTTP: the long-polling consumers and the ackers.
  for (int i = 0; i < o.consumers + (o.ack ? o.ackers : 0); ++i) {
    sessions.push_back(std::make_unique<BeanstalkConsumer>(&cs));
    ptrs.push_back(sessions.back().get());
  }
  CQ_RETURN_IF_ERROR(loop.Connect(ptrs));
  CpuMeter cpu;
  Progress progress("e2e (beanstalkd)", c.progress);
  ps.start = SteadyClock::now();
  auto t0 = SteadyClock::now();
  E2eOptions whole = o;
  whole.delay_max_ms = max_s * 1000;
  loop.Run(E2eDeadline(whole), nullptr, [&] {
    progress.Update(cs.unique, cs.expected, fmt::format("sent {}  deleted {}", ps.ok, cs.acked));
  });
  progress.Finish();
  cs.stop = true;
  double secs = duration<double>(SteadyClock::now() - t0).count();
  AddE2eFigures(r, ps, cs, secs);
  cpu.Report(r);
  return r;
}

}  // namespace chronoq::bench
