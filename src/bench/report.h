// Report: the figures of one benchmark run, printed for humans and as JSON from the same data.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "bench/histogram.h"

namespace chronoq::bench {

class Report {
 public:
  explicit Report(std::string workload) : workload_(std::move(workload)) {}

  void Int(std::string key, int64_t v, std::string unit = "");
  void Num(std::string key, double v, std::string unit = "");
  void Str(std::string key, std::string v);
  // p50/p90/p99/p99.9/max (and count, mean) of a histogram of microseconds.
  void Latency(std::string key, const Histogram& h);
  void Warn(std::string text) { warnings_.push_back(std::move(text)); }

  std::string Human() const;
  std::string Json() const;

 private:
  struct Item {
    std::string key;
    std::string human;
    std::string json;
  };
  std::string workload_;
  std::vector<Item> items_;
  std::vector<std::string> warnings_;
};

// CPU seconds (user + system) this process has used so far.
double ProcessCpuSeconds();
// CPU seconds (utime + stime from /proc/PID/stat) another process has used so far, or -1.
double OtherProcessCpuSeconds(int pid);
// VmRSS of a process in bytes, or -1 when it cannot be read.
int64_t ProcessRssBytes(int pid);
// Bytes of regular files under a directory (like du --apparent-size), or -1.
int64_t DirectoryBytes(const std::string& dir);

}  // namespace chronoq::bench
