#include "bench/report.h"

#include <fmt/format.h>
#include <sys/resource.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "bench/common.h"

namespace chronoq::bench {
namespace {

std::string Grouped(int64_t v) {
  std::string digits = std::to_string(v < 0 ? -v : v);
  std::string out;
  for (size_t i = 0; i < digits.size(); ++i) {
    if (i > 0 && (digits.size() - i) % 3 == 0) out.push_back(',');
    out.push_back(digits[i]);
  }
  return v < 0 ? "-" + out : out;
}

}  // namespace

void Report::Int(std::string key, int64_t v, std::string unit) {
  std::string human = Grouped(v) + (unit.empty() ? "" : " " + unit);
  items_.push_back({std::move(key), std::move(human), std::to_string(v)});
}

void Report::Num(std::string key, double v, std::string unit) {
  std::string human = fmt::format("{:.2f}{}", v, unit.empty() ? "" : " " + unit);
  items_.push_back({std::move(key), std::move(human), fmt::format("{}", v)});
}

void Report::Str(std::string key, std::string v) {
  std::string json = JsonString(v);
  items_.push_back({std::move(key), std::move(v), std::move(json)});
}

void Report::Latency(std::string key, const Histogram& h) {
  std::string json = fmt::format(
      "{{\"count\":{},\"mean_us\":{:.1f},\"p50_us\":{},\"p90_us\":{},\"p99_us\":{},"
      "\"p999_us\":{},\"max_us\":{}}}",
      h.count(), h.mean(), h.Percentile(50), h.Percentile(90), h.Percentile(99), h.Percentile(99.9),
      h.max());
  items_.push_back({std::move(key), h.Summary(), std::move(json)});
}

std::string Report::Human() const {
  std::string out = fmt::format("== chronoq bench {} ==\n", workload_);
  size_t width = 0;
  for (const Item& i : items_) width = std::max(width, i.key.size());
  for (const Item& i : items_) out += fmt::format("  {:<{}}  {}\n", i.key, width, i.human);
  for (const std::string& w : warnings_) out += fmt::format("  WARNING: {}\n", w);
  return out;
}

std::string Report::Json() const {
  std::string out = fmt::format("{{\"workload\":{}", JsonString(workload_));
  for (const Item& i : items_) out += fmt::format(",{}:{}", JsonString(i.key), i.json);
  out += ",\"warnings\":[";
  for (size_t i = 0; i < warnings_.size(); ++i) {
    out += (i ? "," : "") + JsonString(warnings_[i]);
  }
  return out + "]}";
}

double ProcessCpuSeconds() {
  rusage ru{};
  getrusage(RUSAGE_SELF, &ru);
  return static_cast<double>(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) +
         static_cast<double>(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e6;
}

double OtherProcessCpuSeconds(int pid) {
  std::ifstream f(fmt::format("/proc/{}/stat", pid));
  std::string stat;
  if (!std::getline(f, stat)) return -1;
  // Fields after the command name (which may hold spaces), from field 3 on; utime and stime are
  // fields 14 and 15, in clock ticks.
  size_t at = stat.rfind(')');
  if (at == std::string::npos) return -1;
  std::istringstream rest(stat.substr(at + 2));
  std::string field;
  long long utime = 0;
  long long stime = 0;
  for (int i = 3; i <= 15 && rest >> field; ++i) {
    if (i == 14) utime = std::stoll(field);
    if (i == 15) stime = std::stoll(field);
  }
  return static_cast<double>(utime + stime) / static_cast<double>(sysconf(_SC_CLK_TCK));
}

int64_t ProcessRssBytes(int pid) {
  std::ifstream f(fmt::format("/proc/{}/status", pid));
  std::string line;
  while (std::getline(f, line)) {
    if (line.rfind("VmRSS:", 0) == 0) return std::stoll(line.substr(6)) * 1024;
  }
  return -1;
}

int64_t DirectoryBytes(const std::string& dir) {
  std::error_code ec;
  int64_t total = 0;
  for (auto it = std::filesystem::recursive_directory_iterator(dir, ec);
       !ec && it != std::filesystem::recursive_directory_iterator(); it.increment(ec)) {
    if (it->is_regular_file(ec)) total += static_cast<int64_t>(it->file_size(ec));
  }
  return ec ? -1 : total;
}

}  // namespace chronoq::bench
