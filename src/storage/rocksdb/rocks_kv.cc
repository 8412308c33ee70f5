#include "storage/rocksdb/rocks_kv.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <rocksdb/cache.h>
#include <rocksdb/compaction_filter.h>
#include <rocksdb/filter_policy.h>
#include <rocksdb/merge_operator.h>
#include <rocksdb/options.h>
#include <rocksdb/perf_level.h>
#include <rocksdb/table.h>
#include <rocksdb/utilities/table_properties_collectors.h>
#include <rocksdb/write_buffer_manager.h>
#include <sys/file.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>

#include "base/log.h"
#include "storage/codec.h"
#include "storage/rocksdb/ordered_memtable.h"
#include "storage/rocksdb/rocks_kv_impl.h"
#include "storage/upgrade.h"

namespace chronoq::storage {
namespace {

namespace fs = std::filesystem;

constexpr const char* kMarkerFile = "CHRONOQ";
constexpr const char* kPidFile = "chronoq.pid";

// Sums 64-bit little-endian counters (KvBatch::Add).
class AddOperator final : public rocksdb::AssociativeMergeOperator {
 public:
  bool Merge(const rocksdb::Slice&, const rocksdb::Slice* existing, const rocksdb::Slice& value,
             std::string* new_value, rocksdb::Logger*) const override {
    int64_t sum = DecodeCounter(std::string_view(value.data(), value.size()));
    if (existing != nullptr)
      sum += DecodeCounter(std::string_view(existing->data(), existing->size()));
    *new_value = EncodeCounter(sum);
    return true;
  }
  const char* Name() const override { return "chronoq.add"; }
};

// Drops counters that add up to zero, so the histogram does not keep empty slots.
class ZeroCounterFilter final : public rocksdb::CompactionFilter {
 public:
  bool Filter(int, const rocksdb::Slice&, const rocksdb::Slice& value, std::string*,
              bool*) const override {
    return DecodeCounter(std::string_view(value.data(), value.size())) == 0;
  }
  const char* Name() const override { return "chronoq.zero_counters"; }
};

const ZeroCounterFilter kZeroCounterFilter;

// Collects nothing: what CompactOnDeletionBelowLevel0 gives a flushed file.
class NoCollector final : public rocksdb::TablePropertiesCollector {
 public:
  rocksdb::Status AddUserKey(const rocksdb::Slice&, const rocksdb::Slice&, rocksdb::EntryType,
                             rocksdb::SequenceNumber, uint64_t) override {
    return rocksdb::Status::OK();
  }
  rocksdb::Status Finish(rocksdb::UserCollectedProperties*) override {
    return rocksdb::Status::OK();
  }
  rocksdb::UserCollectedProperties GetReadableProperties() const override { return {}; }
  const char* Name() const override { return "chronoq.none"; }
};

// Marks a file full of tombstones for compaction (RocksDB's CompactOnDeletionCollector), except
// a flushed one: a burst's drain flushes files of little else, and marking each made every flush
// a compaction with the whole of level 1 (the deletes span the due second's key range); level 0
// is compacted by its file count instead (docs/benchmarks.md, "Sixth session: bursts"). What a
// compaction leaves above the last level is still marked, so a walk from the start (recovery)
// does not wade through tombstones there.
class CompactOnDeletionBelowLevel0 final : public rocksdb::TablePropertiesCollectorFactory {
 public:
  rocksdb::TablePropertiesCollector* CreateTablePropertiesCollector(
      rocksdb::TablePropertiesCollectorFactory::Context context) override {
    if (context.level_at_creation == 0) return new NoCollector();
    return on_deletion_->CreateTablePropertiesCollector(context);
  }
  const char* Name() const override { return "chronoq.compact_on_deletion_below_l0"; }

