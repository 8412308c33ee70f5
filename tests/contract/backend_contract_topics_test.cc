// Contract cases for getTopicInfo, getTopicInfoList, ready notifications and payload fidelity.
// See backend_contract.h.
#include "tests/contract/backend_contract.h"

namespace chronoq::contract {
namespace {

using core::MsgStatus;
using Names = std::vector<std::string>;
using namespace std::string_literals;

constexpr int64_t kMin = 60'000;
constexpr int64_t kHour = 60 * kMin;
constexpr int64_t kDay = 24 * kHour;
constexpr int64_t kLongTtl = 100 * kDay;

// ---- getTopicInfo ----

TEST_P(BackendContractTest, InfoOfUnknownTopicIsAllZero) {
  core::TopicInfo info = Info("nosuchtopic");
  EXPECT_EQ(info, core::TopicInfo{.topic = "nosuchtopic"});
}

TEST_P(BackendContractTest, InfoCountsStatusesOneToThreeOnly) {
  Send("t", "w1", 1'000);
  Send("t", "w2", 2 * kHour, kLongTtl);
  Send("t", "r1", 0);
  Send("t", "r2", 0);
  Send("t", "r3", 0);
  Send("t", "acked", 0);
  ASSERT_EQ(PullIds("t", 1), Names{"r1"});
  ASSERT_EQ(PullIds("t", 1), Names{"r2"});
  ASSERT_TRUE(b_->Ack("t", "r2").ok());
  ASSERT_TRUE(b_->Delete("t", "r3").ok());
  core::TopicInfo info = Info("t");
  EXPECT_EQ(info.topic, "t");
  EXPECT_EQ(info.waiting, 2);
  EXPECT_EQ(info.ready, 1);  // "acked" (never pulled)
  EXPECT_EQ(info.consuming, 1);
  EXPECT_EQ(info.buckets[0], 1);
  EXPECT_EQ(info.buckets[4], 1);  // [1 h, 6 h)
}

TEST_P(BackendContractTest, InfoBucketsAreHalfOpen) {
  int n = 0;
  for (int b = 1; b < core::kBucketCount; ++b) {
    int64_t lo = core::kBucketLowerBounds[b].count();
    Send("t", "at" + std::to_string(b), lo, kLongTtl);
    Send("t", "below" + std::to_string(b), lo - 1, kLongTtl);
    n += 2;
  }
  core::TopicInfo info = Info("t");
  EXPECT_EQ(info.waiting, n);
  EXPECT_EQ(info.buckets[0], 1);
  for (int b = 1; b < core::kBucketCount - 1; ++b) EXPECT_EQ(info.buckets[b], 2) << b;
  EXPECT_EQ(info.buckets[8], 1);
  int64_t sum = 0;
  for (int64_t v : info.buckets) sum += v;
  EXPECT_EQ(sum, info.waiting);
}

TEST_P(BackendContractTest, InfoBucketsFollowTheClock) {
  Send("t", "40d", 40 * kDay, kLongTtl);
  Send("t", "3h", 3 * kHour, kLongTtl);
  Send("t", "5min", 5 * kMin, kLongTtl);
  auto buckets = [&] { return Info("t").buckets; };
  EXPECT_EQ(buckets(), (std::array<int64_t, 9>{0, 1, 0, 0, 1, 0, 0, 0, 1}));
  Advance(2 * kMin);  // 5min -> 3 min left
  EXPECT_EQ(buckets(), (std::array<int64_t, 9>{0, 1, 0, 0, 1, 0, 0, 0, 1}));
  Advance(2 * kMin);  // 1 min left: still [1 min, 10 min)
  EXPECT_EQ(buckets(), (std::array<int64_t, 9>{0, 1, 0, 0, 1, 0, 0, 0, 1}));
  Advance(1);  // 59,999 ms left
  EXPECT_EQ(buckets(), (std::array<int64_t, 9>{1, 0, 0, 0, 1, 0, 0, 0, 1}));
  Advance(2 * kHour);  // 5min triggered; 3h has ~56 min left
  EXPECT_EQ(buckets(), (std::array<int64_t, 9>{0, 0, 0, 1, 0, 0, 0, 0, 1}));
  EXPECT_EQ(Info("t").ready, 1);
  Advance(10 * kDay + 4 * kMin - 1);  // 40d: 30 days minus ~2 h left
  EXPECT_EQ(buckets(), (std::array<int64_t, 9>{0, 0, 0, 0, 0, 0, 0, 1, 0}));
  Advance(30 * kDay);
  EXPECT_EQ(buckets(), (std::array<int64_t, 9>{}));
  EXPECT_EQ(Info("t").ready, 3);
}

TEST_P(BackendContractTest, InfoIsTrueBeforeTimersRun) {
  Send("t", "w", 1'000);
  Send("t", "c", 0);
  Pull("t", 1, 500);
  AdvanceClockOnly(1'000);
  core::TopicInfo info = Info("t");
  EXPECT_EQ(info.waiting, 0);
  EXPECT_EQ(info.ready, 2);
  EXPECT_EQ(info.consuming, 0);
}

TEST_P(BackendContractTest, InfoDropsMessagesWhoseTtlPassed) {
  Send("t", "a", 0, 1'000);
  Send("t", "b", 500, 1'000);
  Advance(1'000);
  EXPECT_EQ(Info("t").ready, 1);
  Advance(500);
  EXPECT_EQ(Info("t"), core::TopicInfo{.topic = "t"});
}

// ---- getTopicInfoList ----

TEST_P(BackendContractTest, ListHasEveryKnownTopicSortedByName) {
  Send("zeta", "a", 0);
  Send("alpha", "a", 1'000);
  Send("Mid", "a", 0);
  Send("alpha", "b", 0);
  std::vector<core::TopicInfo> list = List();
  ASSERT_EQ(list.size(), 3u);
  EXPECT_EQ(list[0].topic, "Mid");  // byte order
  EXPECT_EQ(list[1].topic, "alpha");
  EXPECT_EQ(list[2].topic, "zeta");
  EXPECT_EQ(list[1], Info("alpha"));
  EXPECT_EQ(list[1].waiting, 1);
  EXPECT_EQ(list[1].ready, 1);
}

TEST_P(BackendContractTest, ListHidesTopicsIdleAndEmptyForTheInactivityPeriod) {
  Send("idle", "a", 0);
  Pull("idle");
  ASSERT_TRUE(b_->Ack("idle", "a").ok());
  Send("busy", "w", 40 * kDay, kLongTtl);
  const int64_t inactive = options().topic_inactive.count();
  Advance(inactive - 1);
  EXPECT_EQ(ListNames(), (Names{"busy", "idle"}));
  Advance(1);
  EXPECT_EQ(ListNames(), Names{"busy"});  // a topic holding messages stays
  EXPECT_EQ(Info("idle"), core::TopicInfo{.topic = "idle"});
  Send("idle", "b", 0);
  EXPECT_EQ(ListNames(), (Names{"busy", "idle"}));
}

TEST_P(BackendContractTest, MessageEndingLongAfterItsTopicWentIdleIsPurgedOnTime) {
  // Nobody touches the topic after the send; the message expires after the inactivity period.
  const int64_t ttl = options().topic_inactive.count() * 2;
  Send("t", "a", 0, ttl);
  Advance(ttl);
  EXPECT_EQ(StatusOf("t", "a"), MsgStatus::kExpire);
  EXPECT_TRUE(ListNames().empty());
  Advance(options().retention.count() - 1);
  EXPECT_EQ(StatusOf("t", "a"), MsgStatus::kExpire);
  Advance(1);
  EXPECT_EQ(GetError("t", "a"), Errc::kNotFound);
  Advance(options().topic_inactive.count());
  EXPECT_TRUE(ListNames().empty());
}

TEST_P(BackendContractTest, ListEmptyWhenNothingWasSent) { EXPECT_TRUE(List().empty()); }

// ---- Ready notifications ----

TEST_P(BackendContractTest, NotifiedWhenSentReady) {
  Send("t", "a", 0);
  Names calls = ReadyCalls();
  ASSERT_FALSE(calls.empty());
  for (const std::string& c : calls) EXPECT_EQ(c, "t");
}

TEST_P(BackendContractTest, NotifiedAtTriggerTimeNotBefore) {
  Send("t", "a", 5'000);
  Send("u", "b", 1'000);
  EXPECT_TRUE(ReadyCalls().empty());
  Advance(999);
  EXPECT_TRUE(ReadyCalls().empty());
  Advance(1);
  EXPECT_EQ(ReadyCalls(), Names{"u"});
  Advance(3'999);
  EXPECT_TRUE(ReadyCalls().empty());
  Advance(1);
  EXPECT_EQ(ReadyCalls(), Names{"t"});
}

TEST_P(BackendContractTest, NotifiedOnNack) {
  Send("t", "a", 0);
  Pull("t");
  ReadyCalls();
  ASSERT_TRUE(b_->Ack("t", "a", false).ok());
  EXPECT_FALSE(ReadyCalls().empty());
}

TEST_P(BackendContractTest, NotifiedWhenAckTimeoutPasses) {
  Send("t", "a", 0);
  Pull("t", 1, 2'000);
  ReadyCalls();
  Advance(1'999);
  EXPECT_TRUE(ReadyCalls().empty());
  Advance(1);
  EXPECT_FALSE(ReadyCalls().empty());
}

TEST_P(BackendContractTest, NotNotifiedWhenNothingBecomesConsumable) {
  Send("t", "exhaust", 0, kHour, 0);
  Send("t", "acked", 0);
  Send("t", "deleted", 500);
  ReadyCalls();
  ASSERT_EQ(PullIds("t", 2, 1'000), (Names{"exhaust", "acked"}));
  ASSERT_TRUE(b_->Ack("t", "acked").ok());
  ASSERT_TRUE(b_->Delete("t", "deleted").ok());
  Advance(2'000);  // "exhaust"'s only delivery times out: it ends, nothing is consumable
  EXPECT_TRUE(ReadyCalls().empty());
  EXPECT_EQ(StatusOf("t", "exhaust"), MsgStatus::kRetryExhaust);
}

// ---- Payloads ----

TEST_P(BackendContractTest, PayloadIsByteExact) {
  const std::vector<std::string> payloads = {
      "\0"s,
      "a\0b\0\0c"s,
      "中文 ünïcödé 😀 \xF4\x8F\xBF\xBF"s,
      "{\"json\":[1,2,3],\"s\":\"\\u0000\"}"s,
      "  leading and trailing spaces  "s,
      "\t\r\n\x01\x1F\x7F"s,
      std::string(1 << 20, 'x') + "中",
  };
  for (size_t i = 0; i < payloads.size(); ++i) {
    std::string id = "p" + std::to_string(i);
    core::Message sent = Send("t", id, 0, kHour, 10, payloads[i]);
    EXPECT_EQ(sent.record.payload, payloads[i]) << i;
    EXPECT_EQ(Get("t", id).record.payload, payloads[i]) << i;
    // An idempotent send answers the stored payload, byte for byte.
    EXPECT_EQ(Send("t", id, 0, kHour, 10, "other").record.payload, payloads[i]) << i;
  }
  std::vector<core::Message> pulled = Pull("t", 100);
  ASSERT_EQ(pulled.size(), payloads.size());
  for (size_t i = 0; i < payloads.size(); ++i) {
    EXPECT_EQ(pulled[i].record.payload, payloads[i]) << i;
    EXPECT_EQ(pulled[i].record.payload.size(), payloads[i].size()) << i;
  }
  ASSERT_TRUE(b_->Ack("t", "p1").ok());
  EXPECT_EQ(Get("t", "p1").record.payload, payloads[1]);  // ended and retained: still exact
}

TEST_P(BackendContractTest, TopicAndIdMayHoldAnyPrintableUtf8) {
  const std::string topic = "主题 with spaces/and:symbols";
  const std::string id = "标识-😀";
  Send(topic, id, 0);
  EXPECT_EQ(Get(topic, id).record.topic, topic);
  EXPECT_EQ(PullIds(topic), Names{id});
  EXPECT_TRUE(b_->Ack(topic, id).ok());
  EXPECT_EQ(ListNames(), Names{topic});
  std::string long_topic(255, 't');
  std::string long_id(255, 'i');
  Send(long_topic, long_id, 0);
  EXPECT_EQ(StatusOf(long_topic, long_id), MsgStatus::kReady);
}

}  // namespace
}  // namespace chronoq::contract
