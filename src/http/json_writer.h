// JsonWriter: builds compact JSON text into a string. Strings are escaped per RFC 8259; bytes
// that are not valid UTF-8 are replaced by U+FFFD so the output is always valid JSON.
// Not thread-safe; one per response.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace chronoq::http {

class JsonWriter {
 public:
  // Most answers are a few hundred bytes: start with room for them instead of growing.
  JsonWriter() { out_.reserve(512); }

  JsonWriter& BeginObject();
  JsonWriter& EndObject();
  JsonWriter& BeginArray();
  JsonWriter& EndArray();
  JsonWriter& Key(std::string_view k);
  JsonWriter& String(std::string_view s);
  JsonWriter& Int(int64_t v);
  JsonWriter& Double(double v);
  JsonWriter& Bool(bool v);
  JsonWriter& Null();
  // Key plus value, for object members.
  JsonWriter& Str(std::string_view k, std::string_view v) { return Key(k).String(v); }
  JsonWriter& Num(std::string_view k, int64_t v) { return Key(k).Int(v); }
  // The same for names spelled in the code (string literals, which never need escaping): written
  // without looking for characters to escape (an answer of 100 messages has about 1,000 keys).
  template <size_t N>
  JsonWriter& Key(const char (&k)[N]) {
    return LiteralKey(std::string_view(k, N - 1));
  }
  template <size_t N>
  JsonWriter& Str(const char (&k)[N], std::string_view v) {
    return Key(k).String(v);
  }
  template <size_t N>
  JsonWriter& Num(const char (&k)[N], int64_t v) {
    return Key(k).Int(v);
  }

  // The text of the object just begun (BeginObject, no member yet), for the caller to append
  // `"key":value` members to, separated by commas, none before the first; calls that follow add
  // their members after them. For fixed members written often (a message's nine), without a
  // call per key and value. REQUIRES: keys need no escaping; values are valid JSON.
  std::string& MembersText() {
    SetFirst(false);
    return out_;
  }
  // Appends `key_text` (such as `,"retry":`) and v.
  static void AppendInt(std::string& out, std::string_view key_text, int64_t v);

  std::string Take() { return std::move(out_); }
  void Reserve(size_t n) { out_.reserve(n); }

 private:
  void BeforeValue();
  // REQUIRES: k needs no escaping.
  JsonWriter& LiteralKey(std::string_view k);
  // Whether the innermost open container has no element yet (REQUIRES: one is open).
  bool First() const;
  void SetFirst(bool first);
  void Open();   // a container begins: it has no element yet
  void Close();  // the innermost one ends
  std::string out_;
  // One bit per open container, true until its first element is written: the 64 outermost in
  // `first_bits_` (bit d for depth d; no allocation for any answer chronoq writes), any deeper
  // ones in `deeper_`.
  uint64_t first_bits_ = 0;
  std::vector<bool> deeper_;
  size_t depth_ = 0;
  bool after_key_ = false;
};

// Appends `s` as a quoted, escaped JSON string.
void AppendJsonString(std::string& out, std::string_view s);

}  // namespace chronoq::http
