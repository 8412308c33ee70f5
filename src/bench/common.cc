#include "bench/common.h"

#include <fmt/format.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>

namespace chronoq::bench {

std::string FormPost(const client::Endpoint& ep, std::string_view path, std::string_view body) {
  return fmt::format(
      "POST {} HTTP/1.1\r\nHost: {}:{}\r\nContent-Type: application/x-www-form-urlencoded\r\n"
      "Content-Length: {}\r\n\r\n{}",
      path, ep.host, ep.port, body.size(), body);
}

std::string JsonPost(const client::Endpoint& ep, std::string_view path, std::string_view body) {
  return fmt::format(
      "POST {} HTTP/1.1\r\nHost: {}:{}\r\nContent-Type: application/json\r\n"
      "Content-Length: {}\r\n\r\n{}",
      path, ep.host, ep.port, body.size(), body);
}

std::string JsonString(std::string_view s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') out.push_back('\\');
    if (static_cast<unsigned char>(c) < 0x20) {
      out += fmt::format("\\u{:04x}", static_cast<int>(c));
      continue;
    }
    out.push_back(c);
  }
  return out + "\"";
}

std::string RandomPayload(size_t bytes, std::mt19937_64& rng) {
  static constexpr char kChars[] = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";
  std::string out(bytes, 'x');
  for (char& c : out) c = kChars[rng() % (sizeof(kChars) - 1)];
  return out;
}

std::string FreshTopic(std::string_view workload) {
  std::random_device rd;
  return fmt::format("bench-{}-{:06x}", workload, rd() & 0xffffff);
}

int64_t NowEpochMicros() {
  return std::chrono::duration_cast<std::chrono::microseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

Progress::Progress(std::string name, bool enabled)
    : name_(std::move(name)), enabled_(enabled && ::isatty(STDERR_FILENO)) {}

void Progress::Update(int64_t done, int64_t total, std::string_view extra) {
  if (!enabled_) return;
  double elapsed = std::chrono::duration<double>(SteadyClock::now() - start_).count();
  double rate = elapsed > 0 ? static_cast<double>(done) / elapsed : 0;
  std::string eta = "?";
  if (rate > 0 && total > 0) eta = fmt::format("{:.1f}s", static_cast<double>(total - done) / rate);
  std::string line = fmt::format("[{}] {}/{}  {:.0f}/s  elapsed {:.1f}s  ETA {}  {}", name_, done,
                                 total, rate, elapsed, eta, extra);
  std::fprintf(stderr, "\r%-110s", line.c_str());
  std::fflush(stderr);
}

void Progress::Finish() {
  if (!enabled_) return;
  std::fprintf(stderr, "\r%-110s\r", "");
  std::fflush(stderr);
}

CpuMeter::CpuMeter() : cpu0_(ProcessCpuSeconds()), t0_(SteadyClock::now()) {}

void CpuMeter::Report(class Report& r, int64_t sends) const {
  double wall = std::chrono::duration<double>(SteadyClock::now() - t0_).count();
  const double cpu = ProcessCpuSeconds() - cpu0_;
  double pct = wall > 0 ? cpu / wall * 100.0 : 0;
  r.Num("client_cpu_percent", pct, "% of one core");
  if (sends > 0) r.Num("client_cpu_us_per_send", cpu * 1e6 / static_cast<double>(sends), "us");
  if (pct > 85.0) {
    r.Warn(fmt::format(
        "the benchmark client used {:.0f}% of a core: it, not the server, may have been the "
        "bottleneck (figures are a lower bound)",
        pct));
  }
}

Status CheckServer(const client::Endpoint& ep) {
  auto conn = client::HttpConnection::Connect(ep);
  if (!conn.has_value()) return conn.error();
  auto r = conn->Request("GET", "/camellia/health/check");
  if (!r.has_value()) return r.error();
  if (r->status != 200) return Unavailable(fmt::format("health check answered HTTP {}", r->status));
  return Status::Ok();
}

double ServerMetric(const client::Endpoint& ep, std::string_view name) {
  auto conn = client::HttpConnection::Connect(ep);
  if (!conn.has_value()) return -1;
  auto r = conn->Request("GET", "/metrics");
  if (!r.has_value() || r->status != 200) return -1;
  std::string_view body = r->body;
  for (size_t at = 0; at < body.size();) {
    size_t end = body.find('\n', at);
    if (end == std::string_view::npos) end = body.size();
    std::string_view line = body.substr(at, end - at);
    if (line.size() > name.size() && line.substr(0, name.size()) == name &&
        line[name.size()] == ' ') {
      return std::strtod(std::string(line.substr(name.size() + 1)).c_str(), nullptr);
    }
    at = end + 1;
  }
  return -1;
}

}  // namespace chronoq::bench
