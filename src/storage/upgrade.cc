#include "storage/upgrade.h"

#include <future>
#include <optional>
#include <string>

#include "base/log.h"
#include "storage/codec.h"

namespace chronoq::storage {
namespace {

constexpr const char* kLog = "cq.storage";
// Entries per upgrade batch: bounds what a group-commit store holds in memory before it is
// durable.
constexpr size_t kChunk = 4096;

Status CommitAndWait(KvStore* kv, KvBatch batch) {
  std::promise<Status> written;
  std::future<Status> later = written.get_future();
  std::optional<Status> now =
      kv->Commit(std::move(batch), [&written](Status s) { written.set_value(std::move(s)); });
  return now ? *now : later.get();
}

// 1 -> 2: one `ended` entry per retained ended message, from the retention index (which holds
// exactly those). A retention entry whose record is gone or belongs to a newer message (its id
// was reused) indexes nothing: the purge removes it as before.
Status AddEndedIndex(KvStore* kv) {
  std::string after;  // the last retention key read (exclusive lower bound of the next chunk)
  int64_t indexed = 0;
  for (;;) {
    KvBatch batch;
    size_t read = 0;
    {
      auto it = kv->Scan(Cf::kRetention, after.empty() ? std::string() : after + '\0', "");
      for (; it->Valid() && read < kChunk; it->Next(), ++read) {
        after = std::string(it->key());
        CQ_ASSIGN_OR_RETURN(NsRetentionEntry e, DecodeRetentionAnyNs(it->key(), it->value()));
        CQ_ASSIGN_OR_RETURN(std::optional<std::string> meta,
                            kv->Get(Cf::kRecords, RecordKey(e.ns, e.entry.topic, e.entry.msg_id)));
        if (!meta) continue;
        core::MessageRecord r;
        CQ_RETURN_IF_ERROR(DecodeMeta(*meta, &r));
        if (r.seq != e.entry.seq || r.phase != core::Phase::kEnded) continue;
        batch.Put(Cf::kEnded, EndedKey(e.ns, e.entry.topic, r.end_status, r.ended_at, r.seq),
                  e.entry.msg_id);
        ++indexed;
      }
      CQ_RETURN_IF_ERROR(it->status());
    }
    if (!batch.empty()) CQ_RETURN_IF_ERROR(CommitAndWait(kv, std::move(batch)));
    if (read < kChunk) break;
  }
  CQ_LOG_INFO(kLog, "store format 1 -> 2: {} retained ended messages indexed by topic and status",
              indexed);
  return Status::Ok();
}

}  // namespace

Status UpgradeStore(KvStore* kv, int from_version) {
  if (from_version < kOldestFormatVersion || from_version > kFormatVersion) {
    return Status(Errc::kInvalidArgument,
                  "no upgrade from store format " + std::to_string(from_version));
  }
  if (from_version < 2) CQ_RETURN_IF_ERROR(AddEndedIndex(kv));
  // 2 -> 3: nothing to rewrite. Version 2 record metadata still decodes (no retry interval, no
  // dead letter) and a store without stored topic configurations has none; the bump only makes
  // older builds refuse a store holding what they cannot read.
  // 3 -> 4: nothing to rewrite either. Messages sent before keep their `records` and `payloads`
  // entries, which MessageStore reads when a message has no `sent` value; the bump makes older
  // builds, which would not see messages kept in `sent`, refuse the store.
  // 4 -> 5: nothing to rewrite. Version 3 record metadata decodes in the pull lane without a
  // callback; the bump makes older builds, which cannot read version 4 metadata (push lane,
  // callback) nor a topic configuration with a callback, refuse the store.
  // 5 -> 6: nothing to rewrite. Version 4 metadata still decodes; records are written in version
  // 5 (varints) from the upgrade on, which older builds cannot read.
  return Status::Ok();
}

}  // namespace chronoq::storage
