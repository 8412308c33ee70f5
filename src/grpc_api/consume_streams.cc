#include "grpc_api/consume_streams.h"

#include <vector>

namespace chronoq::grpc_api {

uint64_t ConsumeStreams::Add(std::function<void()> stop) {
  base::MutexLock lock(mu_);
  if (ending_) return 0;
  const uint64_t id = next_++;
  streams_.emplace(id, std::move(stop));
  return id;
}

void ConsumeStreams::Remove(uint64_t id) {
  base::MutexLock lock(mu_);
  streams_.erase(id);
}

void ConsumeStreams::EndAll() {
  std::vector<std::function<void()>> stops;
  {
    base::MutexLock lock(mu_);
    ending_ = true;
    for (auto& [id, stop] : streams_) stops.push_back(stop);
  }
  for (auto& stop : stops) stop();
}

bool ConsumeStreams::ending() const {
  base::MutexLock lock(mu_);
  return ending_;
}

size_t ConsumeStreams::size() const {
  base::MutexLock lock(mu_);
  return streams_.size();
}

}  // namespace chronoq::grpc_api
