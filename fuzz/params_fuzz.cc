// Fuzz target: request parameter decoding (http/params.h, json_body.cc) and the checks of
// core/validation.h, for every endpoint's parameters. The input picks an endpoint and a
// Content-Type and gives a query string and a body. Invariants: no crash; errors are
// kInvalidArgument with a message; integers agree with std::from_chars; values decoded from any
// source survive a percent-encoded form round trip; the validators agree with a reference UTF-8
// check written here independently.
#include <fuzzer/FuzzedDataProvider.h>

#include <charconv>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "base/utf8.h"
#include "core/limits.h"
#include "core/validation.h"
#include "fuzz/fuzz_check.h"
#include "http/params.h"

namespace {

using chronoq::Errc;
using chronoq::Status;
using chronoq::http::ParamReader;
using chronoq::http::Params;

enum class Type { kString, kLong, kInt, kBool };
struct Param {
  const char* name;
  Type type;
  bool required;
};
struct Endpoint {
  std::vector<Param> params;
};

// The parameters each handler reads (handlers_*.cc), in the order it reads them.
const std::vector<Endpoint>& Endpoints() {
  static const std::vector<Endpoint> kEndpoints = {
      // sendMsg
      {{{"topic", Type::kString, true},
        {"msgId", Type::kString, false},
        {"msg", Type::kString, true},
        {"delayMillis", Type::kLong, true},
        {"ttlMillis", Type::kLong, false},
        {"maxRetry", Type::kInt, false}}},
      // pullMsg
      {{{"topic", Type::kString, true},
        {"ackTimeoutMillis", Type::kLong, false},
        {"batch", Type::kInt, false}}},
      // longPollingMsg
      {{{"topic", Type::kString, true},
        {"ackTimeoutMillis", Type::kLong, false},
        {"batch", Type::kInt, false},
        {"longPollingTimeoutMillis", Type::kLong, false}}},
      // ackMsg
      {{{"topic", Type::kString, true},
        {"msgId", Type::kString, true},
        {"ack", Type::kBool, true}}},
      // deleteMsg
      {{{"topic", Type::kString, true},
        {"msgId", Type::kString, true},
        {"release", Type::kBool, false}}},
      // getMsg
      {{{"topic", Type::kString, true}, {"msgId", Type::kString, true}}},
      // getTopicInfo
      {{{"topic", Type::kString, true}}},
      // advanceClock (test mode)
      {{{"millis", Type::kLong, true}}},
  };
  return kEndpoints;
}

// Strict UTF-8 (RFC 3629): no overlong forms, no surrogates, nothing above U+10FFFF.
bool ReferenceUtf8(std::string_view s) {
  size_t i = 0;
  while (i < s.size()) {
    auto c = static_cast<unsigned char>(s[i]);
    int n = 0;
    uint32_t cp = 0;
    if (c < 0x80) {
      ++i;
      continue;
    } else if ((c & 0xE0) == 0xC0) {
      n = 1;
      cp = c & 0x1F;
    } else if ((c & 0xF0) == 0xE0) {
      n = 2;
      cp = c & 0x0F;
    } else if ((c & 0xF8) == 0xF0) {
      n = 3;
      cp = c & 0x07;
    } else {
      return false;
    }
    if (i + n >= s.size()) return false;
    for (int k = 1; k <= n; ++k) {
      auto b = static_cast<unsigned char>(s[i + k]);
      if ((b & 0xC0) != 0x80) return false;
      cp = (cp << 6) | (b & 0x3F);
    }
    static constexpr uint32_t kMin[] = {0, 0x80, 0x800, 0x10000};
    if (cp < kMin[n] || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return false;
    i += n + 1;
  }
  return true;
}

std::optional<int64_t> ReferenceInt(std::string_view s) {
  if (!s.empty() && s[0] == '+') {
    s.remove_prefix(1);
    if (!s.empty() && s[0] == '-') return std::nullopt;
  }
  if (s.empty()) return std::nullopt;
  int64_t v = 0;
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || end != s.data() + s.size()) return std::nullopt;
  return v;
}

void CheckRequestError(const Status& s) {
  FUZZ_CHECK(s.code() == Errc::kInvalidArgument);
  FUZZ_CHECK(!s.message().empty());
}

std::string PercentEncode(std::string_view s) {
  static constexpr char kHex[] = "0123456789ABCDEF";
  std::string out;
  for (unsigned char c : s) {
    if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' ||
        c == '_' || c == '.') {
      out.push_back(static_cast<char>(c));
    } else {
      out.push_back('%');
      out.push_back(kHex[c >> 4]);
      out.push_back(kHex[c & 15]);
    }
  }
  return out;
}

