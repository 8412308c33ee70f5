// RocksKv and failing writes (rocks_kv_impl.h): an info log that survives a full disk, the
// listener that tracks RocksDB's background error, and resuming once the cause is gone.
//
// What RocksDB 7.8 does on a full disk (docs/storage-format.md, "Disk full"): the WAL append
// fails with IOError(NoSpace); RocksDB records it as a hard background error and from then on
// refuses every write with that status (reads keep working), without applying the failed batch.
// A failed memtable flush does the same. DB::Resume() flushes the memtables, starts a new WAL and
// clears the error; it fails, leaving the error in place, while the disk is still full.
#include <fcntl.h>
#include <fmt/format.h>
#include <rocksdb/listener.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdarg>
#include <cstdio>
#include <ctime>
#include <filesystem>
#include <optional>
#include <thread>

#include "base/log.h"
#include "storage/rocksdb/rocks_kv_impl.h"

namespace chronoq::storage {
namespace {

constexpr const char* kLog = "cq.storage";

class InfoLog final : public rocksdb::Logger {
 public:
  InfoLog(std::string dir, size_t max_bytes)
      : rocksdb::Logger(rocksdb::InfoLogLevel::INFO_LEVEL),
        dir_(std::move(dir)),
        max_bytes_(max_bytes) {
    base::MutexLock lock(mu_);
    Open();
  }
  ~InfoLog() override {
    if (fd_ >= 0) ::close(fd_);
  }

  using rocksdb::Logger::Logv;
  void Logv(const char* format, va_list ap) override {
    Logv(rocksdb::InfoLogLevel::INFO_LEVEL, format, ap);
  }
  void Logv(const rocksdb::InfoLogLevel level, const char* format, va_list ap) override {
    if (level < GetInfoLogLevel()) return;
    char line[1024];
    auto now = std::chrono::system_clock::now();
    std::time_t secs = std::chrono::system_clock::to_time_t(now);
    auto micros = std::chrono::duration_cast<std::chrono::microseconds>(now.time_since_epoch()) %
                  std::chrono::seconds(1);
    std::tm tm{};
    ::localtime_r(&secs, &tm);
    int n = std::snprintf(line, sizeof(line), "%04d/%02d/%02d-%02d:%02d:%02d.%06ld %zx ",
                          tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min,
                          tm.tm_sec, static_cast<long>(micros.count()),
                          std::hash<std::thread::id>{}(std::this_thread::get_id()) & 0xffffff);
    int m = std::vsnprintf(line + n, sizeof(line) - n - 1, format, ap);
    size_t len = static_cast<size_t>(n) + std::min<size_t>(m < 0 ? 0 : m, sizeof(line) - n - 2);
    if (len == 0 || line[len - 1] != '\n') line[len++] = '\n';
    base::MutexLock lock(mu_);
    if (size_ + len > max_bytes_) Roll();
    if (fd_ < 0) return;
    // A failed or short write (a full disk) loses this line, nothing else.
    ssize_t w = ::write(fd_, line, len);
    if (w > 0) size_ += static_cast<size_t>(w);
  }
  size_t GetLogFileSize() const override {
    base::MutexLock lock(mu_);
    return size_;
  }

 private:
  void Open() CQ_REQUIRES(mu_) {
    fd_ = ::open((dir_ + "/LOG").c_str(), O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
    struct stat st {};
    size_ = fd_ >= 0 && ::fstat(fd_, &st) == 0 ? static_cast<size_t>(st.st_size) : 0;
  }
  void Roll() CQ_REQUIRES(mu_) {
    if (fd_ >= 0) ::close(fd_);
    fd_ = -1;
    auto micros = std::chrono::duration_cast<std::chrono::microseconds>(
                      std::chrono::system_clock::now().time_since_epoch())
                      .count();
    std::error_code ec;
    std::filesystem::rename(dir_ + "/LOG", fmt::format("{}/LOG.old.{}", dir_, micros), ec);
    Open();
  }

  const std::string dir_;
  const size_t max_bytes_;
  mutable base::Mutex mu_;
  int fd_ CQ_GUARDED_BY(mu_) = -1;
  size_t size_ CQ_GUARDED_BY(mu_) = 0;
};

class FaultListener final : public rocksdb::EventListener {
 public:
  explicit FaultListener(RocksKv::Impl* impl) : impl_(impl) {}
  void OnBackgroundError(rocksdb::BackgroundErrorReason, rocksdb::Status* s) override {
    impl_->OnBackgroundError(*s);
  }
  void OnErrorRecoveryBegin(rocksdb::BackgroundErrorReason, rocksdb::Status,
                            bool* auto_recovery) override {
    *auto_recovery = false;  // the committer resumes (MaybeResume)
  }
  void OnErrorRecoveryEnd(const rocksdb::BackgroundErrorRecoveryInfo& info) override {
    if (info.new_bg_error.ok()) impl_->OnRecovered();
  }

