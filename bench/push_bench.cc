// Push delivery to one local HTTP target (docs/benchmarks.md, "Push delivery (issue 16)"): a
// push::Pusher keeps N pushes in flight to an HTTP receiver of its own on 127.0.0.1
// (push/testing/http_receiver.h, answering 200 with keep-alive) for a while, and reports pushes
// per second, latency percentiles and the CPU time per push of the whole process, of the
// Pusher's threads ("cq-push-*") and of the receiver's ("cq-test-recv"). The Pusher alone: no
// scheduler, no storage.
//
//   push_bench [--seconds=5] [--inflight=64] [--max-in-flight=64] [--http-threads=1]
//              [--receiver-threads=1] [--body=100]
//
// Prints one JSON line. Exits non-zero when a push fails.
#include <dirent.h>
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <map>
#include <mutex>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

#include "push/pusher.h"
#include "push/testing/http_receiver.h"

namespace chronoq {
namespace {

using Clock = std::chrono::steady_clock;

struct Flags {
  double seconds = 5;
  int inflight = 64;
  int max_in_flight = 64;
  int http_threads = 1;
  int receiver_threads = 1;
  size_t body = 100;
};

bool Flag(std::string_view arg, std::string_view name, std::string* value) {
  if (arg.substr(0, name.size()) != name || arg.size() <= name.size() || arg[name.size()] != '=') {
    return false;
  }
  *value = std::string(arg.substr(name.size() + 1));
  return true;
}

double CpuSeconds() {
  rusage ru{};
  getrusage(RUSAGE_SELF, &ru);
  return static_cast<double>(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) +
         static_cast<double>(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e6;
}

// CPU seconds (user + system) of this process's threads, summed by thread name prefix:
// "cq-push" (the Pusher), "cq-test-recv" (the receiver), "other".
std::map<std::string, double> ThreadCpu() {
  std::map<std::string, double> out;
  const double tick = static_cast<double>(sysconf(_SC_CLK_TCK));
  DIR* dir = opendir("/proc/self/task");
  if (dir == nullptr) return out;
  while (dirent* e = readdir(dir)) {
    if (e->d_name[0] == '.') continue;
    const std::string base = std::string("/proc/self/task/") + e->d_name;
    std::string comm;
    std::getline(std::ifstream(base + "/comm"), comm);
    std::string stat;
    std::getline(std::ifstream(base + "/stat"), stat);
    const size_t paren = stat.rfind(')');
    if (paren == std::string::npos) continue;
    std::istringstream fields(stat.substr(paren + 2));  // from field 3 (state) on
    std::string skip;
    for (int i = 3; i < 14; ++i) fields >> skip;
    double utime = 0, stime = 0;
    fields >> utime >> stime;
    const std::string group = comm.rfind("cq-push", 0) == 0        ? "pusher"
                              : comm.rfind("cq-test-recv", 0) == 0 ? "receiver"
                                                                   : "other";
    out[group] += (utime + stime) / tick;
  }
  closedir(dir);
  return out;
}

class Driver {
 public:
  Driver(const Flags& flags, push::Pusher* pusher, std::string url)
      : flags_(flags), pusher_(pusher), url_(std::move(url)), body_(flags.body, 'x') {}

  void Run() {
    start_ = Clock::now();
    end_ = start_ + std::chrono::duration_cast<Clock::duration>(
                        std::chrono::duration<double>(flags_.seconds));
    for (int i = 0; i < flags_.inflight; ++i) PushOne();
    std::unique_lock<std::mutex> lock(mu_);
    cv_.wait(lock, [&] { return running_ == 0; });
    stop_ = Clock::now();
  }

  void Report(double cpu, std::map<std::string, double> threads) {
    std::lock_guard<std::mutex> lock(mu_);
    std::sort(latencies_us_.begin(), latencies_us_.end());
    auto pct = [&](double p) {
      if (latencies_us_.empty()) return 0.0;
      return latencies_us_[std::min(latencies_us_.size() - 1,
                                    static_cast<size_t>(p * latencies_us_.size()))];
    };
    const double secs = std::chrono::duration<double>(stop_ - start_).count();
    std::printf(
        "{\"workload\":\"push_http\",\"inflight\":%d,\"http_threads\":%d,"
        "\"receiver_threads\":%d,\"body\":%zu,\"seconds\":%.2f,\"pushes\":%lld,\"failed\":%lld,"
        "\"pushes_per_s\":%.0f,\"latency_us\":{\"p50\":%.0f,\"p99\":%.0f,\"max\":%.0f},"
        "\"cpu_us_per_push\":%.2f,\"pusher_cpu_us_per_push\":%.2f,"
        "\"receiver_cpu_us_per_push\":%.2f}\n",
        flags_.inflight, flags_.http_threads, flags_.receiver_threads, flags_.body, secs,
        static_cast<long long>(ok_), static_cast<long long>(failed_), ok_ / secs, pct(0.5),
        pct(0.99), latencies_us_.empty() ? 0.0 : latencies_us_.back(), PerPush(cpu),
        PerPush(threads["pusher"]), PerPush(threads["receiver"]));
    if (failed_ > 0) std::fprintf(stderr, "push_bench: first failure: %s\n", first_error_.c_str());
  }

  int64_t failed() const { return failed_; }

  // REQUIRES: mu_ held (Report).
  double PerPush(double seconds) const {
    return ok_ + failed_ > 0 ? seconds * 1e6 / static_cast<double>(ok_ + failed_) : 0.0;
  }

 private:
  void PushOne() {
    {
      std::lock_guard<std::mutex> lock(mu_);
      ++running_;
    }
    push::PushCall call;
    call.kind = push::Kind::kHttp;
    call.url = url_;
    call.msg_id = std::to_string(seq_.fetch_add(1));
    call.topic = "bench";
    call.content_type = "application/json";
    call.body = body_;
    pusher_->Push(std::move(call), [this](push::PushOutcome o) { OnDone(std::move(o)); });
  }

  void OnDone(push::PushOutcome o) {
    bool more = false;
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (o.ok) {
        ++ok_;
        latencies_us_.push_back(static_cast<double>(o.latency.count()));
      } else {
        if (failed_++ == 0) first_error_ = o.error;
      }
      more = Clock::now() < end_ && failed_ == 0;
      if (!more && --running_ == 0) cv_.notify_all();
    }
    if (more) {
      {
        std::lock_guard<std::mutex> lock(mu_);
        --running_;
      }
      PushOne();
    }
  }

  const Flags flags_;
  push::Pusher* const pusher_;  // outlives this
  const std::string url_;
  const std::string body_;
  std::atomic<int64_t> seq_{0};
  Clock::time_point start_, end_, stop_;
  std::mutex mu_;
  std::condition_variable cv_;
  int running_ = 0;
  int64_t ok_ = 0;
  int64_t failed_ = 0;
  std::string first_error_;
  std::vector<double> latencies_us_;
};

int Main(int argc, char** argv) {
  Flags f;
  for (int i = 1; i < argc; ++i) {
    std::string v;
    std::string_view a = argv[i];
    if (Flag(a, "--seconds", &v)) {
      f.seconds = std::atof(v.c_str());
    } else if (Flag(a, "--inflight", &v)) {
      f.inflight = std::atoi(v.c_str());
    } else if (Flag(a, "--max-in-flight", &v)) {
      f.max_in_flight = std::atoi(v.c_str());
    } else if (Flag(a, "--http-threads", &v)) {
      f.http_threads = std::atoi(v.c_str());
    } else if (Flag(a, "--receiver-threads", &v)) {
      f.receiver_threads = std::atoi(v.c_str());
    } else if (Flag(a, "--body", &v)) {
      f.body = static_cast<size_t>(std::atol(v.c_str()));
    } else {
      std::fprintf(stderr, "push_bench: unknown argument %s\n", argv[i]);
      return 2;
    }
  }
  if (f.inflight < 1 || f.seconds <= 0) {
    std::fprintf(stderr, "push_bench: --inflight and --seconds must be positive\n");
    return 2;
  }
  push::testing::HttpReceiver receiver({.record = false, .threads = f.receiver_threads});
  push::Pusher pusher({.max_in_flight_per_target = f.max_in_flight,
                       .max_queued_per_target = std::max(1024, f.inflight),
                       .http_threads = f.http_threads});
  Driver driver(f, &pusher, receiver.Url("/hook"));
  const double cpu0 = CpuSeconds();
  auto threads = ThreadCpu();
  driver.Run();
  const double cpu = CpuSeconds() - cpu0;
  for (const auto& [group, secs] : ThreadCpu()) threads[group] = secs - threads[group];
  driver.Report(cpu, std::move(threads));
  return driver.failed() == 0 ? 0 : 1;
}

}  // namespace
}  // namespace chronoq

int main(int argc, char** argv) { return chronoq::Main(argc, argv); }
