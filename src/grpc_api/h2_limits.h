// Internal to src/grpc_api: the nghttp2 engine's defence against a client that resets streams as
// fast as it opens them (HTTP/2 "rapid reset", CVE-2023-44487): each connection has a budget of
// RST_STREAM frames, a token bucket (`burst` at once, refilled at `per_second`); a client that
// spends it gets GOAWAY (ENHANCE_YOUR_CALM) and the connection closes. nghttp2 1.57 has the same
// built in (1,000 and 33 per second, the defaults here); Debian 12's 1.52 does not.
//
// Thread-safety: none (one connection's thread).
#pragma once

#include <algorithm>
#include <chrono>

namespace chronoq::grpc_api {

class ResetBudget {
 public:
  ResetBudget(int burst, int per_second)
      : burst_(std::max(1, burst)), per_second_(std::max(1, per_second)), tokens_(burst_) {}

  // Spends one reset received at `now`; false when the budget is spent.
  bool Take(std::chrono::steady_clock::time_point now) {
    const double refill =
        std::chrono::duration<double>(now - last_).count() * static_cast<double>(per_second_);
    last_ = now;
    tokens_ = std::min(static_cast<double>(burst_), tokens_ + std::max(0.0, refill));
    if (tokens_ < 1) return false;
    tokens_ -= 1;
    return true;
  }

 private:
  const int burst_;
  const int per_second_;
  double tokens_;
  std::chrono::steady_clock::time_point last_ = std::chrono::steady_clock::now();
};

}  // namespace chronoq::grpc_api
