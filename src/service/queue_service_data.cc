// The operations on the data of API-EXTENSIONS.md section 8 (queue_service.h): online backup.
#include "service/queue_service.h"

namespace chronoq::service {

void QueueService::Backup(std::string dir, Callback<Result<backend::BackupInfo>> done) {
  if (dir.empty()) return done(InvalidArgument("the backup directory 'to' is empty"));
  backend_->Backup(std::move(dir), std::move(done));
}

}  // namespace chronoq::service