 private:
  RocksKv::Impl* impl_;  // owns the database, which owns this listener
};

}  // namespace

std::shared_ptr<rocksdb::Logger> NewInfoLog(const std::string& dir, size_t max_bytes) {
  return std::make_shared<InfoLog>(dir, max_bytes);
}

std::shared_ptr<rocksdb::EventListener> RocksKv::Impl::NewListener() {
  return std::make_shared<FaultListener>(this);
}

void RocksKv::Impl::OnBackgroundError(const rocksdb::Status& s) {
  const bool stops = s.severity() >= rocksdb::Status::Severity::kHardError;
  {
    base::MutexLock lock(bg_mu);
    if (!bg_error.ok() && bg_error.severity() >= s.severity()) return;  // nothing new
    bg_error = s;
  }
  if (stops && !stopped.exchange(true)) {
    CQ_LOG_ERROR(kLog, "the store refuses writes until the cause is gone: {}{}", s.ToString(),
                 s.IsNoSpace() ? " (free space on the data directory's disk)" : "");
  } else if (!stops) {
    CQ_LOG_WARN(kLog, "background storage error (writes go on): {}", s.ToString());
  }
  cv.SignalAll();  // the committer now also wakes to retry without writes queued
}

void RocksKv::Impl::OnRecovered() {
  {
    base::MutexLock lock(bg_mu);
    bg_error = rocksdb::Status::OK();
  }
  if (stopped.exchange(false)) CQ_LOG_WARN(kLog, "the store accepts writes again");
}

bool RocksKv::Impl::ResumeMayHelp(const rocksdb::Status& error) {
  if (error.ok() || error.severity() > rocksdb::Status::Severity::kHardError) {
    return false;  // nothing to resume, or only a restart can (a fatal or unrecoverable error)
  }
  auto spacing = std::chrono::milliseconds(1000);
  if (error.IsNoSpace()) {
    // Resuming flushes the memtables: worth trying once they fit.
    uint64_t memtables = 0;
    db->GetAggregatedIntProperty(rocksdb::DB::Properties::kCurSizeAllMemTables, &memtables);
    std::error_code ec;
    std::filesystem::space_info space = std::filesystem::space(options.dir, ec);
    if (ec || space.available < memtables + (uint64_t{1} << 20)) return false;
    spacing = std::chrono::milliseconds(100);
  }
  base::MutexLock lock(bg_mu);
  return std::chrono::steady_clock::now() - last_failed_resume >= spacing;
}

std::optional<Status> RocksKv::Impl::WriteRefusal() {
  rocksdb::Status error;
  {
    base::MutexLock lock(bg_mu);
    error = bg_error;
  }
  if (error.ok() || error.severity() < rocksdb::Status::Severity::kHardError) return std::nullopt;
  if (ResumeMayHelp(error)) return std::nullopt;  // the committer resumes before writing it
  return FromRocks(error, "writing to the store");
}

void RocksKv::Impl::MaybeResume() {
  rocksdb::Status error;
  {
    base::MutexLock lock(bg_mu);
    error = bg_error;
  }
  if (!ResumeMayHelp(error)) return;
  rocksdb::Status s = db->Resume();
  if (s.ok()) {
    OnRecovered();
  } else {
    CQ_LOG_DEBUG(kLog, "resuming the store failed: {}", s.ToString());
    base::MutexLock lock(bg_mu);
    last_failed_resume = std::chrono::steady_clock::now();
  }
}

}  // namespace chronoq::storage
