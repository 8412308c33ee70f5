// The QueueBackend the configuration asks for (storage=embedded|memory|redis), built with
// everything it owns.
#pragma once

#include <memory>
#include <string>

#include "backend/queue_backend.h"
#include "base/clock.h"
#include "base/scheduler.h"
#include "config/config.h"
#include "metrics/registry.h"

namespace chronoq::app {

class ServingBackend {
 public:
  virtual ~ServingBackend() = default;
  virtual backend::QueueBackend* backend() = 0;
  // Finishes what is queued (its answers' callbacks run) and stops the storage threads. Call it
  // while the HTTP server's executors still exist.
  virtual void Close() = 0;
  // Adds the storage's figures (RocksDB sizes and stalls, Redis errors) to GET /metrics.
  // REQUIRES: no scrape after Close().
  virtual void RegisterMetrics(metrics::Registry& registry) = 0;
};

struct OpenedBackend {
  std::unique_ptr<ServingBackend> serving;  // null on failure
  int exit_code = 0;                        // on failure: app/start_checks.h kExit*
  std::string error;                        // on failure
};

// Opens the storage (recovering the embedded store) and builds the backend.
OpenedBackend OpenBackend(const config::ServerConfig& cfg, const base::Clock* clock,
                          base::Scheduler* scheduler);

}  // namespace chronoq::app
