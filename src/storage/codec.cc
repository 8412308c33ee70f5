#include "storage/codec.h"

#include <cstdint>
#include <cstring>
#include <type_traits>

#include "storage/kv.h"

namespace chronoq::storage {
namespace {

// A varint takes at most 10 bytes.
constexpr size_t kMaxVarint = 10;

// Writes `v` at `p` (room for kMaxVarint bytes) and returns the byte after it.
char* PutVarint(char* p, uint64_t v) {
  while (v >= 0x80) {
    *p++ = static_cast<char>((v & 0x7f) | 0x80);
    v >>= 7;
  }
  *p++ = static_cast<char>(v);
  return p;
}

void AppendVarint(std::string& out, uint64_t v) {
  if (v < 0x80) {  // lengths and small fields: the common case
    out.push_back(static_cast<char>(v));
    return;
  }
  char buf[kMaxVarint];
  out.append(buf, static_cast<size_t>(PutVarint(buf, v) - buf));
}

// Writes `s` length-prefixed at `p` (room for kMaxVarint + s.size() bytes); returns the end.
char* PutBytes(char* p, std::string_view s) {
  p = PutVarint(p, s.size());
  if (!s.empty()) std::memcpy(p, s.data(), s.size());
  return p + s.size();
}

// Sizes `out` to `bound` bytes after its current ones, lets `put` write from there and keeps what
// it wrote: `put` gets the first free byte and returns the one after its last.
template <typename Put>
void AppendBounded(std::string& out, size_t bound, Put put) {
  size_t used = out.size();
  out.resize(used + bound);
  char* end = put(out.data() + used);
  out.resize(static_cast<size_t>(end - out.data()));
}

// Canonical encodings only (what AppendVarint writes): no overlong form (a last byte of 0 after
// the first) and nothing beyond 64 bits, so that one value has one encoding.
bool ReadVarint(std::string_view& in, uint64_t* v) {
  *v = 0;
  for (int shift = 0; shift < 64 && !in.empty(); shift += 7) {
    auto b = static_cast<uint8_t>(in.front());
    in.remove_prefix(1);
    if (shift == 63 && b > 1) return false;
    *v |= static_cast<uint64_t>(b & 0x7f) << shift;
    if ((b & 0x80) == 0) return b != 0 || shift == 0;
  }
  return false;
}

void AppendBytes(std::string& out, std::string_view s) {
  AppendVarint(out, s.size());
  out.append(s);
}

bool ReadBytes(std::string_view& in, std::string_view* s) {
  uint64_t n;
  if (!ReadVarint(in, &n) || n > in.size()) return false;
  *s = in.substr(0, n);
  in.remove_prefix(n);
  return true;
}

void AppendBig64(std::string& out, uint64_t v) {
  char buf[8];
  for (int i = 7; i >= 0; --i, v >>= 8) buf[i] = static_cast<char>(v & 0xff);
  out.append(buf, 8);
}

bool ReadBig64(std::string_view& in, uint64_t* v) {
  if (in.size() < 8) return false;
  *v = 0;
  for (int i = 0; i < 8; ++i) *v = (*v << 8) | static_cast<uint8_t>(in[i]);
  in.remove_prefix(8);
  return true;
}

uint64_t TimeBits(TimePoint t) { return static_cast<uint64_t>(ToEpochMs(t)) ^ (uint64_t{1} << 63); }
TimePoint BitsTime(uint64_t b) {
  return FromEpochMs(static_cast<int64_t>(b ^ (uint64_t{1} << 63)));
}

template <typename T>
void AppendLittle(std::string& out, T v) {
  char buf[sizeof(T)];
  std::memcpy(buf, &v, sizeof(T));  // x86-64 and aarch64 are little-endian
  out.append(buf, sizeof(T));
}

template <typename T>
bool ReadLittle(std::string_view& in, T* v) {
  if (in.size() < sizeof(T)) return false;
  std::memcpy(v, in.data(), sizeof(T));
  in.remove_prefix(sizeof(T));
  return true;
}

Status Corrupt(std::string_view what) {
  return Status(Errc::kCorruption, "corrupt " + std::string(what));
}

// Record metadata versions (docs/storage-format.md): 1 before issue 14; 2 adds priority, count
// trigger, count and last error after the version 1 fields; 3 (issue 15) adds the retry interval
// and the dead-letter origin; 4 (issue 16) adds the push lane flag and the callback; 5 (issue 20)
// writes the fixed-width head of 1 to 4 as varints. All decode; 5 is written.
constexpr uint8_t kMetaV1 = 1;
constexpr uint8_t kMetaV2 = 2;
constexpr uint8_t kMetaV3 = 3;
constexpr uint8_t kMetaV4 = 4;
// Version 5: the fields of version 4, its fixed-width head (62 bytes after the version byte) as
// varints and differences (about 20 bytes for a new message).
constexpr uint8_t kMetaV5 = 5;
// Version 5's state byte: phase in bits 0-1, status in bits 2-4, bit 5: an end time follows.
constexpr uint8_t kStateEnded = 0x20;
// Version 4's push byte: bit 0 the push lane, bit 1 a callback follows.
constexpr uint8_t kPushLane = 1;
constexpr uint8_t kHasCallback = 2;

// The version of the stored topic configuration (EncodeTopicConfig).
constexpr uint8_t kTopicConfigV1 = 1;

}  // namespace

void AppendTime(std::string& out, TimePoint t) { AppendBig64(out, TimeBits(t)); }

namespace {
// Writes `v` big-endian at `p`; returns the end.
char* PutBig64(char* p, uint64_t v) {
  for (int i = 7; i >= 0; --i, v >>= 8) p[i] = static_cast<char>(v & 0xff);
  return p + 8;
}
// A per-topic key: TopicPrefix, then what `rest` writes at the pointer it is given (at most
// `more` bytes; it returns their end). Written in one pass into a string sized once (a send makes
// three such keys).
template <typename Rest>
std::string TopicKey(std::string_view ns, std::string_view topic, size_t more, Rest rest) {
  std::string out;
  AppendBounded(out, 2 * kMaxVarint + ns.size() + topic.size() + more,
                [&](char* p) { return rest(PutBytes(PutBytes(p, ns), topic)); });
  return out;
}
}  // namespace

std::string TopicPrefix(std::string_view ns, std::string_view topic) {
  return TopicKey(ns, topic, 0, [](char* p) { return p; });
}

std::string PrefixEnd(std::string_view prefix) {
  std::string out(prefix);
  while (!out.empty()) {
    auto c = static_cast<uint8_t>(out.back());
    if (c != 0xff) {
      out.back() = static_cast<char>(c + 1);
      return out;
    }
    out.pop_back();
  }
  return out;  // every byte was 0xff: no upper bound
}

std::string RecordKey(std::string_view ns, std::string_view topic, std::string_view msg_id) {
  return TopicKey(ns, topic, msg_id.size(), [msg_id](char* p) {
    if (!msg_id.empty()) std::memcpy(p, msg_id.data(), msg_id.size());
    return p + msg_id.size();
  });
}

std::string VisKey(std::string_view ns, std::string_view topic, VisKind kind, TimePoint t,
                   uint64_t seq) {
  return TopicKey(ns, topic, 17, [kind, t, seq](char* p) {
    *p++ = static_cast<char>(kind);
    return PutBig64(PutBig64(p, TimeBits(t)), seq);
  });
}

Result<VisKeyParts> DecodeVisKey(std::string_view ns, std::string_view key) {
  std::string_view in = key;
  std::string_view k_ns;
  std::string_view topic;
  uint64_t t = 0;
  uint64_t seq = 0;
  if (!ReadBytes(in, &k_ns) || k_ns != ns || !ReadBytes(in, &topic) || in.empty()) {
    return Corrupt("vis key");
  }
  auto kind = static_cast<VisKind>(in.front());
  in.remove_prefix(1);
  if (!ReadBig64(in, &t) || !ReadBig64(in, &seq) || !in.empty()) return Corrupt("vis key");
  return VisKeyParts{std::string(topic), kind, BitsTime(t), seq};
}

std::string HistKey(std::string_view ns, std::string_view topic, TimePoint t) {
  return TopicKey(ns, topic, 8, [t](char* p) { return PutBig64(p, TimeBits(t)); });
}

Result<TimePoint> DecodeHistKeyTime(std::string_view ns, std::string_view topic,
                                    std::string_view key) {
  std::string prefix = TopicPrefix(ns, topic);
  if (key.size() != prefix.size() + 8 || key.substr(0, prefix.size()) != prefix) {
    return Corrupt("hist key");
  }
  std::string_view in = key.substr(prefix.size());
  uint64_t t = 0;
  if (!ReadBig64(in, &t)) return Corrupt("hist key");
  return BitsTime(t);
}

int64_t DecodeCounter(std::string_view value) {
  int64_t v = 0;
  if (value.size() == 8) std::memcpy(&v, value.data(), 8);
  return v;
}

std::string EncodeCounter(int64_t v) {
  std::string out;
  AppendLittle(out, v);
  return out;
}

std::string RetentionPrefix(std::string_view ns) {
  std::string out;
  AppendBytes(out, ns);
  return out;
}

std::string RetentionKey(std::string_view ns, TimePoint purge_at, uint64_t seq) {
  std::string out = RetentionPrefix(ns);
  AppendTime(out, purge_at);
  AppendBig64(out, seq);
  return out;
}

std::string EncodeRetentionValue(std::string_view topic, std::string_view msg_id) {
  std::string out;
  AppendBytes(out, topic);
  out.append(msg_id);
  return out;
}

Result<RetentionEntry> DecodeRetention(std::string_view ns, std::string_view key,
                                       std::string_view value) {
  std::string_view in = key;
  std::string_view k_ns;
  uint64_t t = 0;
  uint64_t seq = 0;
  if (!ReadBytes(in, &k_ns) || k_ns != ns || !ReadBig64(in, &t) || !ReadBig64(in, &seq) ||
      !in.empty()) {
    return Corrupt("retention key");
  }
  std::string_view v = value;
  std::string_view topic;
  if (!ReadBytes(v, &topic)) return Corrupt("retention value");
  return RetentionEntry{BitsTime(t), seq, std::string(topic), std::string(v)};
}

Result<NsRetentionEntry> DecodeRetentionAnyNs(std::string_view key, std::string_view value) {
  std::string_view in = key;
  std::string_view ns;
  if (!ReadBytes(in, &ns)) return Corrupt("retention key");
  CQ_ASSIGN_OR_RETURN(RetentionEntry e, DecodeRetention(ns, key, value));
  return NsRetentionEntry{std::string(ns), std::move(e)};
}

std::string EndedPrefix(std::string_view ns, std::string_view topic, core::MsgStatus status) {
  std::string out = TopicPrefix(ns, topic);
  out.push_back(static_cast<char>(status));
  return out;
}

std::string EndedKey(std::string_view ns, std::string_view topic, core::MsgStatus status,
                     TimePoint ended_at, uint64_t seq) {
  std::string out = EndedPrefix(ns, topic, status);
  AppendTime(out, ended_at);
  AppendBig64(out, seq);
  return out;
}

Result<EndedKeyParts> DecodeEndedKey(std::string_view prefix, std::string_view key) {
  if (key.size() != prefix.size() + 16 || key.substr(0, prefix.size()) != prefix) {
    return Corrupt("ended key");
  }
  std::string_view in = key.substr(prefix.size());
  uint64_t t = 0;
  uint64_t seq = 0;
  if (!ReadBig64(in, &t) || !ReadBig64(in, &seq)) return Corrupt("ended key");
  return EndedKeyParts{BitsTime(t), seq};
}

namespace {

uint64_t ZigZag(int64_t v) {
  return (static_cast<uint64_t>(v) << 1) ^ static_cast<uint64_t>(v >> 63);
}
int64_t UnZigZag(uint64_t u) { return static_cast<int64_t>((u >> 1) ^ (~(u & 1) + 1)); }
// a - b and a + d in two's complement (wrapping), so that any two times round-trip.
int64_t Minus(int64_t a, int64_t b) {
  return static_cast<int64_t>(static_cast<uint64_t>(a) - static_cast<uint64_t>(b));
}
int64_t Plus(int64_t a, int64_t d) {
  return static_cast<int64_t>(static_cast<uint64_t>(a) + static_cast<uint64_t>(d));
}

// The record's metadata is written in one pass into a buffer sized beforehand to the longest
// encoding: no capacity check nor growth per field.

template <typename T>
char* PutLittle(char* p, T v) {
  std::memcpy(p, &v, sizeof(T));  // x86-64 and aarch64 are little-endian
  return p + sizeof(T);
}

// The longest AppendMetaTail output; `callback` is core::EncodeCallback's when there is one.
size_t MetaTailBound(const core::MessageRecord& r, std::string_view callback) {
  size_t n = 4 * kMaxVarint + r.last_error.size() + 1 + kMaxVarint + 1;
  if (r.dead_letter) n += kMaxVarint + r.dead_letter->topic.size() + 1 + kMaxVarint + 8;
  if (r.callback) n += kMaxVarint + callback.size();
  return n;
}

// The fields versions 2 to 4 added after the fixed head, which version 5 keeps as they are.
char* PutMetaTail(char* p, const core::MessageRecord& r, std::string_view callback) {
  // Version 2: varints, so that a message without extensions costs 4 bytes more than in version 1.
  p = PutVarint(p, static_cast<uint64_t>(r.priority));
  p = PutVarint(p, static_cast<uint64_t>(r.count_trigger));
  p = PutVarint(p, static_cast<uint64_t>(r.count));
  p = PutBytes(p, r.last_error);
  // Version 3: the retry interval (ms), then 0, or 1 and the dead-letter origin.
  p = PutVarint(p, static_cast<uint64_t>(r.retry_interval.count()));
  *p++ = static_cast<char>(r.dead_letter ? 1 : 0);
  if (r.dead_letter) {
    p = PutBytes(p, r.dead_letter->topic);
    *p++ = static_cast<char>(r.dead_letter->status);
    p = PutVarint(p, static_cast<uint64_t>(r.dead_letter->retry));
    p = PutLittle<int64_t>(p, ToEpochMs(r.dead_letter->end_time));
  }
  // Version 4: one byte (kPushLane | kHasCallback), then the callback's own binary form
  // (core::EncodeCallback) with its length when it has one.
  *p++ = static_cast<char>((r.push ? kPushLane : 0) | (r.callback ? kHasCallback : 0));
  if (r.callback) p = PutBytes(p, callback);
  return p;
}

std::string CallbackBytes(const core::MessageRecord& r) {
  return r.callback ? core::EncodeCallback(*r.callback) : std::string();
}

// Version 5's head: the version byte, eight varints and the state byte.
constexpr size_t kMetaV5HeadBound = 1 + 8 * kMaxVarint + 1;

char* PutMeta(char* p, const core::MessageRecord& r, std::string_view callback) {
  *p++ = static_cast<char>(kMetaV5);
  // Times as differences from the one they usually follow: a new message's trigger, expire and
  // visible-at times cost the delay, the ttl and one byte.
  const int64_t produce = ToEpochMs(r.produce_time);
  const int64_t trigger = ToEpochMs(r.trigger_time);
  const int64_t ended = ToEpochMs(r.ended_at);
  p = PutVarint(p, ZigZag(produce));
  p = PutVarint(p, ZigZag(Minus(trigger, produce)));
  p = PutVarint(p, ZigZag(Minus(ToEpochMs(r.expire_time), produce)));
  p = PutVarint(p, ZigZag(r.max_retry));
  p = PutVarint(p, ZigZag(r.retry));
  *p++ = static_cast<char>(static_cast<uint8_t>(r.phase) |
                           static_cast<uint8_t>(static_cast<uint8_t>(r.end_status) << 2) |
                           (ended != 0 ? kStateEnded : 0));
  p = PutVarint(p, ZigZag(Minus(ToEpochMs(r.visible_at), trigger)));
  if (ended != 0) p = PutVarint(p, ZigZag(Minus(ended, produce)));
  p = PutVarint(p, r.seq);
  return PutMetaTail(p, r, callback);
}

}  // namespace

std::string EncodeMetaV4(const core::MessageRecord& r) {
  std::string out;
  out.reserve(70 + r.last_error.size());
  out.push_back(static_cast<char>(kMetaV4));
  AppendLittle<int64_t>(out, ToEpochMs(r.produce_time));
  AppendLittle<int64_t>(out, ToEpochMs(r.trigger_time));
  AppendLittle<int64_t>(out, ToEpochMs(r.expire_time));
  AppendLittle<int32_t>(out, r.max_retry);
  AppendLittle<int64_t>(out, r.retry);
  out.push_back(static_cast<char>(r.phase));
  out.push_back(static_cast<char>(r.end_status));
  AppendLittle<int64_t>(out, ToEpochMs(r.visible_at));
  AppendLittle<int64_t>(out, ToEpochMs(r.ended_at));
  AppendLittle<uint64_t>(out, r.seq);
  std::string callback = CallbackBytes(r);
  AppendBounded(out, MetaTailBound(r, callback),
                [&](char* p) { return PutMetaTail(p, r, callback); });
  return out;
}

std::string EncodeMeta(const core::MessageRecord& r) {
  std::string out;
  EncodeMetaInto(r, nullptr, 0, &out);
  return out;
}

std::string_view EncodeMetaInto(const core::MessageRecord& r, char* buf, size_t size,
                                std::string* spill) {
  const std::string callback = CallbackBytes(r);
  const size_t bound = kMetaV5HeadBound + MetaTailBound(r, callback);
  if (bound <= size) return {buf, static_cast<size_t>(PutMeta(buf, r, callback) - buf)};
  if (spill == nullptr) return {};
  spill->clear();
  AppendBounded(*spill, bound, [&](char* p) { return PutMeta(p, r, callback); });
  return *spill;
}

namespace {

// The fields before the version 2 extensions.
struct MetaHead {
  int64_t produce = 0, trigger = 0, expire = 0, visible = 0, ended = 0;
  int32_t max_retry = 0;
  int64_t retry = 0;
  uint64_t seq = 0;
  uint8_t phase = 0, status = 0;
};

// Versions 1 to 4: fixed-width little-endian fields.
bool ReadFixedHead(std::string_view& in, MetaHead* h) {
  if (!ReadLittle(in, &h->produce) || !ReadLittle(in, &h->trigger) || !ReadLittle(in, &h->expire) ||
      !ReadLittle(in, &h->max_retry) || !ReadLittle(in, &h->retry) || in.size() < 2) {
    return false;
  }
  h->phase = static_cast<uint8_t>(in[0]);
  h->status = static_cast<uint8_t>(in[1]);
  in.remove_prefix(2);
  return ReadLittle(in, &h->visible) && ReadLittle(in, &h->ended) && ReadLittle(in, &h->seq);
}

// Version 5 (EncodeMeta).
bool ReadCompactHead(std::string_view& in, MetaHead* h) {
  uint64_t produce, trigger, expire, max_retry, retry, visible, ended = 0;
  if (!ReadVarint(in, &produce) || !ReadVarint(in, &trigger) || !ReadVarint(in, &expire) ||
      !ReadVarint(in, &max_retry) || !ReadVarint(in, &retry) || in.empty()) {
    return false;
  }
  const auto state = static_cast<uint8_t>(in.front());
  in.remove_prefix(1);
  if ((state & ~(kStateEnded | 0x1f)) != 0 || !ReadVarint(in, &visible) ||
      ((state & kStateEnded) != 0 && !ReadVarint(in, &ended)) || !ReadVarint(in, &h->seq)) {
    return false;
  }
  const int64_t mr = UnZigZag(max_retry);
  if (mr < INT32_MIN || mr > INT32_MAX) return false;
  h->produce = UnZigZag(produce);
  h->trigger = Plus(h->produce, UnZigZag(trigger));
  h->expire = Plus(h->produce, UnZigZag(expire));
  h->max_retry = static_cast<int32_t>(mr);
  h->retry = UnZigZag(retry);
  h->phase = state & 0x3;
  h->status = (state >> 2) & 0x7;
  h->visible = Plus(h->trigger, UnZigZag(visible));
  h->ended = (state & kStateEnded) != 0 ? Plus(h->produce, UnZigZag(ended)) : 0;
  // Canonical: an end time of 0 is written without the flag.
  return (state & kStateEnded) == 0 || h->ended != 0;
}

}  // namespace

Status DecodeMeta(std::string_view in, core::MessageRecord* r) {
  const uint8_t version = in.empty() ? 0 : static_cast<uint8_t>(in.front());
  if (version < kMetaV1 || version > kMetaV5) return Corrupt("record metadata (unknown version)");
  in.remove_prefix(1);
  MetaHead h;
  if (!(version == kMetaV5 ? ReadCompactHead(in, &h) : ReadFixedHead(in, &h)) || h.phase > 2 ||
      h.status < 1 || h.status > 7) {
    return Corrupt("record metadata");
  }
  // Version 1 records have no extension fields: their defaults.
  uint64_t priority = 0;
  uint64_t count_trigger = 0;
  uint64_t count = 0;
  std::string_view last_error;
  if (version >= kMetaV2 &&
      (!ReadVarint(in, &priority) || !ReadVarint(in, &count_trigger) || !ReadVarint(in, &count) ||
       !ReadBytes(in, &last_error) || priority > 255)) {
    return Corrupt("record metadata");
  }
  // Version 1 and 2 records: no retry interval, not a dead letter.
  uint64_t retry_interval = 0;
  std::optional<core::DeadLetter> dead_letter;
  if (version >= kMetaV3) {
    if (!ReadVarint(in, &retry_interval) || retry_interval > uint64_t{INT64_MAX} || in.empty()) {
      return Corrupt("record metadata");
    }
    const auto has_dead_letter = static_cast<uint8_t>(in.front());
    in.remove_prefix(1);
    if (has_dead_letter > 1) return Corrupt("record metadata");
    if (has_dead_letter == 1) {
      std::string_view topic;
      uint64_t dl_retry = 0;
      int64_t end_time = 0;
      if (!ReadBytes(in, &topic) || in.empty()) return Corrupt("record metadata");
      const auto dl_status = static_cast<uint8_t>(in.front());
      in.remove_prefix(1);
      if ((dl_status != 5 && dl_status != 6) || !ReadVarint(in, &dl_retry) ||
          dl_retry > uint64_t{INT64_MAX} || !ReadLittle(in, &end_time)) {
        return Corrupt("record metadata");
      }
      dead_letter = core::DeadLetter{std::string(topic), static_cast<core::MsgStatus>(dl_status),
                                     static_cast<int64_t>(dl_retry), FromEpochMs(end_time)};
    }
  }
  // Versions 1 to 3: the pull lane, no callback.
  bool push = false;
  std::optional<core::Callback> callback;
  if (version >= kMetaV4) {
    if (in.empty()) return Corrupt("record metadata");
    const auto flags = static_cast<uint8_t>(in.front());
    in.remove_prefix(1);
    if ((flags & ~(kPushLane | kHasCallback)) != 0) return Corrupt("record metadata");
    push = (flags & kPushLane) != 0;
    if ((flags & kHasCallback) != 0) {
      std::string_view bytes;
      if (!ReadBytes(in, &bytes)) return Corrupt("record metadata");
      Result<core::Callback> cb = core::DecodeCallback(bytes);
      if (!cb.has_value()) return Corrupt("record metadata (callback)");
      callback = std::move(cb).value();
    }
  }
  if (!in.empty()) return Corrupt("record metadata");
  r->produce_time = FromEpochMs(h.produce);
  r->trigger_time = FromEpochMs(h.trigger);
  r->expire_time = FromEpochMs(h.expire);
  r->max_retry = h.max_retry;
  r->retry = h.retry;
  r->phase = static_cast<core::Phase>(h.phase);
  r->end_status = static_cast<core::MsgStatus>(h.status);
  r->visible_at = FromEpochMs(h.visible);
  r->ended_at = FromEpochMs(h.ended);
  r->seq = h.seq;
  r->priority = static_cast<int32_t>(priority);
  r->count_trigger = static_cast<int64_t>(count_trigger);
  r->count = static_cast<int64_t>(count);
  r->last_error = std::string(last_error);
  r->retry_interval = Millis(static_cast<int64_t>(retry_interval));
  r->dead_letter = std::move(dead_letter);
  r->callback = std::move(callback);
  r->push = push;
  return Status::Ok();
}

// The fields whose presence the mask byte holds (capacity .. callback); later ones are tagged.
constexpr int kTopicConfigMaskFields = 8;

std::string EncodeTopicConfig(const core::TopicConfig& c) {
  std::string out;
  out.push_back(static_cast<char>(kTopicConfigV1));
  uint8_t present = 0;
  for (int i = 0; i < kTopicConfigMaskFields; ++i) {
    if (core::IsSet(c, static_cast<core::TopicField>(i))) present |= uint8_t{1} << i;
  }
  out.push_back(static_cast<char>(present));
  if (c.capacity) AppendVarint(out, static_cast<uint64_t>(*c.capacity));
  if (c.ttl) AppendVarint(out, static_cast<uint64_t>(c.ttl->count()));
  if (c.max_retry) AppendVarint(out, static_cast<uint64_t>(*c.max_retry));
  if (c.ack_timeout) AppendVarint(out, static_cast<uint64_t>(c.ack_timeout->count()));
  if (c.retry_interval) AppendVarint(out, static_cast<uint64_t>(c.retry_interval->count()));
  if (c.dead_letter_topic) AppendBytes(out, *c.dead_letter_topic);
  if (c.paused) out.push_back(static_cast<char>(*c.paused ? 1 : 0));
  // A set callback: one byte (0: none, 1: the callback's bytes follow).
  if (c.callback) {
    out.push_back(static_cast<char>(c.callback->has_value() ? 1 : 0));
    if (c.callback->has_value()) AppendBytes(out, core::EncodeCallback(**c.callback));
  }
  // Fields after the eighth (the mask's bits) follow as tagged bytes: history 0x80 | value.
  if (c.history) out.push_back(static_cast<char>(0x80 | (*c.history ? 1 : 0)));
  return out;
}

Result<core::TopicConfig> DecodeTopicConfig(std::string_view in) {
  if (in.size() < 2 || static_cast<uint8_t>(in[0]) != kTopicConfigV1) {
    return Corrupt("topic configuration");
  }
  const auto present = static_cast<uint8_t>(in[1]);
  in.remove_prefix(2);
  // (Every bit of the mask names a field: capacity .. callback.)
  auto has = [&](core::TopicField f) { return (present >> static_cast<int>(f) & 1) != 0; };
  core::TopicConfig c;
  bool ok = true;
  // A non-negative value that fits T (the fields are >= 0 by validation).
  auto number = [&](core::TopicField f, auto* field, int64_t max) {
    if (!has(f) || !ok) return;
    uint64_t v = 0;
    ok = ReadVarint(in, &v) && v <= static_cast<uint64_t>(max);
    using T = typename std::remove_reference_t<decltype(*field)>::value_type;
    if constexpr (std::is_same_v<T, Millis>) {
      *field = Millis(static_cast<int64_t>(v));
    } else {
      *field = static_cast<T>(v);
    }
  };
  number(core::TopicField::kCapacity, &c.capacity, INT64_MAX);
  number(core::TopicField::kTtl, &c.ttl, INT64_MAX);
  number(core::TopicField::kMaxRetry, &c.max_retry, INT32_MAX);
  number(core::TopicField::kAckTimeout, &c.ack_timeout, INT64_MAX);
  number(core::TopicField::kRetryInterval, &c.retry_interval, INT64_MAX);
  if (ok && has(core::TopicField::kDeadLetterTopic)) {
    std::string_view topic;
    ok = ReadBytes(in, &topic);
    c.dead_letter_topic = std::string(topic);
  }
  if (ok && has(core::TopicField::kPaused)) {
    ok = !in.empty() && static_cast<uint8_t>(in[0]) <= 1;
    if (ok) c.paused = in[0] == 1;
    if (ok) in.remove_prefix(1);
  }
  if (ok && has(core::TopicField::kCallback)) {
    ok = !in.empty() && static_cast<uint8_t>(in[0]) <= 1;
    const bool some = ok && in[0] == 1;
    if (ok) in.remove_prefix(1);
    c.callback = std::optional<core::Callback>();
    if (ok && some) {
      std::string_view bytes;
      ok = ReadBytes(in, &bytes);
      if (ok) {
        Result<core::Callback> cb = core::DecodeCallback(bytes);
        ok = cb.has_value();
        if (ok) *c.callback = std::move(*cb);
      }
    }
  }
  if (ok && !in.empty() && (static_cast<uint8_t>(in[0]) & 0xfe) == 0x80) {
    c.history = (in[0] & 1) != 0;
    in.remove_prefix(1);
  }
  if (!ok || !in.empty()) return Corrupt("topic configuration");
  return c;
}

namespace {
// str(first) then rest, in one allocation (sent and vis values).
std::string BytesThen(std::string_view first, std::string_view rest) {
  std::string out;
  out.reserve(first.size() + rest.size() + 2);
  AppendBytes(out, first);
  out.append(rest);
  return out;
}
}  // namespace

std::string EncodeSentValue(std::string_view meta, std::string_view payload) {
  return BytesThen(meta, payload);
}

Result<SentValue> DecodeSentValue(std::string_view bytes) {
  SentValue v;
  if (!ReadBytes(bytes, &v.meta)) return Corrupt("sent value");
  v.payload = bytes;
  return v;
}

std::string EncodeVisValue(const core::MessageRecord& r) {
  std::string out;
  std::string callback = CallbackBytes(r);
  AppendBounded(out, kMaxVarint + r.msg_id.size() + kMetaV5HeadBound + MetaTailBound(r, callback),
                [&](char* p) { return PutMeta(PutBytes(p, r.msg_id), r, callback); });
  return out;
}

std::string EncodeVisValue(std::string_view msg_id, std::string_view meta) {
  return BytesThen(msg_id, meta);
}

Status DecodeVisValue(std::string_view in, core::MessageRecord* r) {
  std::string_view id;
  if (!ReadBytes(in, &id)) return Corrupt("vis value");
  r->msg_id = std::string(id);
  return DecodeMeta(in, r);
}

std::string_view CfName(Cf cf) {
  switch (cf) {
    case Cf::kMeta:
      return "meta";
    case Cf::kRecords:
      return "records";
    case Cf::kPayloads:
      return "payloads";
    case Cf::kVis:
      return "vis";
    case Cf::kHist:
      return "hist";
    case Cf::kRetention:
      return "retention";
    case Cf::kEnded:
      return "ended";
    case Cf::kSent:
      return "sent";
  }
  return "unknown";
}

}  // namespace chronoq::storage
