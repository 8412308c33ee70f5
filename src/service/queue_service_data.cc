// The operations on the data of API-EXTENSIONS.md section 8 (queue_service.h): online backup.
#include "service/queue_service.h"

namespace chronoq::service {

void QueueService::Backup(std::string dir, Callback<Result<backend::BackupInfo>> done) {
  if (dir.empty()) return done(InvalidArgument("the backup directory 'to' is empty"));
  backend_->Backup(std::move(dir), std::move(done));
}

void QueueService::GetMsgHistory(MessageRef req,
                                 Callback<Result<std::vector<core::HistoryEntry>>> done) {
  if (Status s = CheckRef(req); !s.ok()) return done(std::move(s));
  backend_->GetHistory(std::move(req.topic), std::move(req.msg_id), std::move(done));
}

}  // namespace chronoq::service
