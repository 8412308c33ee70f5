#include "core/validation.h"

#include <gtest/gtest.h>

#include <string>

namespace chronoq::core {
namespace {

using namespace std::string_literals;

const Limits kLimits;

void ExpectRefused(const Status& s, std::string_view param) {
  EXPECT_EQ(s.code(), Errc::kInvalidArgument);
  EXPECT_NE(s.message().find(param), std::string::npos)
      << "'" << s.message() << "' should name " << param;
}

TEST(ValidationTest, TopicLimitIsInclusive) {
  EXPECT_TRUE(ValidateTopic(std::string(255, 'a'), kLimits).ok());
  Status s = ValidateTopic(std::string(256, 'a'), kLimits);
  ExpectRefused(s, "topic");
  EXPECT_NE(s.message().find("256"), std::string::npos) << s.message();
  EXPECT_NE(s.message().find("255"), std::string::npos) << s.message();
}

TEST(ValidationTest, TopicLimitCountsUtf8Bytes) {
  std::string t;
  for (int i = 0; i < 85; ++i) t += "中";  // 3 bytes each: 255 bytes, 85 characters
  EXPECT_TRUE(ValidateTopic(t, kLimits).ok());
  ExpectRefused(ValidateTopic(t + "a", kLimits), "topic");
}

TEST(ValidationTest, EmptyValuesAreRefusedNamingTheParameter) {
  Status s = ValidateTopic("", kLimits);
  ExpectRefused(s, "topic");
  EXPECT_EQ(s.message(), "topic is empty");
  ExpectRefused(ValidateMsgId("", kLimits), "msgId");
  ExpectRefused(ValidatePayload("", kLimits), "msg");
}

TEST(ValidationTest, MsgIdLimitIsInclusive) {
  EXPECT_TRUE(ValidateMsgId(std::string(255, 'x'), kLimits).ok());
  ExpectRefused(ValidateMsgId(std::string(256, 'x'), kLimits), "msgId");
}

TEST(ValidationTest, CustomLimitsApply) {
  Limits small;
  small.max_topic_bytes = 3;
  small.max_msg_id_bytes = 2;
  small.max_msg_bytes = 4;
  EXPECT_TRUE(ValidateTopic("abc", small).ok());
  ExpectRefused(ValidateTopic("abcd", small), "topic");
  EXPECT_TRUE(ValidateMsgId("ab", small).ok());
  ExpectRefused(ValidateMsgId("abc", small), "msgId");
  EXPECT_TRUE(ValidatePayload("abcd", small).ok());
  ExpectRefused(ValidatePayload("abcde", small), "msg");
}

TEST(ValidationTest, ControlCharactersRefusedInTopicAndMsgId) {
  for (int c = 0; c < 0x20; ++c) {
    std::string v = "ab"s + static_cast<char>(c) + "cd";
    ExpectRefused(ValidateTopic(v, kLimits), "topic");
    ExpectRefused(ValidateMsgId(v, kLimits), "msgId");
  }
  ExpectRefused(ValidateTopic("ab\x7F", kLimits), "topic");
  ExpectRefused(ValidateMsgId("\x7F", kLimits), "msgId");
  ExpectRefused(ValidateTopic("\0"s, kLimits), "topic");
  Status s = ValidateTopic("a\tb", kLimits);
  EXPECT_NE(s.message().find("control"), std::string::npos) << s.message();
}

TEST(ValidationTest, InvalidUtf8RefusedInTopicAndMsgId) {
  for (std::string bad :
       {"\xC0\x80"s, "\xED\xA0\x80"s, "\xF4\x90\x80\x80"s, "ab\xE4\xB8"s, "\x80"s, "\xFF"s}) {
    ExpectRefused(ValidateTopic(bad, kLimits), "topic");
    ExpectRefused(ValidateMsgId(bad, kLimits), "msgId");
    Status s = ValidateTopic(bad, kLimits);
    EXPECT_NE(s.message().find("UTF-8"), std::string::npos) << s.message();
  }
}

TEST(ValidationTest, PrintableUnicodeAcceptedInTopicAndMsgId) {
  for (std::string ok : {"orders"s, "a b"s, "中文-topic"s, "😀"s, "~!@#$%^&*()"s, "ü"s}) {
    EXPECT_TRUE(ValidateTopic(ok, kLimits).ok()) << ok;
    EXPECT_TRUE(ValidateMsgId(ok, kLimits).ok()) << ok;
  }
}

TEST(ValidationTest, PayloadMayHoldNulControlsAndAnyValidUtf8) {
  EXPECT_TRUE(ValidatePayload("\0"s, kLimits).ok());
  EXPECT_TRUE(ValidatePayload("a\0b\0"s, kLimits).ok());
  EXPECT_TRUE(ValidatePayload("\t\r\n\x01\x1F\x7F"s, kLimits).ok());
  EXPECT_TRUE(ValidatePayload("中文 😀 \xF4\x8F\xBF\xBF", kLimits).ok());
  EXPECT_TRUE(ValidatePayload("{\"json\": [1, 2]}", kLimits).ok());
}

TEST(ValidationTest, PayloadMustBeValidUtf8) {
  Status s = ValidatePayload("ok\xFF", kLimits);
  ExpectRefused(s, "msg");
  EXPECT_NE(s.message().find("UTF-8"), std::string::npos);
  ExpectRefused(ValidatePayload("\xED\xA0\x80", kLimits), "msg");
}

TEST(ValidationTest, PayloadLimitIsInclusive) {
  EXPECT_TRUE(ValidatePayload(std::string(kLimits.max_msg_bytes, 'p'), kLimits).ok());
  ExpectRefused(ValidatePayload(std::string(kLimits.max_msg_bytes + 1, 'p'), kLimits), "msg");
}

TEST(ValidationTest, DelayLimitIsInclusiveAndNegativeIsFine) {
  EXPECT_TRUE(ValidateDelay(kTenYears, kLimits).ok());
  EXPECT_TRUE(ValidateDelay(Millis(0), kLimits).ok());
  EXPECT_TRUE(ValidateDelay(Millis(-5), kLimits).ok());
  EXPECT_TRUE(ValidateDelay(Millis::min(), kLimits).ok());
  ExpectRefused(ValidateDelay(kTenYears + Millis(1), kLimits), "delayMillis");
  ExpectRefused(ValidateDelay(Millis::max(), kLimits), "delayMillis");
}

TEST(ValidationTest, DefaultLimitsMatchTheApi) {
  EXPECT_EQ(kLimits.max_topic_bytes, 255u);
  EXPECT_EQ(kLimits.max_msg_id_bytes, 255u);
  EXPECT_EQ(kLimits.max_msg_bytes, 4u * 1024 * 1024);
  EXPECT_EQ(kLimits.max_pull_batch, 1000);
  EXPECT_EQ(kLimits.max_long_polling_timeout, Millis(120'000));
  EXPECT_EQ(kLimits.max_delay, Millis(int64_t{315'360'000'000}));
  Defaults d;
  EXPECT_EQ(d.ttl, Millis(3'600'000));
  EXPECT_EQ(d.max_retry, 10);
  EXPECT_EQ(d.ack_timeout, Millis(30'000));
  EXPECT_EQ(d.long_polling_timeout, Millis(10'000));
}

}  // namespace
}  // namespace chronoq::core
