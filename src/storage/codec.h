// Byte encodings of the message store's keys and values (docs/storage-format.md). Keys sort so
// that range scans are the queue operations: per topic by visibility time, globally by purge
// time. Integers in keys are big-endian (times offset by 2^63, so negative times sort first);
// integers in values are little-endian. Pure functions.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "base/result.h"
#include "core/message.h"
#include "core/topic_config.h"

namespace chronoq::storage {

// The on-disk format this build writes. Bump it (and say how to migrate in
// docs/storage-format.md) whenever an encoding below changes incompatibly, and teach
// UpgradeStore (storage/upgrade.h) to bring the previous version up to it at open: an older store
// is migrated in place, never refused.
// 1: up to issue 13. 2: the `ended` column family (ended messages per topic and status).
// 3: record metadata version 3 (retry interval, dead-letter origin) and stored topic
// configurations (`meta` entries), which older builds cannot read; nothing to rewrite.
// 4: the `sent` column family (a message's metadata and payload in one value at its send; its
// `records` entry is written at its first change), which older builds cannot read; nothing to
// rewrite (messages sent before keep their `records` and `payloads` entries).
// 5: record metadata version 4 (the push lane and the callback, issue 16) and stored topic
// configurations with a callback, which older builds cannot read; nothing to rewrite.
// 6: record metadata version 5 (the fixed-width head as varints: about 45 bytes less per
// message in each of `sent` and `vis`), which older builds cannot read; nothing to rewrite.
inline constexpr int kFormatVersion = 6;
// The oldest format UpgradeStore can bring up to kFormatVersion.
inline constexpr int kOldestFormatVersion = 1;

// Kinds within a topic's visibility range: messages waiting or ready to be delivered, and
// messages delivered and not yet acked.
enum class VisKind : uint8_t { kPending = 0, kDelivered = 1 };

// ns | topic: the prefix of every per-topic key.
std::string TopicPrefix(std::string_view ns, std::string_view topic);
// The first key after every key with this prefix (for exclusive upper bounds).
std::string PrefixEnd(std::string_view prefix);

// records / payloads: ns | topic | msgId.
std::string RecordKey(std::string_view ns, std::string_view topic, std::string_view msg_id);

// vis: ns | topic | kind | visible_at | seq.
std::string VisKey(std::string_view ns, std::string_view topic, VisKind kind, TimePoint t,
                   uint64_t seq);
struct VisKeyParts {
  std::string topic;
  VisKind kind;
  TimePoint t;
  uint64_t seq;
};
Result<VisKeyParts> DecodeVisKey(std::string_view ns, std::string_view key);

// hist: ns | topic | trigger time.
std::string HistKey(std::string_view ns, std::string_view topic, TimePoint t);
Result<TimePoint> DecodeHistKeyTime(std::string_view ns, std::string_view topic,
                                    std::string_view key);
// The value of a merge-add counter.
int64_t DecodeCounter(std::string_view value);
std::string EncodeCounter(int64_t v);

// retention: ns | purge_at | seq  ->  topic | msgId.
std::string RetentionKey(std::string_view ns, TimePoint purge_at, uint64_t seq);
std::string RetentionPrefix(std::string_view ns);
std::string EncodeRetentionValue(std::string_view topic, std::string_view msg_id);
struct RetentionEntry {
  TimePoint purge_at;
  uint64_t seq;
  std::string topic;
  std::string msg_id;
};
Result<RetentionEntry> DecodeRetention(std::string_view ns, std::string_view key,
                                       std::string_view value);

// Decodes a retention key of any namespace (the format upgrade walks them all).
struct NsRetentionEntry {
  std::string ns;
  RetentionEntry entry;
};
Result<NsRetentionEntry> DecodeRetentionAnyNs(std::string_view key, std::string_view value);

// ended: ns | topic | end status | ended_at | seq  ->  msgId.
std::string EndedKey(std::string_view ns, std::string_view topic, core::MsgStatus status,
                     TimePoint ended_at, uint64_t seq);
// ns | topic | end status: the prefix of one topic's messages ended with that status.
std::string EndedPrefix(std::string_view ns, std::string_view topic, core::MsgStatus status);
struct EndedKeyParts {
  TimePoint ended_at;
  uint64_t seq;
};
// The (ended_at, seq) of a key under `prefix` (EndedPrefix).
Result<EndedKeyParts> DecodeEndedKey(std::string_view prefix, std::string_view key);

// Record metadata: every field but topic, msgId and payload (version 5: varints).
std::string EncodeMeta(const core::MessageRecord& r);
// EncodeMeta's bytes written into `buf` (`size` bytes) when they surely fit, else into `*spill`
// (a record with a long callback or last error), the callback encoded once either way; without
// `spill`, an empty view then (the metadata is never empty).
std::string_view EncodeMetaInto(const core::MessageRecord& r, char* buf, size_t size,
                                std::string* spill = nullptr);
// The same in version 4 (fixed-width fields), as format 5 stores hold it: for tests that build
// older stores and records.
std::string EncodeMetaV4(const core::MessageRecord& r);
// Fills the fields EncodeMeta wrote; kCorruption when the bytes are not a record.
Status DecodeMeta(std::string_view bytes, core::MessageRecord* out);

// A topic's stored configuration (setTopicConfig): its set fields. Kept in `meta` under
// TopicConfigMetaName(topic).
std::string EncodeTopicConfig(const core::TopicConfig& c);
// kCorruption when the bytes are not a configuration.
Result<core::TopicConfig> DecodeTopicConfig(std::string_view bytes);
// The `meta` names of stored topic configurations: this prefix, then the topic.
inline constexpr std::string_view kTopicConfigMetaPrefix = "topic-config/";
// A message's history (core/history.h): `meta` name "history/" str(topic) msgId.
inline constexpr std::string_view kHistoryMetaPrefix = "history/";

// sent values: a message as it was sent, its metadata (str) then its payload, in one value, so
// that a send writes one key for both (format 4). `meta` and `payload` point into the bytes.
std::string EncodeSentValue(std::string_view meta, std::string_view payload);
struct SentValue {
  std::string_view meta;
  std::string_view payload;
};
Result<SentValue> DecodeSentValue(std::string_view bytes);

// vis values: msgId plus the record metadata, so that loading needs no second read.
std::string EncodeVisValue(const core::MessageRecord& r);
// The same from the msgId and the metadata EncodeMeta(r) already returned.
std::string EncodeVisValue(std::string_view msg_id, std::string_view meta);
Status DecodeVisValue(std::string_view bytes, core::MessageRecord* out);

// A big-endian, order-preserving encoding of a signed time (for keys).
void AppendTime(std::string& out, TimePoint t);

}  // namespace chronoq::storage
