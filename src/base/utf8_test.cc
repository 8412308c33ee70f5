#include "base/utf8.h"

#include <gtest/gtest.h>

#include <string>

namespace chronoq::base {
namespace {

using namespace std::string_literals;

TEST(Utf8Test, AcceptsAsciiEmptyAndNul) {
  EXPECT_TRUE(IsValidUtf8(""));
  EXPECT_TRUE(IsValidUtf8("hello world"));
  EXPECT_TRUE(IsValidUtf8("a\0b"s));
  EXPECT_TRUE(IsValidUtf8("\0"s));
  EXPECT_TRUE(IsValidUtf8("\x7F"));
}

TEST(Utf8Test, AcceptsEveryEncodingLengthAtItsBounds) {
  EXPECT_TRUE(IsValidUtf8("\xC2\x80"));          // U+0080, smallest 2-byte
  EXPECT_TRUE(IsValidUtf8("\xDF\xBF"));          // U+07FF
  EXPECT_TRUE(IsValidUtf8("\xE0\xA0\x80"));      // U+0800, smallest 3-byte
  EXPECT_TRUE(IsValidUtf8("\xED\x9F\xBF"));      // U+D7FF, just below the surrogates
  EXPECT_TRUE(IsValidUtf8("\xEE\x80\x80"));      // U+E000, just above the surrogates
  EXPECT_TRUE(IsValidUtf8("\xEF\xBF\xBF"));      // U+FFFF
  EXPECT_TRUE(IsValidUtf8("\xF0\x90\x80\x80"));  // U+10000, smallest 4-byte
  EXPECT_TRUE(IsValidUtf8("\xF4\x8F\xBF\xBF"));  // U+10FFFF, the largest code point
  EXPECT_TRUE(IsValidUtf8("中文 ünïcödé 😀"));
}

TEST(Utf8Test, RefusesOverlongForms) {
  EXPECT_FALSE(IsValidUtf8("\xC0\x80"));          // NUL as 2 bytes
  EXPECT_FALSE(IsValidUtf8("\xC1\xBF"));          // U+007F as 2 bytes
  EXPECT_FALSE(IsValidUtf8("\xE0\x80\x80"));      // NUL as 3 bytes
  EXPECT_FALSE(IsValidUtf8("\xE0\x9F\xBF"));      // U+07FF as 3 bytes
  EXPECT_FALSE(IsValidUtf8("\xF0\x80\x80\x80"));  // NUL as 4 bytes
  EXPECT_FALSE(IsValidUtf8("\xF0\x8F\xBF\xBF"));  // U+FFFF as 4 bytes
}

TEST(Utf8Test, RefusesSurrogates) {
  EXPECT_FALSE(IsValidUtf8("\xED\xA0\x80"));              // U+D800
  EXPECT_FALSE(IsValidUtf8("\xED\xBF\xBF"));              // U+DFFF
  EXPECT_FALSE(IsValidUtf8("\xED\xA0\xBD\xED\xB8\x80"));  // CESU-8 pair
}

TEST(Utf8Test, RefusesCodePointsAboveMax) {
  EXPECT_FALSE(IsValidUtf8("\xF4\x90\x80\x80"));          // U+110000
  EXPECT_FALSE(IsValidUtf8("\xF7\xBF\xBF\xBF"));          // U+1FFFFF
  EXPECT_FALSE(IsValidUtf8("\xF8\x88\x80\x80\x80"));      // 5-byte form
  EXPECT_FALSE(IsValidUtf8("\xFC\x84\x80\x80\x80\x80"));  // 6-byte form
  EXPECT_FALSE(IsValidUtf8("\xFE"));
  EXPECT_FALSE(IsValidUtf8("\xFF"));
}

TEST(Utf8Test, RefusesTruncatedSequences) {
  EXPECT_FALSE(IsValidUtf8("\xC2"));
  EXPECT_FALSE(IsValidUtf8("\xE4\xB8"));
  EXPECT_FALSE(IsValidUtf8("\xF0\x9F\x98"));
  EXPECT_FALSE(IsValidUtf8("ok\xF0\x9F\x98"));
  // A truncated sequence followed by more text: the next byte is not a continuation byte.
  EXPECT_FALSE(
      IsValidUtf8("\xE4\xB8"
                  "a"));
  EXPECT_FALSE(IsValidUtf8("\xC2\0"s));
}

TEST(Utf8Test, RefusesStrayContinuationBytes) {
  EXPECT_FALSE(IsValidUtf8("\x80"));
  EXPECT_FALSE(IsValidUtf8("\xBF"));
  EXPECT_FALSE(IsValidUtf8("a\x80z"));
  EXPECT_FALSE(IsValidUtf8("\xC2\x80\x80"));  // one continuation too many
}

TEST(Utf8Test, HasControlCharsCoversC0AndDel) {
  for (int c = 0; c < 0x20; ++c) {
    EXPECT_TRUE(HasControlChars(std::string("a") + static_cast<char>(c) + "b")) << c;
  }
  EXPECT_TRUE(HasControlChars("\x7F"));
  EXPECT_FALSE(HasControlChars(""));
  EXPECT_FALSE(HasControlChars(" ~abcXYZ019"));
  EXPECT_FALSE(HasControlChars("中文😀"));     // multi-byte sequences are not control bytes
  EXPECT_FALSE(HasControlChars("\xC2\x80"));  // U+0080 (a C1 control) is not in the refused set
}

}  // namespace
}  // namespace chronoq::base

namespace chronoq::base {
namespace {

// The ASCII fast path reads eight bytes at a time: a bad or multi-byte sequence at any offset of
// a long ASCII run, and at its end, is still seen.
TEST(Utf8Test, LongAsciiRunsWithASequenceAtEveryOffset) {
  for (size_t offset = 0; offset < 40; ++offset) {
    std::string ascii(offset, 'a');
    EXPECT_TRUE(IsValidUtf8(ascii + "\xC3\xA9" + std::string(17, 'b'))) << offset;
    EXPECT_TRUE(IsValidUtf8(ascii + "\xF0\x9F\x98\x80")) << offset;
    EXPECT_FALSE(IsValidUtf8(ascii + "\xC3" + std::string(17, 'b'))) << offset;
    EXPECT_FALSE(IsValidUtf8(ascii + "\xFF")) << offset;
    EXPECT_FALSE(IsValidUtf8(ascii + "\xED\xA0\x80" + std::string(9, 'c'))) << offset;
  }
}

}  // namespace
}  // namespace chronoq::base