 private:
  std::shared_ptr<rocksdb::TablePropertiesCollectorFactory> on_deletion_ =
      rocksdb::NewCompactOnDeletionCollectorFactory(/*sliding_window_size=*/1024,
                                                    /*deletion_trigger=*/256);
};

// The length of a key's first `fields` length-prefixed fields (varint lengths), or 0 when it has
// fewer: the (namespace, topic) prefix of a per-topic key, or the namespace prefix of a retention
// key. Inserts that follow each other within one prefix (time-ordered keys) reuse the skip-list
// position of the previous one (NewOrderedMemTableFactory's hint prefix).
size_t FieldsPrefixLength(std::string_view key, int fields) {
  size_t pos = 0;
  for (int f = 0; f < fields; ++f) {
    uint64_t len = 0;
    int shift = 0;
    for (;;) {
      if (pos >= key.size() || shift > 28) return 0;
      auto b = static_cast<uint8_t>(key[pos++]);
      len |= static_cast<uint64_t>(b & 0x7f) << shift;
      if ((b & 0x80) == 0) break;
      shift += 7;
    }
    if (len > key.size() - pos) return 0;
    pos += len;
  }
  return pos;
}
size_t TopicPrefixLength(std::string_view key) { return FieldsPrefixLength(key, 2); }
size_t NamespacePrefixLength(std::string_view key) { return FieldsPrefixLength(key, 1); }

// Iterates a column family, merging the group-commit overlay over what RocksDB holds.
class RocksIterator final : public KvIterator {
 public:
  // The bounds live here: RocksDB's read options point at them for the iterator's lifetime.
  struct Bounds {
    std::string lower;
    std::string upper;
    rocksdb::Slice lower_slice;
    rocksdb::Slice upper_slice;
  };
  RocksIterator(std::unique_ptr<Bounds> bounds, rocksdb::DB* db, rocksdb::ColumnFamilyHandle* cf,
                std::vector<std::pair<std::string, std::optional<std::string>>> overlay)
      : bounds_(std::move(bounds)), overlay_(std::move(overlay)) {
    rocksdb::ReadOptions ro;
    bounds_->lower_slice = rocksdb::Slice(bounds_->lower);
    bounds_->upper_slice = rocksdb::Slice(bounds_->upper);
    if (!bounds_->lower.empty()) ro.iterate_lower_bound = &bounds_->lower_slice;
    if (!bounds_->upper.empty()) ro.iterate_upper_bound = &bounds_->upper_slice;
    it_.reset(db->NewIterator(ro, cf));
    if (bounds_->lower.empty()) {
      it_->SeekToFirst();
    } else {
      it_->Seek(bounds_->lower_slice);
    }
    Settle();
  }
  bool Valid() const override { return valid_; }
  void Next() override {
    if (from_overlay_) {
      if (db_same_) it_->Next();
      ++pos_;
    } else {
      it_->Next();
    }
    Settle();
  }
  std::string_view key() const override {
    return from_overlay_ ? std::string_view(overlay_[pos_].first)
                         : std::string_view(it_->key().data(), it_->key().size());
  }
  std::string_view value() const override {
    return from_overlay_ ? std::string_view(*overlay_[pos_].second)
                         : std::string_view(it_->value().data(), it_->value().size());
  }
  Status status() const override { return FromRocks(it_->status(), "iterate"); }

 private:
  // Positions on the next visible entry: the smaller key of both sources; on equal keys the
  // overlay wins; overlay deletions hide the key.
  void Settle() {
    for (;;) {
      bool db_ok = it_->Valid();
      bool ov_ok = pos_ < overlay_.size();
      if (!db_ok && !ov_ok) {
        valid_ = false;
        return;
      }
      std::string_view db_key =
          db_ok ? std::string_view(it_->key().data(), it_->key().size()) : std::string_view();
      if (ov_ok && (!db_ok || overlay_[pos_].first <= db_key)) {
        db_same_ = db_ok && overlay_[pos_].first == db_key;
        if (!overlay_[pos_].second) {  // deleted in a batch not yet durable
          if (db_same_) it_->Next();
          ++pos_;
          continue;
        }
        from_overlay_ = true;
        valid_ = true;
        return;
      }
      from_overlay_ = false;
      valid_ = true;
      return;
    }
  }

