// HPACK as the engine that frames HTTP/2 itself uses it (h2_frames.h): a repeated block of indexed
// fields is answered from what was kept, and never after the table changed.
#include "grpc_api/h2_frames.h"

#include <gtest/gtest.h>

#include <string>
#include <utility>
#include <vector>

namespace chronoq::grpc_api::h2 {
namespace {

using Fields = std::vector<std::pair<std::string, std::string>>;

Fields Decode(HpackDecoder& d, const std::string& block) {
  Fields out;
  EXPECT_TRUE(d.Decode(reinterpret_cast<const uint8_t*>(block.data()), block.size(),
                       [&](std::string_view n, std::string_view v) { out.emplace_back(n, v); }));
  return out;
}

std::string Encode(HpackEncoder& e, std::vector<Field> fields) {
  std::string block;
  EXPECT_TRUE(e.Encode(fields.data(), fields.size(), &block));
  return block;
}

TEST(HpackDecoderTest, ARepeatedIndexedBlockGetsTheFieldsOfTheTableAsItIsNow) {
  HpackEncoder client;
  HpackDecoder server;
  // The first call's fields enter the table; the next call's block is indexes only.
  // (nghttp2's encoder never indexes :path; gRPC's clients do, as the bench's h2 client.)
  const Fields call = {{":method", "POST"}, {"content-type", "application/grpc"}};
  EXPECT_EQ(Decode(server, Encode(client, {{":method", "POST"}, {"content-type", call[1].second}})),
            call);
  const std::string indexed =
      Encode(client, {{":method", "POST"}, {"content-type", call[1].second}});
  ASSERT_EQ(indexed, std::string("\x83\xbe", 2));  // static 3, dynamic 62
  EXPECT_EQ(Decode(server, indexed), call);
  EXPECT_EQ(Decode(server, indexed), call);  // the kept fields

  // A new entry moves index 62: the same bytes now name it.
  EXPECT_EQ(Decode(server, Encode(client, {{"x-next", "1"}})), (Fields{{"x-next", "1"}}));
  EXPECT_EQ(Decode(server, indexed), (Fields{{":method", "POST"}, {"x-next", "1"}}));
  EXPECT_EQ(Decode(server, indexed), (Fields{{":method", "POST"}, {"x-next", "1"}}));
}

TEST(HpackDecoderTest, AFieldThatIsNotOneByteIndexedIsDecodedEachTime) {
  HpackEncoder client;
  HpackDecoder server;
  const std::string literal = Encode(client, {{"grpc-timeout", "5S", false}});  // never indexed
  EXPECT_EQ(Decode(server, literal), (Fields{{"grpc-timeout", "5S"}}));
  EXPECT_EQ(Decode(server, literal), (Fields{{"grpc-timeout", "5S"}}));
  const std::string bad = "\x80";  // index 0: a compression error, kept or not
  EXPECT_FALSE(server.Decode(reinterpret_cast<const uint8_t*>(bad.data()), bad.size(),
                             [](std::string_view, std::string_view) {}));
}

}  // namespace
}  // namespace chronoq::grpc_api::h2
