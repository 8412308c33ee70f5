// Registry: what GET /metrics renders. Each owner of figures (the queue probe, the HTTP router,
// the storage, the process) adds one collector that writes its whole families; a scrape runs them
// in the order added. Only scrapes and registration take the registry's lock, never the code
// that bumps counters.
//
// Thread-safety: all methods are thread-safe. Collectors run on the scraping thread and must
// not call back into the registry.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "base/mutex.h"
#include "base/thread_annotations.h"
#include "metrics/exposition.h"

namespace chronoq::metrics {

class Registry {
 public:
  using Collector = std::function<void(TextWriter&)>;

  // REQUIRES: whatever the collector reads outlives the registry, or the scrapes.
  void Add(Collector collector) CQ_EXCLUDES(mu_);
  void Render(TextWriter& w) const CQ_EXCLUDES(mu_);

 private:
  mutable base::Mutex mu_;
  std::vector<Collector> collectors_ CQ_GUARDED_BY(mu_);
};

// Process figures from /proc/self: uptime, resident memory, open file descriptors.
void RenderProcess(TextWriter& w);

}  // namespace chronoq::metrics