  std::unique_ptr<Bounds> bounds_;
  std::unique_ptr<rocksdb::Iterator> it_;
  std::vector<std::pair<std::string, std::optional<std::string>>> overlay_;
  size_t pos_ = 0;
  bool valid_ = false;
  bool from_overlay_ = false;
  bool db_same_ = false;
};

// Reads the directory's identity and decides whether it may be used.
Status CheckDirectory(const fs::path& dir, bool* fresh, int* version_out) {
  std::error_code ec;
  if (!fs::exists(dir, ec)) {
    fs::create_directories(dir, ec);
    if (ec)
      return IOError(
          fmt::format("cannot create data directory {}: {}", dir.string(), ec.message()));
    *fresh = true;
    return Status::Ok();
  }
  if (!fs::is_directory(dir, ec)) {
    return InvalidArgument(fmt::format("data directory {} is not a directory", dir.string()));
  }
  fs::path marker = dir / kMarkerFile;
  if (!fs::exists(marker, ec)) {
    if (fs::is_empty(dir, ec)) {
      *fresh = true;
      return Status::Ok();
    }
    return InvalidArgument(fmt::format(
        "data directory {} is not empty and is not a chronoq store (it has no {} file); "
        "refusing to touch it: point --data-dir at an empty or new directory",
        dir.string(), kMarkerFile));
  }
  if (fs::file_size(marker, ec) == 0 && !ec && !fs::exists(dir / "CURRENT", ec)) {
    // Creation was cut short (or another server is creating it right now: the lock decides).
    *fresh = true;
    return Status::Ok();
  }
  std::ifstream in(marker);
  std::string line;
  int version = -1;
  while (std::getline(in, line)) {
    if (line.rfind("format ", 0) == 0) version = std::atoi(line.c_str() + 7);
  }
  if (version <= 0) {
    return InvalidArgument(fmt::format(
        "data directory {}: its {} file has no format version; it was left untouched (see "
        "docs/storage-format.md)",
        dir.string(), kMarkerFile));
  }
  if (version < kOldestFormatVersion || version > kFormatVersion) {
    return InvalidArgument(fmt::format(
        "data directory {} holds a chronoq store of format version {}, but this chronoq reads "
        "versions {} to {}; it was left untouched (see docs/storage-format.md)",
        dir.string(), version, kOldestFormatVersion, kFormatVersion));
  }
  *fresh = false;
  *version_out = version;
  return Status::Ok();
}

// Writes the marker with this build's format version into the (locked) marker file and fsyncs
// it. A fresh store's file is emptied first; an upgraded store's marker is overwritten in place
// (same length: only the version digits change), so that a crash leaves either version readable.
bool WriteMarker(int fd, bool fresh) {
  std::string marker = fmt::format(
      "chronoq store\nformat {}\nThis directory is a chronoq data directory "
      "(docs/storage-format.md).\n",
      kFormatVersion);
  if (fresh && ::ftruncate(fd, 0) != 0) return false;
  if (::pwrite(fd, marker.data(), marker.size(), 0) != static_cast<ssize_t>(marker.size())) {
    return false;
  }
  if (!fresh && ::ftruncate(fd, static_cast<off_t>(marker.size())) != 0) return false;
  return ::fsync(fd) == 0;
}

// Takes the directory lock (held while the store is open).
Result<int> LockDirectory(const fs::path& dir) {
  std::string path = (dir / kMarkerFile).string();
  int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  if (fd < 0) return IOError(fmt::format("cannot open {}: {}", path, std::strerror(errno)));
  if (::flock(fd, LOCK_EX | LOCK_NB) != 0) {
    ::close(fd);
    std::ifstream pid_in(dir / kPidFile);
    std::string pid;
    std::getline(pid_in, pid);
    return Unavailable(fmt::format(
        "data directory {} is in use by another chronoq server{}; one directory serves one "
        "server",
        dir.string(), pid.empty() ? "" : " (pid " + pid + ")"));
  }
  return fd;
}

rocksdb::ColumnFamilyOptions CfOptions(Cf cf, const std::shared_ptr<rocksdb::Cache>& cache,
                                       const std::shared_ptr<rocksdb::MergeOperator>& add) {
  rocksdb::ColumnFamilyOptions o;
  o.write_buffer_size = 8 << 20;
  o.max_write_buffer_number = 3;
  rocksdb::BlockBasedTableOptions t;
  t.block_cache = cache;
  t.cache_index_and_filter_blocks = true;
  t.pin_l0_filter_and_index_blocks_in_cache = true;
  switch (cf) {
    case Cf::kRecords:
    case Cf::kPayloads:
    case Cf::kSent:
      // Point lookups by (topic, msgId): a miss (a new msgId) is answered by the filter.
      // Partitioned: a lookup loads one 4 KB filter partition and index partition, not a whole
      // file's, so the small block cache holds the working set however large the backlog.
      t.filter_policy.reset(rocksdb::NewBloomFilterPolicy(10));
      t.partition_filters = true;
      t.index_type = rocksdb::BlockBasedTableOptions::IndexType::kTwoLevelIndexSearch;
      t.metadata_block_size = 4096;
      t.pin_top_level_index_and_filter = true;
      // And in the memtables: a send with a client's msgId looks it up first, and a new one is
      // a miss there too. Payloads are read only for messages known to exist: no filter.
      if (cf == Cf::kRecords) {
        o.memtable_whole_key_filtering = true;
        o.memtable_prefix_bloom_size_ratio = 0.02;
      }
      break;
    case Cf::kVis:
    case Cf::kRetention:
    case Cf::kEnded:
      // Queue-shaped ranges: deleted at the head. Compact files full of tombstones early, so
      // that a walk from the start (at recovery) does not wade through them: those below level
      // 0 (CompactOnDeletionBelowLevel0).
      o.table_properties_collector_factories.emplace_back(
          std::make_shared<CompactOnDeletionBelowLevel0>());
      // A burst's drain flushes vis files of tombstones whose key range spans every message
      // still due (the kind-0 deletes and the kind-1 entries of the deliveries): each level-0
      // compaction rewrites the whole of level 1 below them, so fewer and larger ones cost less;
      // and in a larger memtable more of the deliveries' kind-1 entries meet their acks' deletes
      // before the flush. The memtable budget (WriteBufferManager) still bounds them all.
      if (cf == Cf::kVis) {
        o.level0_file_num_compaction_trigger = 8;
        o.write_buffer_size = 16 << 20;
      }
      break;
    case Cf::kHist:
      o.merge_operator = add;
      o.compaction_filter = &kZeroCounterFilter;
      o.write_buffer_size = 4 << 20;
      break;
    case Cf::kMeta:
      o.write_buffer_size = 1 << 20;
      break;
  }
  o.table_factory.reset(rocksdb::NewBlockBasedTableFactory(t));
  // Level 0 and 1 hold what was flushed minutes ago and is compacted again soon: compressing
  // them costs the write path CPU (every flush) for space saved only briefly.
  o.compression_per_level.assign(static_cast<size_t>(o.num_levels), o.compression);
  o.compression_per_level[0] = rocksdb::kNoCompression;
  o.compression_per_level[1] = rocksdb::kNoCompression;
  // RocksDB's skip list, as Debian builds it (assertions on), costs about 16 key comparisons more
  // per insert than ours (ordered_memtable.h), which also keeps the per-topic insert hints.
  static const auto kTopicMemTables = NewOrderedMemTableFactory(TopicPrefixLength);
  static const auto kNamespaceMemTables = NewOrderedMemTableFactory(NamespacePrefixLength);
  o.memtable_factory =
      cf == Cf::kRetention || cf == Cf::kMeta ? kNamespaceMemTables : kTopicMemTables;
  return o;
}

}  // namespace

Status FromRocks(const rocksdb::Status& s, std::string_view what) {
  if (s.ok()) return Status::Ok();
  std::string msg = fmt::format("{}: {}", what, s.ToString());
  if (s.IsCorruption()) return Status(Errc::kCorruption, msg);
  if (s.IsBusy() || s.IsTryAgain() || s.IsTimedOut()) return Status(Errc::kUnavailable, msg);
  if (s.IsNoSpace()) {
    return Status(Errc::kIOError,
                  fmt::format("{}: the data directory's disk is full (no space left on device); "
                              "nothing was written, and writes resume by themselves once space "
                              "is freed",
                              what));
  }
  if (s.IsIOError()) return Status(Errc::kIOError, msg);
  return Status(Errc::kInternal, msg);
}

size_t GroupWriteBatchBytes(const std::vector<const KvBatch*>& batches) {
  // The header, then per op its record at most (a counter addition's value: 8 bytes).
  size_t bytes = 12;
  for (const KvBatch* batch : batches) {
    for (const KvBatch::Op& op : batch->ops()) {
      bytes +=
          WriteBatchRep::Bound(op.key.size(), op.kind == KvBatch::Kind::kAdd ? 8 : op.value.size());
    }
  }
  return bytes;
}

void AppendGroupToWriteBatch(const std::vector<const KvBatch*>& batches, const CfIds& cf_ids,
                             WriteBatchRep* out) {
  // Every op of the group, in (column family, key) order; the ops of one key keep their order.
  // A memtable insert then starts its skip-list search where the previous one ended instead of
  // at the top: a pull's or an ack's keys, scattered in the order of the messages, are mostly
  // neighbours once sorted (docs/benchmarks.md, "Third session: bursts"). Placed by column family
  // first (a counting pass: no key comparison), then each family's ops sorted by key unless they
  // already are, as successive sends' keys of one topic mostly are (docs/benchmarks.md, "Seventh
  // session: the store's write"); both steps keep the queue order of equal keys.
  std::array<size_t, kCfCount + 1> start{};
  for (const KvBatch* batch : batches) {
    for (const KvBatch::Op& op : batch->ops()) ++start[static_cast<size_t>(op.cf) + 1];
  }
  for (size_t c = 1; c <= kCfCount; ++c) start[c] += start[c - 1];
  std::vector<const KvBatch::Op*> ops(start[kCfCount]);
  std::array<size_t, kCfCount> next{};
  std::copy(start.begin(), start.end() - 1, next.begin());
  for (const KvBatch* batch : batches) {
    for (const KvBatch::Op& op : batch->ops()) ops[next[static_cast<size_t>(op.cf)]++] = &op;
  }
  auto by_key = [](const KvBatch::Op* a, const KvBatch::Op* b) { return a->key < b->key; };
  for (size_t c = 0; c < kCfCount; ++c) {
    auto first = ops.begin() + static_cast<std::ptrdiff_t>(start[c]);
    auto last = ops.begin() + static_cast<std::ptrdiff_t>(start[c + 1]);
    if (!std::is_sorted(first, last, by_key)) std::stable_sort(first, last, by_key);
  }
  for (size_t i = 0; i < ops.size();) {
    const KvBatch::Op& op = *ops[i];
    const uint32_t cf = cf_ids[static_cast<size_t>(op.cf)];
    switch (op.kind) {
      case KvBatch::Kind::kAdd: {
        // The additions to one key up to its next put or delete, as one sum (none when it is 0).
        int64_t sum = 0;
        for (; i < ops.size() && ops[i]->kind == KvBatch::Kind::kAdd && ops[i]->cf == op.cf &&
               ops[i]->key == op.key;
             ++i) {
          sum += ops[i]->delta;
        }
        if (sum != 0) out->Merge(cf, op.key, EncodeCounter(sum));
        continue;
      }
      case KvBatch::Kind::kPut:
        out->Put(cf, op.key, op.value);
        break;
      case KvBatch::Kind::kDelete:
        out->Delete(cf, op.key);
        break;
    }
    ++i;
  }
}

RocksKv::RocksKv(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}

Result<std::unique_ptr<RocksKv>> RocksKv::Open(const RocksOptions& options) {
  fs::path dir(options.dir);
  bool fresh = false;
  int version = kFormatVersion;
  CQ_RETURN_IF_ERROR(CheckDirectory(dir, &fresh, &version));
  CQ_ASSIGN_OR_RETURN(int lock_fd, LockDirectory(dir));
  if (fresh) {
    // Under the lock now: another server may have created the store since the first look.
    Status again = CheckDirectory(dir, &fresh, &version);
    if (!again.ok()) {
      ::close(lock_fd);
      return again;
    }
  }
  auto impl = std::make_unique<Impl>();
  impl->options = options;
  impl->lock_fd = lock_fd;
  if (fresh) {
    if (!WriteMarker(lock_fd, /*fresh=*/true)) {
      ::close(lock_fd);
      return IOError(fmt::format("cannot write {}/{}", options.dir, kMarkerFile));
    }
  }
  {
    std::ofstream pid(dir / kPidFile, std::ios::trunc);
    pid << ::getpid() << "\n";
  }

  rocksdb::DBOptions db;
  db.create_if_missing = true;  // also finishes a creation cut short after the marker was written
  db.create_missing_column_families = true;
  db.IncreaseParallelism(2);
  // One committer thread writes: concurrent memtable inserts buy nothing, and without them the
  // memtables use the per-prefix insert hints (memtable_insert_with_hint_prefix_extractor).
  db.allow_concurrent_memtable_write = false;
  db.enable_write_thread_adaptive_yield = false;
  db.max_background_jobs = 2;
  db.keep_log_file_num = 3;
  db.info_log = NewInfoLog(options.dir, /*max_bytes=*/8 << 20);
  db.listeners.push_back(impl->NewListener());
  // Bound the WAL so that a restart replays at most about one memtable budget.
  db.max_total_wal_size = options.memtable_bytes * 2;
  db.write_buffer_manager = std::make_shared<rocksdb::WriteBufferManager>(options.memtable_bytes);
  // Few shards: the default (one per 512 KB) made shards smaller than one SST file's filter, so
  // such a filter could never stay cached and every point lookup read it from the file again.
  auto cache = rocksdb::NewLRUCache(options.block_cache_bytes, /*num_shard_bits=*/2);
  auto add = std::make_shared<AddOperator>();
  std::vector<rocksdb::ColumnFamilyDescriptor> descs;
  descs.emplace_back(rocksdb::kDefaultColumnFamilyName, rocksdb::ColumnFamilyOptions());
  for (int i = 0; i < kCfCount; ++i) {
    Cf cf = static_cast<Cf>(i);
    descs.emplace_back(std::string(CfName(cf)), CfOptions(cf, cache, add));
  }
  std::vector<rocksdb::ColumnFamilyHandle*> handles;
  rocksdb::DB* raw = nullptr;
  rocksdb::Status s = rocksdb::DB::Open(db, options.dir, descs, &handles, &raw);
  if (!s.ok()) {
    ::close(lock_fd);
    return FromRocks(s, fmt::format("opening the store in {}", options.dir));
  }
  impl->db.reset(raw);
  impl->default_cf = handles[0];
  impl->cfs.assign(handles.begin() + 1, handles.end());
  for (size_t i = 0; i < impl->cfs.size(); ++i) impl->cf_ids[i] = impl->cfs[i]->GetID();
  impl->StartCommitter();
  std::unique_ptr<RocksKv> kv(new RocksKv(std::move(impl)));
  if (!fresh && version < kFormatVersion) {
    // An older store: migrated in place, then marked with this format (docs/storage-format.md).
    CQ_LOG_INFO("cq.storage", "data directory {}: upgrading the store from format {} to {}",
                options.dir, version, kFormatVersion);
    Status up = UpgradeStore(kv.get(), version);
    if (!up.ok()) {
      return Status(up.code(), fmt::format("upgrading the store in {} from format {}: {}",
                                           options.dir, version, up.message()));
    }
    if (!WriteMarker(kv->impl_->lock_fd, /*fresh=*/false)) {
      return IOError(fmt::format("cannot write {}/{}", options.dir, kMarkerFile));
    }
  }
  return kv;
}

void RocksKv::Close() { impl_->StopCommitter(); }

RocksKv::~RocksKv() {
  Impl& m = *impl_;
  m.StopCommitter();  // writes what is still queued
  for (auto* h : m.cfs) m.db->DestroyColumnFamilyHandle(h).PermitUncheckedError();
  if (m.default_cf != nullptr) m.db->DestroyColumnFamilyHandle(m.default_cf).PermitUncheckedError();
  m.db->Close().PermitUncheckedError();
  m.db.reset();
  std::error_code ec;
  fs::remove(fs::path(m.options.dir) / kPidFile, ec);
  if (m.lock_fd >= 0) ::close(m.lock_fd);
}

void DisablePerfCounting() {
  thread_local bool done = false;
  if (done) return;
  rocksdb::SetPerfLevel(rocksdb::PerfLevel::kDisable);
  done = true;
}

Result<std::optional<std::string>> RocksKv::Get(Cf cf, std::string_view key) {
  DisablePerfCounting();
  if (auto pending = impl_->OverlayGet(cf, key)) return *pending;
  std::string value;
  rocksdb::Status s =
      impl_->db->Get(rocksdb::ReadOptions(), impl_->cfs[static_cast<int>(cf)], key, &value);
  if (s.IsNotFound()) return std::optional<std::string>();
  if (!s.ok()) return FromRocks(s, "read");
  return std::optional<std::string>(std::move(value));
}

Result<std::vector<std::optional<std::string>>> RocksKv::MultiGet(
    Cf cf, const std::vector<std::string>& keys) {
  DisablePerfCounting();
  std::vector<std::optional<std::string>> out(keys.size());
  // The overlay's answers first (batches not yet durable), then one batched read for the rest.
  std::vector<size_t> from_db;
  impl_->OverlayGetMany(cf, keys, &out, &from_db);
  if (from_db.empty()) return out;
  std::vector<rocksdb::Slice> slices;
  slices.reserve(from_db.size());
  for (size_t i : from_db) slices.emplace_back(keys[i]);
  std::vector<rocksdb::PinnableSlice> values(from_db.size());
  std::vector<rocksdb::Status> statuses(from_db.size());
  impl_->db->MultiGet(rocksdb::ReadOptions(), impl_->cfs[static_cast<int>(cf)], slices.size(),
                      slices.data(), values.data(), statuses.data());
  for (size_t j = 0; j < from_db.size(); ++j) {
    if (statuses[j].IsNotFound()) continue;
    if (!statuses[j].ok()) return FromRocks(statuses[j], "read");
    out[from_db[j]] = values[j].ToString();
  }
  return out;
}

std::unique_ptr<KvIterator> RocksKv::Scan(Cf cf, std::string lower, std::string upper) {
  DisablePerfCounting();  // the walk compares keys on this thread
  // The overlay first, then the iterator: a batch made durable in between is seen by both, and
  // the overlay's copy wins with the same content.
  std::vector<std::pair<std::string, std::optional<std::string>>> overlay =
      impl_->OverlayRange(cf, lower, upper);
  auto bounds = std::make_unique<RocksIterator::Bounds>();
  bounds->lower = std::move(lower);
  bounds->upper = std::move(upper);
  return std::make_unique<RocksIterator>(std::move(bounds), impl_->db.get(),
                                         impl_->cfs[static_cast<int>(cf)], std::move(overlay));
}

std::optional<Status> RocksKv::Commit(KvBatch batch, UniqueFunction<void(Status)> done) {
  return impl_->Enqueue(std::move(batch), std::move(done));
}

std::vector<std::pair<std::string, int64_t>> RocksKv::Stats() {
  std::vector<std::pair<std::string, int64_t>> out;
  auto prop = [&](const char* name, const std::string& key) {
    uint64_t v = 0;
    if (impl_->db->GetAggregatedIntProperty(name, &v))
      out.emplace_back(key, static_cast<int64_t>(v));
  };
  prop("rocksdb.estimate-live-data-size", "live_data_bytes");
  prop("rocksdb.total-sst-files-size", "sst_files_bytes");
  prop("rocksdb.cur-size-all-mem-tables", "memtable_bytes");
  prop("rocksdb.estimate-pending-compaction-bytes", "pending_compaction_bytes");
  prop("rocksdb.num-running-compactions", "running_compactions");
  // One cache serves every column family, and each reports its whole usage: asked of one.
  uint64_t cache_usage = 0;
  if (impl_->db->GetIntProperty(impl_->cfs[0], rocksdb::DB::Properties::kBlockCacheUsage,
                                &cache_usage)) {
    out.emplace_back("block_cache_bytes", static_cast<int64_t>(cache_usage));
  }
  uint64_t stopped = 0;
  if (impl_->db->GetIntProperty(rocksdb::DB::Properties::kIsWriteStopped, &stopped)) {
    out.emplace_back("write_stopped", static_cast<int64_t>(stopped));
  }
  // Writes slowed down or stopped since the open, over every column family.
  int64_t stalls = 0;
  std::vector<rocksdb::ColumnFamilyHandle*> all = impl_->cfs;
  all.push_back(impl_->default_cf);
  for (rocksdb::ColumnFamilyHandle* cf : all) {
    std::map<std::string, std::string> m;
    if (!impl_->db->GetMapProperty(cf, rocksdb::DB::Properties::kCFStats, &m)) continue;
    for (const char* key : {"io_stalls.total_stop", "io_stalls.total_slowdown"}) {
      auto it = m.find(key);
      if (it != m.end()) stalls += std::atoll(it->second.c_str());
    }
  }
  out.emplace_back("write_stalls", stalls);
  out.emplace_back("writable", impl_->stopped.load() ? 0 : 1);
  std::error_code ec;
  std::filesystem::space_info space = std::filesystem::space(impl_->db->GetName(), ec);
  if (!ec) {
    out.emplace_back("data_dir_free_bytes", static_cast<int64_t>(space.available));
    out.emplace_back("data_dir_size_bytes", static_cast<int64_t>(space.capacity));
  }
  return out;
}

bool RocksKv::WriteBacklog() {
  // A full memtable waiting for its flush: once max_write_buffer_number of them wait, RocksDB
  // stops every write of that column family until a flush ends (docs/benchmarks.md, purgeTopic).
  for (rocksdb::ColumnFamilyHandle* cf : impl_->cfs) {
    uint64_t immutable = 0;
    if (impl_->db->GetIntProperty(cf, rocksdb::DB::Properties::kNumImmutableMemTable, &immutable) &&
        immutable > 0) {
      return true;
    }
  }
  // Writes already slowed down or stopped (level-0 files or compaction debt piling up).
  uint64_t v = 0;
  if (impl_->db->GetIntProperty(rocksdb::DB::Properties::kActualDelayedWriteRate, &v) && v > 0) {
    return true;
  }
  return impl_->db->GetIntProperty(rocksdb::DB::Properties::kIsWriteStopped, &v) && v > 0;
}

}  // namespace chronoq::storage
