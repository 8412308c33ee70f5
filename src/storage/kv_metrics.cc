#include "storage/kv_metrics.h"

#include <string_view>
#include <utility>
#include <vector>

namespace chronoq::storage {
namespace {

// The RocksDB figures of KvStore::Stats() GET /metrics shows, by their Stats() key.
struct StorageFigure {
  std::string_view key;
  std::string_view name;
  std::string_view help;
  metrics::MetricType type;
};
constexpr StorageFigure kStorageFigures[] = {
    {"live_data_bytes", "cq_storage_live_data_bytes",
     "Embedded store: estimated size of the live data (RocksDB estimate-live-data-size)",
     metrics::MetricType::kGauge},
    {"sst_files_bytes", "cq_storage_sst_files_bytes", "Embedded store: size of all SST files",
     metrics::MetricType::kGauge},
    {"memtable_bytes", "cq_storage_memtable_bytes", "Embedded store: size of the memtables",
     metrics::MetricType::kGauge},
    {"block_cache_bytes", "cq_storage_block_cache_bytes",
     "Embedded store: bytes in the block cache (data, index and filter blocks)",
     metrics::MetricType::kGauge},
    {"pending_compaction_bytes", "cq_storage_pending_compaction_bytes",
     "Embedded store: estimated bytes compaction still has to rewrite",
     metrics::MetricType::kGauge},
    {"write_stopped", "cq_storage_write_stopped",
     "Embedded store: 1 while RocksDB stops writes (too many L0 files or pending compaction)",
     metrics::MetricType::kGauge},
    {"writable", "cq_storage_writable",
     "Embedded store: 1 while it accepts writes; 0 from a failed write (disk full, I/O error) "
     "until it accepts writes again",
     metrics::MetricType::kGauge},
    {"write_stalls", "cq_storage_write_stalls_total",
     "Embedded store: times RocksDB slowed down or stopped writes since the server started",
     metrics::MetricType::kCounter},
    {"data_dir_free_bytes", "cq_storage_data_dir_free_bytes",
     "Embedded store: bytes available to the server on the data directory's file system",
     metrics::MetricType::kGauge},
    {"data_dir_size_bytes", "cq_storage_data_dir_size_bytes",
     "Embedded store: size of the data directory's file system", metrics::MetricType::kGauge},
};

void Render(metrics::TextWriter& w, KvStore* kv) {
  std::vector<std::pair<std::string, int64_t>> stats = kv->Stats();
  for (const StorageFigure& f : kStorageFigures) {
    for (const auto& [key, value] : stats) {
      if (key != f.key) continue;
      w.Family(f.name, f.help, f.type);
      w.Sample(f.name, {}, static_cast<double>(value));
    }
  }
}

}  // namespace

void RegisterMetrics(KvStore* kv, metrics::Registry& registry) {
  registry.Add([kv](metrics::TextWriter& w) { Render(w, kv); });
}

}  // namespace chronoq::storage
