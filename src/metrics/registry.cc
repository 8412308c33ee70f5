#include "metrics/registry.h"

#include <dirent.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>

namespace chronoq::metrics {
namespace {

// Set when the process starts (static initialization), for uptime.
const auto kStartSteady = std::chrono::steady_clock::now();
const auto kStartSystem = std::chrono::system_clock::now();

double ResidentBytes() {
  FILE* f = std::fopen("/proc/self/statm", "r");
  if (f == nullptr) return 0;
  long pages_total = 0;
  long pages_resident = 0;
  int n = std::fscanf(f, "%ld %ld", &pages_total, &pages_resident);
  std::fclose(f);
  if (n != 2) return 0;
  return static_cast<double>(pages_resident) * static_cast<double>(sysconf(_SC_PAGESIZE));
}

double OpenFds() {
  DIR* d = opendir("/proc/self/fd");
  if (d == nullptr) return 0;
  int n = 0;
  while (dirent* e = readdir(d)) {
    if (e->d_name[0] != '.') ++n;
  }
  closedir(d);
  return n - 1;  // the directory stream's own descriptor
}

}  // namespace

void Registry::Add(Collector collector) {
  base::MutexLock lock(mu_);
  collectors_.push_back(std::move(collector));
}

void Registry::Render(TextWriter& w) const {
  base::MutexLock lock(mu_);
  for (const Collector& c : collectors_) c(w);
}

void RenderProcess(TextWriter& w) {
  using std::chrono::duration;
  w.Family("cq_process_start_time_seconds", "Start time of the process since the Unix epoch",
           MetricType::kGauge);
  w.Sample("cq_process_start_time_seconds", {},
           duration<double>(kStartSystem.time_since_epoch()).count());
  w.Family("cq_process_uptime_seconds", "Time since the process started", MetricType::kGauge);
  w.Sample("cq_process_uptime_seconds", {},
           duration<double>(std::chrono::steady_clock::now() - kStartSteady).count());
  w.Family("cq_process_resident_memory_bytes", "Resident set size (RSS) of the process",
           MetricType::kGauge);
  w.Sample("cq_process_resident_memory_bytes", {}, ResidentBytes());
  w.Family("cq_process_open_fds", "Open file descriptors of the process", MetricType::kGauge);
  w.Sample("cq_process_open_fds", {}, OpenFds());
}

}  // namespace chronoq::metrics
