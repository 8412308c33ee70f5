#include "storage/message_store.h"

#include <algorithm>
#include <tuple>
#include <vector>

#include "base/check.h"

namespace chronoq::storage {
namespace {

VisKind KindOf(const core::MessageRecord& r) {
  return r.phase == core::Phase::kDelivered ? VisKind::kDelivered : VisKind::kPending;
}

bool InLifePhase(const core::MessageRecord& r) { return r.phase != core::Phase::kEnded; }

}  // namespace

void MessageStore::Batch::PutRecord(const core::MessageRecord& r) {
  kv_.Put(Cf::kRecords, RecordKey(s_->ns_, r.topic, r.msg_id), EncodeMeta(r));
}

void MessageStore::Batch::PutPayload(const core::MessageRecord& r) {
  // Readers take the payload from `sent` when it is there, else from `payloads` (older stores).
  kv_.Put(Cf::kSent, RecordKey(s_->ns_, r.topic, r.msg_id),
          EncodeSentValue(EncodeMeta(r), r.payload));
}

void MessageStore::Batch::PutNew(const core::MessageRecord& r) {
  // The metadata on the stack (a record without a long last error or callback), copied into
  // both values from there: no string of its own (a longer one is written into long_meta).
  char buf[192];
  std::string long_meta;
  const std::string_view meta = EncodeMetaInto(r, buf, sizeof(buf), &long_meta);
  if (InLifePhase(r)) {
    kv_.Put(Cf::kVis, VisKey(s_->ns_, r.topic, KindOf(r), r.visible_at, r.seq),
            EncodeVisValue(r.msg_id, meta));
  }
  kv_.Put(Cf::kSent, RecordKey(s_->ns_, r.topic, r.msg_id), EncodeSentValue(meta, r.payload));
}

void MessageStore::Batch::DeleteRecord(std::string_view topic, std::string_view msg_id) {
  std::string key = RecordKey(s_->ns_, topic, msg_id);
  kv_.Delete(Cf::kRecords, key);
  kv_.Delete(Cf::kSent, key);
  kv_.Delete(Cf::kPayloads, std::move(key));
}

void MessageStore::Batch::DeleteRecordMeta(std::string_view topic, std::string_view msg_id) {
  kv_.Delete(Cf::kRecords, RecordKey(s_->ns_, topic, msg_id));
}

void MessageStore::Batch::MoveVis(const core::MessageRecord* before,
                                  const core::MessageRecord* after) {
  if (before != nullptr && InLifePhase(*before)) {
    kv_.Delete(Cf::kVis,
               VisKey(s_->ns_, before->topic, KindOf(*before), before->visible_at, before->seq));
  }
  if (after != nullptr && InLifePhase(*after)) {
    kv_.Put(Cf::kVis, VisKey(s_->ns_, after->topic, KindOf(*after), after->visible_at, after->seq),
            EncodeVisValue(*after));
  }
}

void MessageStore::Batch::PutRecordMoveVis(const core::MessageRecord* before,
                                           const core::MessageRecord& after) {
  std::string meta = EncodeMeta(after);
  if (before != nullptr && InLifePhase(*before)) {
    kv_.Delete(Cf::kVis,
               VisKey(s_->ns_, before->topic, KindOf(*before), before->visible_at, before->seq));
  }
  if (InLifePhase(after)) {
    kv_.Put(Cf::kVis, VisKey(s_->ns_, after.topic, KindOf(after), after.visible_at, after.seq),
            EncodeVisValue(after.msg_id, meta));
  }
  // A delivered message's metadata is its kind-1 vis entry alone (docs/storage-format.md,
  // "records and deliveries"): a delivery writes no `records` entry, whose key lies at a random
  // position of the memtable.
  if (after.phase == core::Phase::kDelivered) return;
  kv_.Put(Cf::kRecords, RecordKey(s_->ns_, after.topic, after.msg_id), std::move(meta));
}

void MessageStore::Batch::HistAdd(std::string_view topic, TimePoint trigger, int64_t delta) {
  if (delta == 0) return;
  if (last_hist_ < kv_.size() && trigger == last_hist_time_ && topic == last_hist_topic_) {
    kv_.mutable_ops()[last_hist_].delta += delta;  // the same counter: no second key
    return;
  }
  last_hist_ = kv_.size();
  last_hist_topic_.assign(topic);
  last_hist_time_ = trigger;
  kv_.Add(Cf::kHist, HistKey(s_->ns_, topic, trigger), delta);
  ++hist_adds_;
}

void MessageStore::Batch::CoalesceCounters() {
  std::vector<KvBatch::Op>& ops = kv_.mutable_ops();
  std::vector<size_t> adds;  // positions of the additions, sorted by key (then position)
  adds.reserve(hist_adds_);
  for (size_t i = 0; i < ops.size(); ++i) {
    if (ops[i].kind == KvBatch::Kind::kAdd) adds.push_back(i);
  }
  std::stable_sort(adds.begin(), adds.end(), [&](size_t a, size_t b) {
    return std::tie(ops[a].cf, ops[a].key) < std::tie(ops[b].cf, ops[b].key);
  });
  std::vector<bool> drop(ops.size());
  size_t dropped = 0;
  for (size_t i = 0; i < adds.size();) {
    KvBatch::Op& first = ops[adds[i]];
    size_t j = i + 1;
    for (; j < adds.size() && ops[adds[j]].cf == first.cf && ops[adds[j]].key == first.key; ++j) {
      first.delta += ops[adds[j]].delta;
      drop[adds[j]] = true;
      ++dropped;
    }
    if (first.delta == 0) {
      drop[adds[i]] = true;
      ++dropped;
    }
    i = j;
  }
  hist_adds_ = adds.size() - dropped;
  if (dropped == 0) return;
  std::vector<KvBatch::Op> kept;
  kept.reserve(ops.size() - dropped);
  for (size_t i = 0; i < ops.size(); ++i) {
    if (!drop[i]) kept.push_back(std::move(ops[i]));
  }
  ops = std::move(kept);
}

void MessageStore::Batch::PutEnded(const core::MessageRecord& r, TimePoint purge_at) {
  CQ_DCHECK(r.phase == core::Phase::kEnded, "PutEnded of '{}' in life", r.msg_id);
  kv_.Put(Cf::kRetention, RetentionKey(s_->ns_, purge_at, r.seq),
          EncodeRetentionValue(r.topic, r.msg_id));
  kv_.Put(Cf::kEnded, EndedKey(s_->ns_, r.topic, r.end_status, r.ended_at, r.seq), r.msg_id);
}

void MessageStore::Batch::DeleteEnded(const core::MessageRecord& r, TimePoint purge_at) {
  kv_.Delete(Cf::kRetention, RetentionKey(s_->ns_, purge_at, r.seq));
  kv_.Delete(Cf::kEnded, EndedKey(s_->ns_, r.topic, r.end_status, r.ended_at, r.seq));
}

void MessageStore::Batch::DeleteRetentionEntry(TimePoint purge_at, uint64_t seq) {
  kv_.Delete(Cf::kRetention, RetentionKey(s_->ns_, purge_at, seq));
}

void MessageStore::Batch::PutMeta(std::string_view name, std::string value) {
  kv_.Put(Cf::kMeta, s_->MetaKey(name), std::move(value));
}

void MessageStore::Batch::DeleteMeta(std::string_view name) {
  kv_.Delete(Cf::kMeta, s_->MetaKey(name));
}

namespace {
std::string HistoryName(std::string_view topic, std::string_view msg_id) {
  return std::string(kHistoryMetaPrefix) + RecordKey("", topic, msg_id);
}
}  // namespace

void MessageStore::PutHistory(Batch& batch, std::string_view topic, std::string_view msg_id,
                              std::string value) const {
  batch.PutMeta(HistoryName(topic, msg_id), std::move(value));
}

void MessageStore::DeleteHistory(Batch& batch, std::string_view topic,
                                 std::string_view msg_id) const {
  batch.DeleteMeta(HistoryName(topic, msg_id));
}

Result<std::optional<std::string>> MessageStore::GetHistory(std::string_view topic,
                                                            std::string_view msg_id) {
  return GetMeta(HistoryName(topic, msg_id));
}

void MessageStore::PutTopicConfig(Batch& batch, std::string_view topic,
                                  const core::TopicConfig& c) const {
  batch.PutMeta(std::string(kTopicConfigMetaPrefix) + std::string(topic), EncodeTopicConfig(c));
}

void MessageStore::DeleteTopicConfig(Batch& batch, std::string_view topic) const {
  batch.DeleteMeta(std::string(kTopicConfigMetaPrefix) + std::string(topic));
}

Status MessageStore::ScanTopicConfigs(
    const std::function<void(std::string topic, core::TopicConfig c)>& fn) {
  const std::string prefix = MetaKey(kTopicConfigMetaPrefix);
  auto it = kv_->Scan(Cf::kMeta, prefix, PrefixEnd(prefix));
  for (; it->Valid(); it->Next()) {
    CQ_ASSIGN_OR_RETURN(core::TopicConfig c, DecodeTopicConfig(it->value()));
    fn(std::string(it->key().substr(prefix.size())), std::move(c));
  }
  return it->status();
}

std::string MessageStore::MetaKey(std::string_view name) const {
  std::string key = TopicPrefix(ns_, "");
  key.append(name);
  return key;
}

Result<std::optional<std::string>> MessageStore::GetMeta(std::string_view name) {
  return kv_->Get(Cf::kMeta, MetaKey(name));
}

// A message's metadata is its `records` entry, or, before its first change, the one in its
// `sent` value; its payload is the one in its `sent` value, or, for a message sent before format
// 4, its `payloads` entry (docs/storage-format.md).
Result<std::optional<core::MessageRecord>> MessageStore::GetRecord(std::string_view topic,
                                                                   std::string_view msg_id,
                                                                   bool with_payload) {
  std::string key = RecordKey(ns_, topic, msg_id);
  CQ_ASSIGN_OR_RETURN(std::optional<std::string> meta, kv_->Get(Cf::kRecords, key));
  core::MessageRecord r;
  if (meta) {
    CQ_RETURN_IF_ERROR(DecodeMeta(*meta, &r));
    if (with_payload) {
      CQ_ASSIGN_OR_RETURN(std::optional<std::string> payload, GetPayload(topic, msg_id));
      if (payload) r.payload = std::move(*payload);
    }
  } else {
    CQ_ASSIGN_OR_RETURN(std::optional<std::string> sent, kv_->Get(Cf::kSent, key));
    if (!sent) return std::optional<core::MessageRecord>();
    CQ_ASSIGN_OR_RETURN(SentValue v, DecodeSentValue(*sent));
    CQ_RETURN_IF_ERROR(DecodeMeta(v.meta, &r));
    if (with_payload) r.payload = std::string(v.payload);
  }
  r.topic = std::string(topic);
  r.msg_id = std::string(msg_id);
  return std::optional<core::MessageRecord>(std::move(r));
}

Result<std::optional<std::string>> MessageStore::GetPayload(std::string_view topic,
                                                            std::string_view msg_id) {
  std::string key = RecordKey(ns_, topic, msg_id);
  CQ_ASSIGN_OR_RETURN(std::optional<std::string> sent, kv_->Get(Cf::kSent, key));
  if (sent) {
    CQ_ASSIGN_OR_RETURN(SentValue v, DecodeSentValue(*sent));
    return std::optional<std::string>(std::string(v.payload));
  }
  return kv_->Get(Cf::kPayloads, key);
}

Result<std::vector<std::optional<std::string>>> MessageStore::GetPayloads(
    std::string_view topic, const std::vector<std::string>& ids) {
  std::vector<std::string> keys;
  keys.reserve(ids.size());
  for (const std::string& id : ids) keys.push_back(RecordKey(ns_, topic, id));
  CQ_ASSIGN_OR_RETURN(std::vector<std::optional<std::string>> out, kv_->MultiGet(Cf::kSent, keys));
  std::vector<std::string> older;  // messages sent before format 4
  std::vector<size_t> where;
  for (size_t i = 0; i < out.size(); ++i) {
    if (out[i]) {
      CQ_ASSIGN_OR_RETURN(SentValue v, DecodeSentValue(*out[i]));
      out[i] = std::string(v.payload);
    } else {
      older.push_back(std::move(keys[i]));
      where.push_back(i);
    }
  }
  if (older.empty()) return out;
  CQ_ASSIGN_OR_RETURN(std::vector<std::optional<std::string>> payloads,
                      kv_->MultiGet(Cf::kPayloads, older));
  for (size_t j = 0; j < where.size(); ++j) out[where[j]] = std::move(payloads[j]);
  return out;
}

Result<std::vector<std::optional<core::MessageRecord>>> MessageStore::GetRecords(
    std::string_view topic, const std::vector<std::string>& ids) {
  std::vector<std::string> keys;
  keys.reserve(ids.size());
  for (const std::string& id : ids) keys.push_back(RecordKey(ns_, topic, id));
  CQ_ASSIGN_OR_RETURN(std::vector<std::optional<std::string>> metas,
                      kv_->MultiGet(Cf::kRecords, keys));
  std::vector<std::optional<core::MessageRecord>> out(ids.size());
  std::vector<std::string> unchanged;  // never changed since their send: metadata in `sent`
  std::vector<size_t> where;
  for (size_t i = 0; i < ids.size(); ++i) {
    if (!metas[i]) {
      unchanged.push_back(std::move(keys[i]));
      where.push_back(i);
      continue;
    }
    core::MessageRecord r;
    CQ_RETURN_IF_ERROR(DecodeMeta(*metas[i], &r));
    out[i] = std::move(r);
  }
  if (!unchanged.empty()) {
    CQ_ASSIGN_OR_RETURN(std::vector<std::optional<std::string>> sent,
                        kv_->MultiGet(Cf::kSent, unchanged));
    for (size_t j = 0; j < where.size(); ++j) {
      if (!sent[j]) continue;
      CQ_ASSIGN_OR_RETURN(SentValue v, DecodeSentValue(*sent[j]));
      core::MessageRecord r;
      CQ_RETURN_IF_ERROR(DecodeMeta(v.meta, &r));
      out[where[j]] = std::move(r);
    }
  }
  for (size_t i = 0; i < ids.size(); ++i) {
    if (!out[i]) continue;
    out[i]->topic = std::string(topic);
    out[i]->msg_id = ids[i];
  }
  return out;
}

Status MessageStore::ScanVis(std::string_view topic, VisKind kind, TimePoint from_t,
                             uint64_t from_seq, TimePoint to_t, const RecordFn& fn) {
  std::string lower = VisKey(ns_, topic, kind, from_t, from_seq);
  std::string upper = VisKey(ns_, topic, kind, to_t, 0);
  if (to_t == kTimeMax) {
    std::string prefix = TopicPrefix(ns_, topic);
    prefix.push_back(static_cast<char>(kind));
    upper = PrefixEnd(prefix);
  }
  auto it = kv_->Scan(Cf::kVis, std::move(lower), std::move(upper));
  for (; it->Valid(); it->Next()) {
    CQ_ASSIGN_OR_RETURN(VisKeyParts parts, DecodeVisKey(ns_, it->key()));
    core::MessageRecord r;
    CQ_RETURN_IF_ERROR(DecodeVisValue(it->value(), &r));
    r.topic = std::move(parts.topic);
    if (!fn(std::move(r))) break;
  }
  return it->status();
}

Status MessageStore::ScanHist(std::string_view topic,
                              const std::function<void(TimePoint, int64_t)>& fn) {
  std::string prefix = TopicPrefix(ns_, topic);
  auto it = kv_->Scan(Cf::kHist, prefix, PrefixEnd(prefix));
  for (; it->Valid(); it->Next()) {
    CQ_ASSIGN_OR_RETURN(TimePoint t, DecodeHistKeyTime(ns_, topic, it->key()));
    int64_t n = DecodeCounter(it->value());
    if (n != 0) fn(t, n);
  }
  return it->status();
}

Status MessageStore::ListTopics(const std::function<void(const std::string&)>& fn) {
  // Skip-scan: read the first visibility key of a topic, then seek past the whole topic.
  std::string ns_prefix = TopicPrefix(ns_, "");
  ns_prefix.pop_back();  // drop the empty topic's length byte: the namespace prefix alone
  std::string lower = ns_prefix;
  const std::string upper = PrefixEnd(ns_prefix);
  for (;;) {
    auto it = kv_->Scan(Cf::kVis, lower, upper);
    if (!it->Valid()) return it->status();
    CQ_ASSIGN_OR_RETURN(VisKeyParts parts, DecodeVisKey(ns_, it->key()));
    fn(parts.topic);
    lower = PrefixEnd(TopicPrefix(ns_, parts.topic));
  }
}

Status MessageStore::ScanEnded(std::string_view topic, core::MsgStatus status, TimePoint from_t,
                               uint64_t from_seq, const EndedFn& fn) {
  const std::string prefix = EndedPrefix(ns_, topic, status);
  auto it =
      kv_->Scan(Cf::kEnded, EndedKey(ns_, topic, status, from_t, from_seq), PrefixEnd(prefix));
  for (; it->Valid(); it->Next()) {
    CQ_ASSIGN_OR_RETURN(EndedKeyParts parts, DecodeEndedKey(prefix, it->key()));
    if (!fn(parts.ended_at, parts.seq, std::string(it->value()))) break;
  }
  return it->status();
}

Status MessageStore::ScanRetention(
    const std::string& after_key, TimePoint until,
    const std::function<bool(const RetentionEntry&, const std::string& key)>& fn) {
  std::string prefix = RetentionPrefix(ns_);
  std::string lower = after_key.empty() ? prefix : after_key + '\0';  // exclusive of after_key
  std::string upper = RetentionKey(ns_, SaturatingAdd(until, Millis(1)), 0);
  auto it = kv_->Scan(Cf::kRetention, std::move(lower), std::move(upper));
  for (; it->Valid(); it->Next()) {
    CQ_ASSIGN_OR_RETURN(RetentionEntry e, DecodeRetention(ns_, it->key(), it->value()));
    if (!fn(e, std::string(it->key()))) break;
  }
  return it->status();
}

}  // namespace chronoq::storage