void CheckName(const Status& s, std::string_view v, size_t max) {
  bool expect = !v.empty() && v.size() <= max && ReferenceUtf8(v) &&
                v.find_first_of(std::string_view("\x00\x01\x02\x03\x04\x05\x06\x07\x08\x09\x0a"
                                                 "\x0b\x0c\x0d\x0e\x0f\x10\x11\x12\x13\x14\x15"
                                                 "\x16\x17\x18\x19\x1a\x1b\x1c\x1d\x1e\x1f\x7f",
                                                 33)) == std::string_view::npos;
  FUZZ_CHECK(s.ok() == expect);
  if (!s.ok()) CheckRequestError(s);
}

// Reads the endpoint's parameters the way its handler does and checks what comes out.
void ReadEndpoint(const Endpoint& e, Params& params) {
  // The raw values first (ParamReader takes strings out).
  std::vector<std::optional<std::string>> raw;
  std::vector<bool> non_scalar;
  for (const Param& p : e.params) {
    const std::string_view* v = params.Find(p.name);
    raw.push_back(v ? std::optional<std::string>(*v) : std::nullopt);
    non_scalar.push_back(params.NonScalar(p.name));
  }
  // Round trip of the scalar values through a form body.
  std::string form;
  for (size_t i = 0; i < e.params.size(); ++i) {
    if (!raw[i] || non_scalar[i]) continue;
    if (!form.empty()) form += '&';
    form += PercentEncode(e.params[i].name) + "=" + PercentEncode(*raw[i]);
  }
  auto again = Params::Parse("", true, "application/x-www-form-urlencoded", form);
  FUZZ_CHECK(again.has_value());
  for (size_t i = 0; i < e.params.size(); ++i) {
    if (!raw[i] || non_scalar[i]) continue;
    const std::string_view* v = again->Find(e.params[i].name);
    FUZZ_CHECK(v != nullptr && *v == *raw[i]);
  }

  ParamReader r(params);
  bool ok = true;  // every parameter so far read without error
  for (size_t i = 0; i < e.params.size(); ++i) {
    const Param& p = e.params[i];
    const std::optional<std::string>& v = raw[i];
    switch (p.type) {
      case Type::kString: {
        std::optional<std::string> s = r.String(p.name, p.required);
        if (ok && !non_scalar[i]) FUZZ_CHECK(s == v);
        if (s && std::string_view(p.name) == "topic") {
          CheckName(chronoq::core::ValidateTopic(*s, chronoq::core::Limits{}), *s, 255);
        }
        if (s && std::string_view(p.name) == "msgId") {
          CheckName(chronoq::core::ValidateMsgId(*s, chronoq::core::Limits{}), *s, 255);
        }
        if (s && std::string_view(p.name) == "msg") {
          Status st = chronoq::core::ValidatePayload(*s, chronoq::core::Limits{});
          FUZZ_CHECK(st.ok() == (!s->empty() && ReferenceUtf8(*s)));
        }
        break;
      }
      case Type::kLong:
      case Type::kInt: {
        std::optional<int64_t> n;
        if (p.type == Type::kLong) {
          n = r.Long(p.name, p.required);
        } else if (std::optional<int32_t> i32 = r.Int(p.name, p.required)) {
          n = *i32;
        }
        if (ok && v && !v->empty() && !non_scalar[i]) {
          std::optional<int64_t> want = ReferenceInt(*v);
          if (want && p.type == Type::kInt && (*want < INT32_MIN || *want > INT32_MAX)) {
            want.reset();
          }
          FUZZ_CHECK(n == want);
        }
        break;
      }
      case Type::kBool:
        r.Bool(p.name, p.required);
        break;
    }
    if (!r.ok()) CheckRequestError(r.status());
    ok = ok && r.ok();
  }
  // A required parameter absent (or empty, for numbers) is an error.
  for (size_t i = 0; i < e.params.size(); ++i) {
    if (!e.params[i].required) continue;
    bool missing = !raw[i] || (e.params[i].type != Type::kString && raw[i]->empty());
    if (missing) FUZZ_CHECK(!r.ok());
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  FuzzedDataProvider in(data, size);
  const auto& endpoints = Endpoints();
  const Endpoint& e = endpoints[in.ConsumeIntegralInRange<size_t>(0, endpoints.size() - 1)];
  static const char* const kTypes[] = {
      "application/x-www-form-urlencoded", "application/json", "application/problem+json",
      "Application/JSON; charset=utf-8",   "text/plain",       ""};
  int choice = in.ConsumeIntegralInRange<int>(0, 7);
  bool has_content_type = choice != 7;
  std::string content_type = choice < 6 ? kTypes[choice] : in.ConsumeRandomLengthString(64);
  std::string query = in.ConsumeRandomLengthString(1024);
  std::string body = in.ConsumeRemainingBytesAsString();

  auto params = Params::Parse(query, has_content_type, content_type, body);
  if (!params.has_value()) {
    CheckRequestError(params.error());
    return 0;
  }
  ReadEndpoint(e, *params);
  return 0;
}
