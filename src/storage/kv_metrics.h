// The embedded store's figures on GET /metrics (RocksDB sizes, stalls, writability, the data
// directory's file system; docs/metrics.md), read from KvStore::Stats() at scrape time.
#pragma once

#include "metrics/registry.h"
#include "storage/kv.h"

namespace chronoq::storage {

// Adds the collector of the cq_storage_* families to `registry`. A store whose Stats() gives none
// of them (the in-memory one) adds nothing to a scrape. REQUIRES: `kv` outlives the scrapes.
void RegisterMetrics(KvStore* kv, metrics::Registry& registry);

}  // namespace chronoq::storage
