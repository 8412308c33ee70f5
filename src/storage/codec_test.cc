#include "storage/codec.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "storage/kv.h"

namespace chronoq::storage {
namespace {

using core::MessageRecord;
using core::MsgStatus;
using core::Phase;

const TimePoint kT0 = FromEpochMs(1'700'000'000'000);

MessageRecord SampleRecord() {
  MessageRecord r;
  r.topic = "topic";
  r.msg_id = "id-1";
  r.payload = "ignored";
  r.produce_time = kT0;
  r.trigger_time = kT0 + Millis(5'000);
  r.expire_time = kT0 + Millis(65'000);
  r.max_retry = 7;
  r.retry = 3;
  r.phase = Phase::kDelivered;
  r.end_status = MsgStatus::kWaiting;
  r.visible_at = kT0 + Millis(35'000);
  r.ended_at = TimePoint{};
  r.seq = 123'456'789'012ULL;
  return r;
}

// Every field but topic, msg_id and payload.
void ExpectSameScalars(const MessageRecord& a, const MessageRecord& b) {
  MessageRecord x = core::CopyWithoutPayload(a);
  MessageRecord y = core::CopyWithoutPayload(b);
  x.topic = y.topic = "";
  x.msg_id = y.msg_id = "";
  EXPECT_EQ(x, y);
}

// EncodeMetaInto writes EncodeMeta's bytes when they surely fit its buffer, and nothing otherwise
// (the caller then takes EncodeMeta's string): a short or a long last error, with a callback.
TEST(CodecTest, MetaIntoABufferHasEncodeMetasBytesOrNone) {
  MessageRecord r = SampleRecord();
  char buf[192];
  EXPECT_EQ(EncodeMetaInto(r, buf, sizeof(buf)), EncodeMeta(r));
  core::Callback cb;
  cb.url = "http://example.com/hook";
  r.callback = cb;
  r.last_error = "boom";
  EXPECT_EQ(EncodeMetaInto(r, buf, sizeof(buf)), EncodeMeta(r));
  r.last_error = std::string(500, 'e');
  EXPECT_EQ(EncodeMetaInto(r, buf, sizeof(buf)), "");
  EXPECT_GT(EncodeMeta(r).size(), 500u);
  EXPECT_EQ(EncodeMetaInto(r, buf, 0), "");
}

// With a spill string, a record that does not fit the buffer is encoded there instead, once:
// callbacks whose bytes end just under and just over the buffer's room.
TEST(CodecTest, MetaIntoABufferSpillsWhatDoesNotFit) {
  MessageRecord r = SampleRecord();
  core::Callback cb;
  char buf[192];
  size_t over = 0;  // the shortest callback URL that does not fit
  for (size_t n = 1; n < sizeof(buf) && over == 0; ++n) {
    cb.url = "http://h/" + std::string(n, 'u');
    r.callback = cb;
    if (EncodeMetaInto(r, buf, sizeof(buf)).empty()) over = n;
  }
  ASSERT_GT(over, 1u);
  for (size_t n : {over - 1, over}) {
    cb.url = "http://h/" + std::string(n, 'u');
    r.callback = cb;
    std::string spill = "left from the last record";
    std::string_view meta = EncodeMetaInto(r, buf, sizeof(buf), &spill);
    EXPECT_EQ(meta, EncodeMeta(r)) << n;
    // Under: in the buffer, the spill untouched; over: in the spill.
    EXPECT_EQ(meta.data(), n < over ? buf : spill.data()) << n;
    EXPECT_EQ(spill == "left from the last record", n < over) << n;
    MessageRecord out;
    ASSERT_TRUE(DecodeMeta(meta, &out).ok()) << n;
    ExpectSameScalars(out, r);
  }
}

TEST(CodecTest, MetaRoundTrip) {
  MessageRecord r = SampleRecord();
  MessageRecord out;
  ASSERT_TRUE(DecodeMeta(EncodeMeta(r), &out).ok());
  ExpectSameScalars(out, r);
  EXPECT_EQ(out.payload, "");  // metadata carries no payload

  r.phase = Phase::kEnded;
  r.end_status = MsgStatus::kRetryExhaust;
  r.ended_at = kT0 + Millis(1);
  ASSERT_TRUE(DecodeMeta(EncodeMeta(r), &out).ok());
  ExpectSameScalars(out, r);
}

TEST(CodecTest, MetaRoundTripExtremes) {
  MessageRecord r = SampleRecord();
  r.produce_time = kTimeMin;
  r.trigger_time = FromEpochMs(-1);
  r.expire_time = kTimeMax;
  r.visible_at = kTimeMax;
  r.max_retry = std::numeric_limits<int32_t>::max();
  r.retry = std::numeric_limits<int64_t>::max();
  r.seq = std::numeric_limits<uint64_t>::max();
  MessageRecord out;
  ASSERT_TRUE(DecodeMeta(EncodeMeta(r), &out).ok());
  ExpectSameScalars(out, r);
  // Differences between times that overflow 64 bits still round-trip (two's complement).
  r.produce_time = kTimeMax;
  r.trigger_time = kTimeMin;
  r.ended_at = kTimeMin;
  r.max_retry = std::numeric_limits<int32_t>::min();
  r.retry = std::numeric_limits<int64_t>::min();
  ASSERT_TRUE(DecodeMeta(EncodeMeta(r), &out).ok());
  ExpectSameScalars(out, r);
}

TEST(CodecTest, MetaRoundTripExtensionFields) {
  MessageRecord r = SampleRecord();
  r.priority = 9;
  r.count_trigger = 1'000'000'000'000;
  r.count = 999;
  r.last_error = std::string("timeout \0 calling the target", 29);
  MessageRecord out;
  ASSERT_TRUE(DecodeMeta(EncodeMeta(r), &out).ok());
  ExpectSameScalars(out, r);
  MessageRecord vis;
  ASSERT_TRUE(DecodeVisValue(EncodeVisValue(r), &vis).ok());
  ExpectSameScalars(vis, r);  // loading from the visibility index keeps the priority
}

// A store written before issue 14 holds version 1 metadata: the same fields without the
// extensions. It decodes with the extensions' defaults.
TEST(CodecTest, MetaVersionOneDecodesWithDefaults) {
  MessageRecord r = SampleRecord();
  std::string v4 = EncodeMetaV4(r);
  ASSERT_EQ(v4[0], 4);
  ASSERT_EQ(v4.size(), 63u + 4u + 2u + 1u);  // no extensions: seven bytes more than version 1
  std::string v1 = v4.substr(0, 63);
  v1[0] = 1;
  MessageRecord out;
  out.priority = 5;  // overwritten
  out.count = 7;
  out.last_error = "stale";
  ASSERT_TRUE(DecodeMeta(v1, &out).ok());
  ExpectSameScalars(out, r);
  EXPECT_EQ(out.priority, 0);
  EXPECT_EQ(out.count_trigger, 0);
  EXPECT_EQ(out.count, 0);
  EXPECT_EQ(out.last_error, "");
  EXPECT_EQ(DecodeMeta(v1 + "x", &out).code(), Errc::kCorruption);  // trailing bytes in v1
}

// Version 2 (issue 14): the version 1 fields and the issue-14 extensions, without the retry
// interval and the dead-letter origin of version 3. It decodes with their defaults.
TEST(CodecTest, MetaVersionTwoDecodesWithoutRetryIntervalOrDeadLetter) {
  MessageRecord r = SampleRecord();
  r.priority = 4;
  r.last_error = "boom";
  std::string v4 = EncodeMetaV4(r);
  // An interval of 0 and no dead letter (2 bytes), pull lane without callback (1 byte).
  std::string v2 = v4.substr(0, v4.size() - 3);
  v2[0] = 2;
  MessageRecord out;
  out.retry_interval = Millis(5);  // overwritten
  out.dead_letter = core::DeadLetter{"stale", MsgStatus::kExpire, 1, kT0};
  ASSERT_TRUE(DecodeMeta(v2, &out).ok());
  ExpectSameScalars(out, r);
  EXPECT_EQ(out.retry_interval, Millis(0));
  EXPECT_FALSE(out.dead_letter.has_value());
  EXPECT_EQ(EncodeMetaV4(out), v4);  // re-encoded in version 4
  EXPECT_EQ(DecodeMeta(v2 + "x", &out).code(), Errc::kCorruption);
}

TEST(CodecTest, MetaRoundTripRetryIntervalAndDeadLetter) {
  MessageRecord r = SampleRecord();
  r.phase = core::Phase::kDelivered;
  r.retry_interval = Millis(1'234'567);
  r.dead_letter = core::DeadLetter{"orders", MsgStatus::kRetryExhaust, 17, FromEpochMs(-5)};
  std::string enc = EncodeMeta(r);
  MessageRecord out;
  ASSERT_TRUE(DecodeMeta(enc, &out).ok());
  EXPECT_EQ(out.retry_interval, r.retry_interval);
  EXPECT_EQ(out.dead_letter, r.dead_letter);
  ExpectSameScalars(out, r);
  for (size_t n = 0; n < enc.size(); ++n) {  // every truncation
    EXPECT_EQ(DecodeMeta(enc.substr(0, n), &out).code(), Errc::kCorruption) << n;
  }
  // The dead-letter flag is 0 or 1, its status 5 or 6.
  std::string no_dl = EncodeMeta(SampleRecord());
  std::string bad_flag = no_dl;
  bad_flag[bad_flag.size() - 2] = 2;  // before the push byte
  EXPECT_EQ(DecodeMeta(bad_flag, &out).code(), Errc::kCorruption);
  // Before retry (1-byte varint), end time and the push byte.
  const size_t status_at = enc.size() - 1 - 8 - 1 - 1;
  std::string bad_status = enc;
  bad_status[status_at] = 4;
  EXPECT_EQ(DecodeMeta(bad_status, &out).code(), Errc::kCorruption);
}

// Version 3 (issue 15): everything but the push lane and the callback of version 4. It decodes
// in the pull lane without a callback.
TEST(CodecTest, MetaVersionThreeDecodesInThePullLane) {
  MessageRecord r = SampleRecord();
  r.retry_interval = Millis(700);
  r.dead_letter = core::DeadLetter{"orders", MsgStatus::kExpire, 3, kT0};
  std::string v4 = EncodeMetaV4(r);
  ASSERT_EQ(v4.back(), '\0');  // pull lane, no callback
  std::string v3 = v4.substr(0, v4.size() - 1);
  v3[0] = 3;
  MessageRecord out;
  out.push = true;  // overwritten
  out.callback = core::Callback{};
  ASSERT_TRUE(DecodeMeta(v3, &out).ok());
  ExpectSameScalars(out, r);
  EXPECT_FALSE(out.push);
  EXPECT_FALSE(out.callback.has_value());
  EXPECT_EQ(EncodeMetaV4(out), v4);  // re-encoded in version 4
  EXPECT_EQ(DecodeMeta(v3 + "x", &out).code(), Errc::kCorruption);
}

core::Callback SampleCallback() {
  core::Callback cb;
  cb.type = core::CallbackType::kHttp;
  cb.url = "https://hooks.example.com/orders?x=1";
  cb.method = "PUT";
  cb.headers = {{"Authorization", "Bearer t"}, {"X-Empty", ""}};
  cb.raw_body = true;
  cb.timeout = Millis(2'500);
  cb.retry_interval = Millis(60'000);
  return cb;
}

TEST(CodecTest, MetaRoundTripPushLaneAndCallback) {
  core::Callback kafka;
  kafka.type = core::CallbackType::kKafka;
  kafka.brokers = "k1:9092,k2:9092";
  kafka.kafka_topic = "orders";
  for (const std::optional<core::Callback>& cb :
       {std::optional<core::Callback>(), std::optional<core::Callback>(SampleCallback()),
        std::optional<core::Callback>(kafka)}) {
    for (bool push : {false, true}) {
      MessageRecord r = SampleRecord();
      r.callback = cb;
      r.push = push;
      std::string enc = EncodeMeta(r);
      MessageRecord out;
      ASSERT_TRUE(DecodeMeta(enc, &out).ok());
      ExpectSameScalars(out, r);
      EXPECT_EQ(out.callback, cb);
      EXPECT_EQ(out.push, push);
      MessageRecord vis;
      ASSERT_TRUE(DecodeVisValue(EncodeVisValue(r), &vis).ok());  // loading keeps the lane
      EXPECT_EQ(vis.push, push);
      EXPECT_EQ(vis.callback, cb);
      for (size_t n = 0; n < enc.size(); ++n) {  // every truncation
        EXPECT_EQ(DecodeMeta(enc.substr(0, n), &out).code(), Errc::kCorruption) << n;
      }
      EXPECT_EQ(DecodeMeta(enc + "x", &out).code(), Errc::kCorruption);
    }
  }
  // The push byte has two bits; a callback that does not decode is corruption.
  std::string plain = EncodeMeta(SampleRecord());
  MessageRecord out;
  std::string bad_bits = plain;
  bad_bits.back() = 4;
  EXPECT_EQ(DecodeMeta(bad_bits, &out).code(), Errc::kCorruption);
  std::string bad_callback = plain;
  bad_callback.back() = 2;
  bad_callback += std::string("\x03\x09\x00\x00", 4);  // 3 bytes, format 9: unknown
  EXPECT_EQ(DecodeMeta(bad_callback, &out).code(), Errc::kCorruption);
}

core::TopicConfig EveryFieldButTheCallback() {
  core::TopicConfig all;
  all.capacity = 1000;
  all.ttl = Millis(86'400'000);
  all.max_retry = 0;
  all.ack_timeout = Millis(30'000);
  all.retry_interval = Millis(0);
  all.dead_letter_topic = "orders-dlq";
  all.paused = true;
  return all;
}

TEST(CodecTest, TopicConfigRoundTripsTheCallback) {
  core::TopicConfig set;
  set.callback = std::optional<core::Callback>(SampleCallback());
  Result<core::TopicConfig> back = DecodeTopicConfig(EncodeTopicConfig(set));
  ASSERT_TRUE(back.has_value());
  EXPECT_EQ(*back, set);
  // Set to "none" (shadows the layers below) is not the same as unset.
  core::TopicConfig none;
  none.callback = std::optional<core::Callback>();
  back = DecodeTopicConfig(EncodeTopicConfig(none));
  ASSERT_TRUE(back.has_value());
  EXPECT_EQ(*back, none);
  EXPECT_NE(*back, core::TopicConfig{});
  // Beside every other field.
  core::TopicConfig all = EveryFieldButTheCallback();
  all.callback = set.callback;
  const std::string enc = EncodeTopicConfig(all);
  EXPECT_EQ(*DecodeTopicConfig(enc), all);
  for (size_t n = 0; n < enc.size(); ++n) {
    EXPECT_EQ(DecodeTopicConfig(enc.substr(0, n)).error().code(), Errc::kCorruption) << n;
  }
  EXPECT_FALSE(DecodeTopicConfig(enc + "x").has_value());
  std::string bad_flag = EncodeTopicConfig(none);
  bad_flag.back() = 2;  // 0: none, 1: a callback follows
  EXPECT_FALSE(DecodeTopicConfig(bad_flag).has_value());
}

TEST(CodecTest, TopicConfigRoundTripsEachFieldAlone) {
  const core::TopicConfig all = EveryFieldButTheCallback();
  Result<core::TopicConfig> back = DecodeTopicConfig(EncodeTopicConfig(all));
  ASSERT_TRUE(back.has_value());
  EXPECT_EQ(*back, all);
  EXPECT_EQ(*DecodeTopicConfig(EncodeTopicConfig(core::TopicConfig{})), core::TopicConfig{});
  core::TopicConfig one;
  one.dead_letter_topic = "";  // set to "none": not the same as unset
  EXPECT_EQ(*DecodeTopicConfig(EncodeTopicConfig(one)), one);
  one = core::TopicConfig{};
  one.paused = false;
  EXPECT_EQ(*DecodeTopicConfig(EncodeTopicConfig(one)), one);
  const std::string enc = EncodeTopicConfig(all);
  for (size_t n = 0; n < enc.size(); ++n) {
    EXPECT_EQ(DecodeTopicConfig(enc.substr(0, n)).error().code(), Errc::kCorruption) << n;
  }
  EXPECT_FALSE(DecodeTopicConfig(enc + "x").has_value());
  std::string unknown_field = EncodeTopicConfig(core::TopicConfig{});
  unknown_field[1] = static_cast<char>(0x80);
  EXPECT_FALSE(DecodeTopicConfig(unknown_field).has_value());
}

TEST(CodecTest, VisValueRoundTripCarriesMsgId) {
  MessageRecord r = SampleRecord();
  r.msg_id = std::string("nul\0inside-中文", 17);
  MessageRecord out;
  ASSERT_TRUE(DecodeVisValue(EncodeVisValue(r), &out).ok());
  EXPECT_EQ(out.msg_id, r.msg_id);
  ExpectSameScalars(out, r);
}

TEST(CodecTest, CorruptMetaIsCorruption) {
  std::string good = EncodeMeta(SampleRecord());
  MessageRecord out;
  EXPECT_EQ(DecodeMeta("", &out).code(), Errc::kCorruption);
  std::string bad_version = good;
  bad_version[0] = 99;
  EXPECT_EQ(DecodeMeta(bad_version, &out).code(), Errc::kCorruption);
  for (size_t n = 0; n < good.size(); ++n) {  // every truncation
    EXPECT_EQ(DecodeMeta(good.substr(0, n), &out).code(), Errc::kCorruption) << n;
  }
  EXPECT_EQ(DecodeMeta(good + "x", &out).code(), Errc::kCorruption);  // trailing bytes
  // Phase and status out of range (version 4's fixed-width layout).
  MessageRecord r = SampleRecord();
  std::string enc = EncodeMetaV4(r);
  size_t phase_at = 1 + 8 * 3 + 4 + 8;
  std::string bad_phase = enc;
  bad_phase[phase_at] = 3;
  EXPECT_EQ(DecodeMeta(bad_phase, &out).code(), Errc::kCorruption);
  std::string bad_status = enc;
  bad_status[phase_at + 1] = 0;
  EXPECT_EQ(DecodeMeta(bad_status, &out).code(), Errc::kCorruption);
  bad_status[phase_at + 1] = 8;
  EXPECT_EQ(DecodeMeta(bad_status, &out).code(), Errc::kCorruption);
  // Version 5: the state byte after the version and five varints (6, 2, 3, 1 and 1 bytes here)
  // holds phase, status and whether an end time follows; its other bits are 0.
  std::string v5 = EncodeMeta(r);
  const size_t state_at = 1 + 6 + 2 + 3 + 1 + 1;
  ASSERT_EQ(v5[state_at], 1 | (1 << 2));  // delivered, waiting, no end time
  for (int bad : {3 | (1 << 2), 1, 1 | (1 << 2) | 0x40, 1 | (1 << 2) | 0x80}) {
    std::string bad_state = v5;
    bad_state[state_at] = static_cast<char>(bad);
    EXPECT_EQ(DecodeMeta(bad_state, &out).code(), Errc::kCorruption) << bad;
  }
}

// Version 5 holds what version 4 held, in fewer bytes: a new message's metadata takes 29 bytes
// instead of 70.
TEST(CodecTest, MetaVersionFiveDecodesAsVersionFourAndIsSmaller) {
  MessageRecord fresh = SampleRecord();
  fresh.phase = Phase::kPending;
  fresh.retry = 0;
  fresh.visible_at = fresh.trigger_time;
  MessageRecord ended = SampleRecord();
  ended.phase = Phase::kEnded;
  ended.end_status = MsgStatus::kConsumeOk;
  ended.ended_at = kT0 + Millis(40'000);
  ended.retry_interval = Millis(700);
  ended.dead_letter = core::DeadLetter{"orders", MsgStatus::kExpire, 3, kT0};
  ended.last_error = "boom";
  ended.priority = 9;
  for (const MessageRecord& r : {fresh, ended, SampleRecord()}) {
    MessageRecord from_v4, from_v5;
    ASSERT_TRUE(DecodeMeta(EncodeMetaV4(r), &from_v4).ok());
    ASSERT_TRUE(DecodeMeta(EncodeMeta(r), &from_v5).ok());
    EXPECT_EQ(from_v4, from_v5);
    ExpectSameScalars(from_v5, r);
    EXPECT_LE(EncodeMeta(r).size() + 20, EncodeMetaV4(r).size());
  }
  EXPECT_LE(EncodeMeta(fresh).size(), 30u);  // 70 in version 4
}

// The bytes of format 5 as stores hold them (written by the encoder before it wrote in one pass):
// encoding them differently would be a format change (docs/storage-format.md).
TEST(CodecTest, MetaBytesAreFormatFiveAsStoresHoldThem) {
  MessageRecord r = SampleRecord();
  EXPECT_EQ(EncodeMeta(r),
            std::string_view("\x05\x80\xa0\xab\xfe\xf9\x62\x90\x4e\xd0\xf7\x07\x0e\x06\x05\xe0"
                             "\xd4\x03\x94\xb4\xe4\xf4\xcb\x03\x00\x00\x00\x00\x00\x00\x00",
                             31));
  EXPECT_EQ(EncodeVisValue(r),
            std::string_view("\x04\x69\x64\x2d\x31\x05\x80\xa0\xab\xfe\xf9\x62\x90\x4e\xd0\xf7"
                             "\x07\x0e\x06\x05\xe0\xd4\x03\x94\xb4\xe4\xf4\xcb\x03\x00\x00\x00"
                             "\x00\x00\x00\x00",
                             36));
  r.priority = 9;
  r.count_trigger = 1'000'000'000'000;
  r.count = 999;
  r.last_error = "timeout";
  r.retry_interval = Millis(1'234'567);
  r.dead_letter = core::DeadLetter{"orders", MsgStatus::kRetryExhaust, 17, FromEpochMs(-5)};
  r.ended_at = kT0 + Millis(70'000);
  r.phase = Phase::kEnded;
  r.end_status = MsgStatus::kRetryExhaust;
  r.push = true;
  core::Callback kafka;
  kafka.type = core::CallbackType::kKafka;
  kafka.brokers = "k1:9092";
  kafka.kafka_topic = "orders";
  r.callback = kafka;
  EXPECT_EQ(EncodeMeta(r),
            std::string_view("\x05\x80\xa0\xab\xfe\xf9\x62\x90\x4e\xd0\xf7\x07\x0e\x06\x3a\xe0"
                             "\xd4\x03\xe0\xc5\x08\x94\xb4\xe4\xf4\xcb\x03\x09\x80\xa0\x94\xa5"
                             "\x8d\x1d\xe7\x07\x07\x74\x69\x6d\x65\x6f\x75\x74\x87\xad\x4b\x01"
                             "\x06\x6f\x72\x64\x65\x72\x73\x06\x11\xfb\xff\xff\xff\xff\xff\xff"
                             "\xff\x03\x1e\x01\x02\x88\x27\x00\x00\x00\x04\x50\x4f\x53\x54\x00"
                             "\x00\x07\x6b\x31\x3a\x39\x30\x39\x32\x06\x6f\x72\x64\x65\x72\x73"
                             "\x00",
                             97));
}

TEST(CodecTest, CorruptVisValueIsCorruption) {
  MessageRecord out;
  EXPECT_EQ(DecodeVisValue("", &out).code(), Errc::kCorruption);
  EXPECT_EQ(DecodeVisValue(std::string(1, '\x7f'), &out).code(), Errc::kCorruption);  // long id
  std::string good = EncodeVisValue(SampleRecord());
  EXPECT_EQ(DecodeVisValue(good.substr(0, good.size() - 1), &out).code(), Errc::kCorruption);
  EXPECT_EQ(DecodeVisValue("\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff", &out).code(),
            Errc::kCorruption);  // a varint that never ends
}

TEST(CodecTest, OnlyCanonicalVarintsDecodeSoMetadataHasOneEncoding) {
  MessageRecord r = SampleRecord();
  r.priority = 0;
  std::string enc = EncodeMetaV4(r);
  MessageRecord out;
  ASSERT_TRUE(DecodeMeta(enc, &out).ok());
  // Version 5: the produce time is the first varint (6 bytes here); an overlong one is corrupt.
  std::string v5 = EncodeMeta(r);
  ASSERT_TRUE(DecodeMeta(v5, &out).ok());
  ASSERT_TRUE((v5[5] & 0x80) != 0 && (v5[6] & 0x80) == 0);
  std::string overlong5 =
      v5.substr(0, 6) + static_cast<char>(v5[6] | 0x80) + std::string(1, '\0') + v5.substr(7);
  EXPECT_EQ(DecodeMeta(overlong5, &out).code(), Errc::kCorruption);
  // The priority is the first varint after the fixed-width version 1 fields (63 bytes).
  ASSERT_EQ(enc[63], '\0');
  std::string overlong = enc.substr(0, 63) + std::string("\x80\x00", 2) + enc.substr(64);
  EXPECT_EQ(DecodeMeta(overlong, &out).code(), Errc::kCorruption);
  // A length varint past 64 bits in a vis value.
  EXPECT_EQ(
      DecodeVisValue(std::string("\xff\xff\xff\xff\xff\xff\xff\xff\xff\x02", 10), &out).code(),
      Errc::kCorruption);
}

// The keys' bytes as stores hold them (docs/storage-format.md): ns and topic length-prefixed
// (varints), then the key's own fields, big-endian, times with the sign bit flipped.
TEST(CodecTest, KeyBytesAreTheStoredFormat) {
  std::string t1 = std::string("\x80\x00\x00\x00\x00\x00\x03\xe8", 8);  // 1000 ms
  std::string seq = std::string("\x00\x00\x00\x00\x00\x01\x02\x03", 8);
  EXPECT_EQ(TopicPrefix("ns", "topic"), std::string("\x02ns\x05topic"));
  EXPECT_EQ(RecordKey("ns", "topic", "m-1"), std::string("\x02ns\x05topicm-1"));
  EXPECT_EQ(VisKey("ns", "t", VisKind::kDelivered, FromEpochMs(1000), 0x010203),
            std::string("\x02ns\x01t\x01", 6) + t1 + seq);
  EXPECT_EQ(VisKey("", "t", VisKind::kPending, FromEpochMs(-1), 0),
            std::string("\x00\x01t\x00", 4) + std::string("\x7f\xff\xff\xff\xff\xff\xff\xff", 8) +
                std::string(8, '\0'));
  EXPECT_EQ(HistKey("ns", "t", FromEpochMs(1000)), std::string("\x02ns\x01t") + t1);
  // A topic of 200 bytes: a two-byte length.
  std::string long_topic(200, 'x');
  EXPECT_EQ(RecordKey("ns", long_topic, "m"), std::string("\x02ns\xc8\x01", 5) + long_topic + "m");
  EXPECT_EQ(HistKey("ns", long_topic, FromEpochMs(1000)),
            std::string("\x02ns\xc8\x01", 5) + long_topic + t1);
}

TEST(CodecTest, TimesSortInKeysNegativeFirst) {
  std::vector<int64_t> times = {
      std::numeric_limits<int64_t>::min(), -1'000'000, -2, -1, 0, 1, 255, 256, 1'700'000'000'000,
      std::numeric_limits<int64_t>::max()};
  for (size_t i = 0; i + 1 < times.size(); ++i) {
    std::string a, b;
    AppendTime(a, FromEpochMs(times[i]));
    AppendTime(b, FromEpochMs(times[i + 1]));
    EXPECT_EQ(a.size(), 8u);
    EXPECT_LT(a, b) << times[i] << " vs " << times[i + 1];
    EXPECT_LT(HistKey("ns", "t", FromEpochMs(times[i])),
              HistKey("ns", "t", FromEpochMs(times[i + 1])));
    EXPECT_LT(RetentionKey("ns", FromEpochMs(times[i]), 9),
              RetentionKey("ns", FromEpochMs(times[i + 1]), 0));
  }
}

TEST(CodecTest, VisKeysSortByKindThenTimeThenSeq) {
  std::vector<std::string> keys;
  std::vector<std::tuple<int, int64_t, uint64_t>> want;
  for (VisKind kind : {VisKind::kPending, VisKind::kDelivered}) {
    for (int64_t t : {-5'000LL, -1LL, 0LL, 1LL, 300LL, 1'700'000'000'000LL}) {
      for (uint64_t seq : {0ULL, 1ULL, 255ULL, 256ULL, 1ULL << 40, ~0ULL}) {
        keys.push_back(VisKey("ns", "topic", kind, FromEpochMs(t), seq));
        want.emplace_back(static_cast<int>(kind), t, seq);
      }
    }
  }
  std::vector<size_t> order(keys.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::mt19937 rng(7);
  std::shuffle(order.begin(), order.end(), rng);
  std::sort(order.begin(), order.end(), [&](size_t a, size_t b) { return keys[a] < keys[b]; });
  for (size_t i = 0; i + 1 < order.size(); ++i) {
    EXPECT_LT(want[order[i]], want[order[i + 1]]) << i;
  }
  // And each decodes back.
  for (size_t i = 0; i < keys.size(); ++i) {
    Result<VisKeyParts> p = DecodeVisKey("ns", keys[i]);
    ASSERT_TRUE(p.has_value()) << p.error().ToString();
    EXPECT_EQ(p->topic, "topic");
    EXPECT_EQ(static_cast<int>(p->kind), std::get<0>(want[i]));
    EXPECT_EQ(ToEpochMs(p->t), std::get<1>(want[i]));
    EXPECT_EQ(p->seq, std::get<2>(want[i]));
  }
}

TEST(CodecTest, TopicsNeverShareAPrefix) {
  // "a" and "ab": a length-prefixed topic cannot be a prefix of another topic's keys.
  std::string a = TopicPrefix("ns", "a");
  std::string ab = TopicPrefix("ns", "ab");
  EXPECT_NE(ab.substr(0, a.size()), a);
  std::string vis_a = VisKey("ns", "a", VisKind::kDelivered, kTimeMax, ~0ULL);
  EXPECT_TRUE(vis_a < PrefixEnd(a));
  EXPECT_FALSE(VisKey("ns", "ab", VisKind::kPending, kTimeMin, 0) < PrefixEnd(a) &&
               VisKey("ns", "ab", VisKind::kPending, kTimeMin, 0) >= a);
  // Namespaces likewise.
  EXPECT_NE(RecordKey("n", "st", "id").substr(0, TopicPrefix("ns", "t").size()),
            TopicPrefix("ns", "t"));
  EXPECT_NE(RetentionKey("n", kT0, 1).substr(0, RetentionPrefix("ns").size()),
            RetentionPrefix("ns"));
}

TEST(CodecTest, PrefixEnd) {
  EXPECT_EQ(PrefixEnd("abc"), "abd");
  EXPECT_EQ(PrefixEnd(std::string("a\xff", 2)), "b");
  EXPECT_EQ(PrefixEnd(std::string("\xff\xff", 2)), "");  // no upper bound
  EXPECT_EQ(PrefixEnd(""), "");
  std::string p = TopicPrefix("ns", "t");
  EXPECT_LT(p + std::string(100, '\xff'), PrefixEnd(p));
}

TEST(CodecTest, VisKeyOfAnotherNamespaceOrGarbageIsCorruption) {
  std::string key = VisKey("ns", "t", VisKind::kPending, kT0, 5);
  EXPECT_EQ(DecodeVisKey("other", key).error().code(), Errc::kCorruption);
  EXPECT_EQ(DecodeVisKey("ns", key.substr(0, key.size() - 1)).error().code(), Errc::kCorruption);
  EXPECT_EQ(DecodeVisKey("ns", key + "x").error().code(), Errc::kCorruption);
  EXPECT_EQ(DecodeVisKey("ns", "").error().code(), Errc::kCorruption);
  EXPECT_EQ(DecodeVisKey("ns", TopicPrefix("ns", "t")).error().code(), Errc::kCorruption);
}

TEST(CodecTest, HistKeyRoundTripAndCorruption) {
  for (int64_t t : {-7LL, 0LL, 1'700'000'000'123LL}) {
    Result<TimePoint> got = DecodeHistKeyTime("ns", "t", HistKey("ns", "t", FromEpochMs(t)));
    ASSERT_TRUE(got.has_value());
    EXPECT_EQ(ToEpochMs(*got), t);
  }
  std::string key = HistKey("ns", "t", kT0);
  EXPECT_EQ(DecodeHistKeyTime("ns", "u", key).error().code(), Errc::kCorruption);
  EXPECT_EQ(DecodeHistKeyTime("ns", "t", key.substr(0, key.size() - 1)).error().code(),
            Errc::kCorruption);
  EXPECT_EQ(DecodeHistKeyTime("ns", "t", key + "x").error().code(), Errc::kCorruption);
}

TEST(CodecTest, CounterRoundTrip) {
  for (int64_t v :
       std::vector<int64_t>{0, 1, -1, int64_t{1} << 40, std::numeric_limits<int64_t>::min()}) {
    EXPECT_EQ(EncodeCounter(v).size(), 8u);
    EXPECT_EQ(DecodeCounter(EncodeCounter(v)), v);
  }
  EXPECT_EQ(EncodeCounter(1), std::string("\x01\0\0\0\0\0\0\0", 8));  // little-endian
  EXPECT_EQ(DecodeCounter("short"), 0);
}

TEST(CodecTest, RetentionRoundTripAndCorruption) {
  std::string topic("t\0with nul", 10);
  std::string key = RetentionKey("ns", FromEpochMs(-3), 77);
  std::string value = EncodeRetentionValue(topic, "msg/中文");
  Result<RetentionEntry> e = DecodeRetention("ns", key, value);
  ASSERT_TRUE(e.has_value()) << e.error().ToString();
  EXPECT_EQ(ToEpochMs(e->purge_at), -3);
  EXPECT_EQ(e->seq, 77u);
  EXPECT_EQ(e->topic, topic);
  EXPECT_EQ(e->msg_id, "msg/中文");
  EXPECT_EQ(key.substr(0, RetentionPrefix("ns").size()), RetentionPrefix("ns"));
  EXPECT_EQ(DecodeRetention("other", key, value).error().code(), Errc::kCorruption);
  EXPECT_EQ(DecodeRetention("ns", key + "x", value).error().code(), Errc::kCorruption);
  EXPECT_EQ(DecodeRetention("ns", key, "").error().code(), Errc::kCorruption);
  EXPECT_EQ(DecodeRetention("ns", key,
                            "\x05"
                            "ab")
                .error()
                .code(),
            Errc::kCorruption);
  // Same purge time: by seq.
  EXPECT_LT(RetentionKey("ns", kT0, 1), RetentionKey("ns", kT0, 2));
  EXPECT_LT(RetentionKey("ns", kT0, 255), RetentionKey("ns", kT0, 256));
}

TEST(CodecTest, RecordKeysOfOneTopicShareItsPrefix) {
  std::string p = TopicPrefix("ns", "t");
  for (const std::string& id : std::vector<std::string>{"", "a", "zzz", std::string(300, 'x')}) {
    std::string k = RecordKey("ns", "t", id);
    EXPECT_EQ(k.substr(0, p.size()), p);
    EXPECT_LT(k, PrefixEnd(p));
  }
  // Long topics and namespaces (multi-byte varint lengths) stay distinct.
  EXPECT_NE(TopicPrefix(std::string(200, 'n'), "t"), TopicPrefix("n", std::string(200, 'n') + "t"));
}

TEST(CodecTest, CfNames) {
  EXPECT_EQ(CfName(Cf::kMeta), "meta");
  EXPECT_EQ(CfName(Cf::kRecords), "records");
  EXPECT_EQ(CfName(Cf::kPayloads), "payloads");
  EXPECT_EQ(CfName(Cf::kVis), "vis");
  EXPECT_EQ(CfName(Cf::kHist), "hist");
  EXPECT_EQ(CfName(Cf::kRetention), "retention");
}

}  // namespace
}  // namespace chronoq::storage
