// RocksKv::Checkpoint: the online backup (docs/operations.md "Backup and restore").
//
// A RocksDB checkpoint flushes the memtables (log_size_for_flush 0), then hard-links the table
// files (copies them when the target is on another file system) and copies the MANIFEST, the
// OPTIONS file and the live WAL files, without stopping writers. Everything written before the
// call, synced or not (sync-writes=false), is in the copy: the flush writes it to table files
// that the checkpoint fsyncs. chronoq keeps one more file outside RocksDB, the CHRONOQ marker
// (format version, directory lock); the copy gets its own marker with the source's content. The
// lock and the pid file belong to the running server and are not copied.
//
// The copy is built in `<dir>.partial` and renamed to `dir` once complete and synced, so that an
// interrupted backup never leaves a directory at `dir` that looks like a store.
#include <fcntl.h>
#include <fmt/format.h>
#include <rocksdb/utilities/checkpoint.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "storage/rocksdb/rocks_kv_impl.h"

namespace chronoq::storage {
namespace {

namespace fs = std::filesystem;

constexpr const char* kMarkerFile = "CHRONOQ";  // rocks_kv.cc

// The refusals that depend only on `dir` and its parent, with a sentence naming `to`.
Status CheckTarget(const fs::path& dir) {
  if (dir.empty()) return InvalidArgument("the backup directory 'to' is empty");
  if (!dir.is_absolute()) {
    return InvalidArgument(fmt::format(
        "the backup directory 'to' must be an absolute path on the server's machine, not {}",
        dir.string()));
  }
  std::error_code ec;
  if (fs::exists(dir, ec) || fs::is_symlink(dir, ec)) {
    return InvalidArgument(
        fmt::format("the backup directory {} already exists; give a new directory (a backup never "
                    "overwrites one)",
                    dir.string()));
  }
  fs::path parent = dir.parent_path();
  if (!fs::is_directory(parent, ec)) {
    return InvalidArgument(fmt::format(
        "the backup directory's parent {} does not exist or is not a directory", parent.string()));
  }
  if (::access(parent.c_str(), W_OK | X_OK) != 0) {
    return InvalidArgument(fmt::format("the backup directory's parent {} is not writable: {}",
                                       parent.string(), std::strerror(errno)));
  }
  fs::path partial = dir;
  partial += ".partial";
  if (fs::exists(partial, ec)) {
    return InvalidArgument(fmt::format(
        "{} exists: another backup to {} is running, or one was interrupted (remove it)",
        partial.string(), dir.string()));
  }
  return Status::Ok();
}

Status SyncPath(const fs::path& p, int flags) {
  int fd = ::open(p.c_str(), flags | O_CLOEXEC);
  if (fd < 0) return IOError(fmt::format("cannot open {}: {}", p.string(), std::strerror(errno)));
  int rc = ::fsync(fd);
  int err = errno;
  ::close(fd);
  if (rc != 0) return IOError(fmt::format("cannot sync {}: {}", p.string(), std::strerror(err)));
  return Status::Ok();
}

// Writes the source's marker into the copy and syncs it.
Status CopyMarker(const fs::path& from_dir, const fs::path& to_dir) {
  std::ifstream in(from_dir / kMarkerFile, std::ios::binary);
  std::stringstream text;
  text << in.rdbuf();
  if (!in.good() && !in.eof()) {
    return IOError(fmt::format("cannot read {}", (from_dir / kMarkerFile).string()));
  }
  fs::path to = to_dir / kMarkerFile;
  {
    std::ofstream out(to, std::ios::binary | std::ios::trunc);
    out << text.str();
    out.flush();
    if (!out) return IOError(fmt::format("cannot write {}", to.string()));
  }
  return SyncPath(to, O_RDONLY);
}

}  // namespace

Result<KvStore::CheckpointInfo> RocksKv::Checkpoint(const std::string& dir_text) {
  fs::path dir = fs::path(dir_text).lexically_normal();
  if (!dir.has_filename() && dir.has_parent_path()) dir = dir.parent_path();
  CQ_RETURN_IF_ERROR(CheckTarget(dir));
  fs::path partial = dir;
  partial += ".partial";

  rocksdb::Checkpoint* raw = nullptr;
  rocksdb::Status s = rocksdb::Checkpoint::Create(impl_->db.get(), &raw);
  if (!s.ok()) return FromRocks(s, "starting a backup");
  std::unique_ptr<rocksdb::Checkpoint> checkpoint(raw);
  s = checkpoint->CreateCheckpoint(partial.string(), /*log_size_for_flush=*/0);
  std::error_code ec;
  if (!s.ok()) {
    fs::remove_all(partial, ec);
    return FromRocks(s, fmt::format("writing the backup into {}", partial.string()));
  }
  Status st = CopyMarker(impl_->options.dir, partial);
  if (st.ok()) st = SyncPath(partial, O_RDONLY | O_DIRECTORY);
  if (st.ok()) {
    fs::rename(partial, dir, ec);
    if (ec) {
      st = IOError(
          fmt::format("cannot rename {} to {}: {}", partial.string(), dir.string(), ec.message()));
    }
  }
  if (st.ok()) st = SyncPath(dir.parent_path(), O_RDONLY | O_DIRECTORY);
  if (!st.ok()) {
    fs::remove_all(partial, ec);
    return st;
  }
  CheckpointInfo info;
  info.dir = dir.string();
  for (const fs::directory_entry& e : fs::directory_iterator(dir, ec)) {
    std::error_code size_ec;
    uintmax_t size = e.is_regular_file(size_ec) ? e.file_size(size_ec) : 0;
    if (size_ec) continue;
    info.bytes += static_cast<int64_t>(size);
    ++info.files;
  }
  return info;
}

}  // namespace chronoq::storage
