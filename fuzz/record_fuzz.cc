// Fuzz target: decoding of stored records and keys (storage/codec.h). The first byte picks the
// decoder; the rest is the stored bytes. Whatever decodes must re-encode to bytes that decode to
// the same value (encode(decode(x)) round-trips), and no input may crash or trip a sanitizer.
// Selectors: 0 record metadata (any version; version 4, with the push lane and the callback, since
// issue 16), 1 vis value, 2 vis key, 3 hist key, 4 retention entry, 5 counter, 6 stored topic
// configuration (with its callback since issue 16), 7 sent value (format 4).
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "fuzz/fuzz_check.h"
#include "storage/codec.h"

namespace {

using chronoq::core::MessageRecord;
using chronoq::storage::DecodeCounter;
using chronoq::storage::DecodeHistKeyTime;
using chronoq::storage::DecodeMeta;
using chronoq::storage::DecodeRetention;
using chronoq::storage::DecodeVisKey;
using chronoq::storage::DecodeVisValue;

constexpr std::string_view kNs = "fz";

// Splits `in` at its first 0xff byte into two parts (key and value); no 0xff: all key.
std::pair<std::string_view, std::string_view> Split(std::string_view in) {
  size_t cut = in.find('\xff');
  if (cut == std::string_view::npos) return {in, {}};
  return {in.substr(0, cut), in.substr(cut + 1)};
}

void Meta(std::string_view in) {
  MessageRecord r;
  if (!DecodeMeta(in, &r).ok()) return;
  std::string again = chronoq::storage::EncodeMeta(r);
  MessageRecord r2;
  FUZZ_CHECK(DecodeMeta(again, &r2).ok());
  FUZZ_CHECK(r2 == r);
  // The current version's encoding is canonical (fixed widths, canonical varints); an older
  // version decodes to the same record and re-encodes in the current one.
  if (again[0] == in[0]) FUZZ_CHECK(again == in);
}

// A `sent` value (format 4): its metadata decodes as a record's, and it re-encodes as read.
void SentValue(std::string_view in) {
  auto v = chronoq::storage::DecodeSentValue(in);
  if (!v.has_value()) return;
  FUZZ_CHECK(chronoq::storage::EncodeSentValue(v->meta, v->payload) == in);
  Meta(v->meta);
}

void VisValue(std::string_view in) {
  MessageRecord r;
  if (!DecodeVisValue(in, &r).ok()) return;
  std::string again = chronoq::storage::EncodeVisValue(r);
  MessageRecord r2;
  FUZZ_CHECK(DecodeVisValue(again, &r2).ok());
  FUZZ_CHECK(r2 == r);
}

void VisKey(std::string_view in) {
  auto parts = DecodeVisKey(kNs, in);
  if (!parts.has_value()) return;
  std::string again =
      chronoq::storage::VisKey(kNs, parts->topic, parts->kind, parts->t, parts->seq);
  auto parts2 = DecodeVisKey(kNs, again);
  FUZZ_CHECK(parts2.has_value());
  FUZZ_CHECK(parts2->topic == parts->topic && parts2->kind == parts->kind &&
             parts2->t == parts->t && parts2->seq == parts->seq);
}

void HistKey(std::string_view in) {
  auto [topic, key] = Split(in);
  auto t = DecodeHistKeyTime(kNs, topic, key);
  if (!t.has_value()) return;
  std::string again = chronoq::storage::HistKey(kNs, topic, *t);
  FUZZ_CHECK(again == key);  // a hist key is exactly prefix | time
  auto t2 = DecodeHistKeyTime(kNs, topic, again);
  FUZZ_CHECK(t2.has_value() && *t2 == *t);
}

void Retention(std::string_view in) {
  auto [key, value] = Split(in);
  auto e = DecodeRetention(kNs, key, value);
  if (!e.has_value()) return;
  std::string k2 = chronoq::storage::RetentionKey(kNs, e->purge_at, e->seq);
  std::string v2 = chronoq::storage::EncodeRetentionValue(e->topic, e->msg_id);
  auto e2 = DecodeRetention(kNs, k2, v2);
  FUZZ_CHECK(e2.has_value());
  FUZZ_CHECK(e2->purge_at == e->purge_at && e2->seq == e->seq && e2->topic == e->topic &&
             e2->msg_id == e->msg_id);
}

// A stored topic configuration (setTopicConfig) has one encoding: fixed presence bits,
// canonical varints, paused 0 or 1.
void TopicConfig(std::string_view in) {
  auto c = chronoq::storage::DecodeTopicConfig(in);
  if (!c.has_value()) return;
  std::string again = chronoq::storage::EncodeTopicConfig(*c);
  FUZZ_CHECK(again == in);
  auto c2 = chronoq::storage::DecodeTopicConfig(again);
  FUZZ_CHECK(c2.has_value() && *c2 == *c);
}

void Counter(std::string_view in) {
  int64_t v = DecodeCounter(in);
  FUZZ_CHECK(DecodeCounter(chronoq::storage::EncodeCounter(v)) == v);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  std::string_view in(reinterpret_cast<const char*>(data) + 1, size - 1);
  switch (data[0] % 8) {  // seeds of selectors 0..6 keep their meaning
    case 0:
      Meta(in);
      break;
    case 1:
      VisValue(in);
      break;
    case 2:
      VisKey(in);
      break;
    case 3:
      HistKey(in);
      break;
    case 4:
      Retention(in);
      break;
    case 6:
      TopicConfig(in);
      break;
    case 7:
      SentValue(in);
      break;
    default:
      Counter(in);
      break;
  }
  return 0;
}
