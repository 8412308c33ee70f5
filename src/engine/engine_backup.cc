// Engine::Backup: the online backup (docs/operations.md "Backup and restore"). Everything the
// engine knows is in its store (records, indexes, counters, the sequence reservation, topic
// configurations); its memory is rebuilt from the store at start. So a checkpoint of the store
// is a complete copy: it holds every batch committed before it began, which includes every
// operation answered before the backup request arrived (an answer waits for durability). It
// runs on a thread of its own: a checkpoint flushes the memtables and takes from milliseconds to
// seconds, while the shards go on serving.
#include <chrono>

#include "engine/engine.h"

namespace chronoq::engine {

void Engine::Backup(std::string dir, Callback<Result<backend::BackupInfo>> done) {
  std::thread previous;
  {
    base::MutexLock lock(backup_mu_);
    if (backup_running_) {
      lock.Unlock();
      done(ResourceExhausted("a backup is already running on this server; try again when it ends"));
      return;
    }
    backup_running_ = true;
    previous = std::move(backup_thread_);
    backup_thread_ = std::thread([this, dir = std::move(dir), done = std::move(done)]() mutable {
      const auto start = std::chrono::steady_clock::now();
      Result<storage::KvStore::CheckpointInfo> made = store_->kv()->Checkpoint(dir);
      const auto took =
          std::chrono::duration_cast<Millis>(std::chrono::steady_clock::now() - start);
      {
        base::MutexLock lock(backup_mu_);
        backup_running_ = false;
      }
      if (!made.has_value()) {
        done(made.error());
        return;
      }
      done(backend::BackupInfo{
          .dir = made->dir, .bytes = made->bytes, .files = made->files, .took = took});
    });
  }
  // The previous backup had ended (backup_running_ was false): its thread is at its end.
  if (previous.joinable()) previous.join();
}

void Engine::JoinBackup() {
  std::thread t;
  {
    base::MutexLock lock(backup_mu_);
    t = std::move(backup_thread_);
  }
  if (t.joinable()) t.join();
}

}  // namespace chronoq::engine
