#include "engine/list_cursor.h"

#include <gtest/gtest.h>

#include <string>

namespace chronoq::engine {
namespace {

using core::MsgStatus;

ListCursor At(MsgStatus s, bool walk, int32_t level, int64_t t_ms, uint64_t seq) {
  ListCursor c;
  c.walk = walk;
  c.status = s;
  c.at_start = false;
  c.level = s == MsgStatus::kReady ? level : 0;
  c.t = FromEpochMs(t_ms);
  c.seq = seq;
  return c;
}

TEST(ListCursorTest, RoundTripsEveryKindOfPosition) {
  const ListCursor cases[] = {
      At(MsgStatus::kWaiting, false, 0, 1'700'000'000'000, 42),
      At(MsgStatus::kWaiting, true, 0, -5, 0),  // before the epoch
      At(MsgStatus::kReady, true, 9, 1'700'000'000'000, UINT64_MAX),
      At(MsgStatus::kReady, false, 19, 5, 6),  // the push lane's priority 9
      At(MsgStatus::kReady, false, 0, 0, 1),
      At(MsgStatus::kConsuming, true, 0, INT64_MAX, 7),
      At(MsgStatus::kRetryExhaust, false, 0, 1'700'000'000'000, 3),
      ListCursor{true, MsgStatus::kConsuming, true, 0, {}, 0},  // at the start of a status
  };
  for (const ListCursor& c : cases) {
    const std::string text = EncodeListCursor("topic", c);
    for (char ch : text) EXPECT_TRUE(ch > 0x20 && ch < 0x7f) << text;
    EXPECT_LE(text.size(), 80u) << text;
    const std::optional<MsgStatus> listing =
        c.walk ? std::nullopt : std::optional<MsgStatus>(c.status);
    Result<ListCursor> back = DecodeListCursor("topic", listing, text);
    ASSERT_TRUE(back.has_value()) << text << ": " << back.error().ToString();
    EXPECT_EQ(*back, c) << text;
  }
}

TEST(ListCursorTest, RefusesWhatItDidNotMakeWithTheReason) {
  const std::string c = EncodeListCursor("t", At(MsgStatus::kWaiting, false, 0, 1000, 5));
  auto why = [](std::optional<MsgStatus> s, const std::string& text, const std::string& topic) {
    Result<ListCursor> r = DecodeListCursor(topic, s, text);
    EXPECT_FALSE(r.has_value()) << text;
    if (r.has_value()) return std::string();
    EXPECT_EQ(r.error().code(), Errc::kInvalidArgument);
    EXPECT_EQ(r.error().message().rfind("cursor is not valid: ", 0), 0u) << r.error().message();
    return r.error().message();
  };
  EXPECT_NE(why(MsgStatus::kWaiting, "abc", "t").find("not made by this server"),
            std::string::npos);
  EXPECT_NE(why(MsgStatus::kWaiting, c, "u").find("another topic"), std::string::npos);
  EXPECT_NE(why(MsgStatus::kReady, c, "t").find("status 1, not status 2"), std::string::npos);
  EXPECT_NE(why(std::nullopt, c, "t").find("not no status"), std::string::npos);
  EXPECT_NE(why(MsgStatus::kWaiting, c + "\n", "t").find("characters"), std::string::npos);
  std::string altered = c;
  altered[altered.size() - 12] ^= 1;
  why(MsgStatus::kWaiting, altered, "t");
  why(MsgStatus::kWaiting, std::string(c.size(), '.'), "t");
  // A READY position's level is 0..19.
  ListCursor beyond = At(MsgStatus::kReady, false, 20, 5, 6);
  EXPECT_NE(why(MsgStatus::kReady, EncodeListCursor("t", beyond), "t").find("malformed position"),
            std::string::npos);
}

}  // namespace
}  // namespace chronoq::engine
