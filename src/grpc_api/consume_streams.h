// The open Consume streams, so that the server's shutdown can end them all (with OK) before the
// service answers its parked long polls. A stream registers a stop function while it is open.
//
// Thread-safety: all methods are thread-safe. Stop functions run without the lock held.
#pragma once

#include <cstdint>
#include <functional>
#include <unordered_map>

#include "base/mutex.h"
#include "base/thread_annotations.h"

namespace chronoq::grpc_api {

class ConsumeStreams {
 public:
  // Registers an open stream; 0 when the streams are ending (the stream ends at once).
  uint64_t Add(std::function<void()> stop) CQ_EXCLUDES(mu_);
  void Remove(uint64_t id) CQ_EXCLUDES(mu_);
  // Calls every stop function; later Add()s answer 0.
  void EndAll() CQ_EXCLUDES(mu_);
  bool ending() const CQ_EXCLUDES(mu_);
  size_t size() const CQ_EXCLUDES(mu_);

 private:
  mutable base::Mutex mu_;
  std::unordered_map<uint64_t, std::function<void()>> streams_ CQ_GUARDED_BY(mu_);
  uint64_t next_ CQ_GUARDED_BY(mu_) = 1;
  bool ending_ CQ_GUARDED_BY(mu_) = false;
};

}  // namespace chronoq::grpc_api
