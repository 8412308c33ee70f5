// The gRPC protocol's pieces of HTTP/2 (h2_wire.h).
#include "grpc_api/h2_wire.h"

#include <fmt/format.h>
#include <google/protobuf/message_lite.h>
#include <nghttp2/nghttp2.h>

#include <algorithm>
#include <array>
#include <iterator>

namespace chronoq::grpc_api {
namespace {

nghttp2_nv Nv(std::string_view name, std::string_view value, uint8_t flags) {
  return nghttp2_nv{reinterpret_cast<uint8_t*>(const_cast<char*>(name.data())),
                    reinterpret_cast<uint8_t*>(const_cast<char*>(value.data())), name.size(),
                    value.size(), flags};
}
// A name and value that outlive the submission (string literals).
nghttp2_nv StaticNv(std::string_view name, std::string_view value) {
  return Nv(name, value, NGHTTP2_NV_FLAG_NO_COPY_NAME | NGHTTP2_NV_FLAG_NO_COPY_VALUE);
}

}  // namespace

std::string PercentEncode(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (unsigned char c : s) {
    if (c < 0x20 || c > 0x7e || c == '%') {
      out += fmt::format("%{:02X}", c);
    } else {
      out += static_cast<char>(c);
    }
  }
  return out;
}

void KeepRequestField(GrpcRequestCheck::Use use, std::string_view value, std::string* path,
                      std::optional<std::string>* authorization,
                      std::chrono::steady_clock::time_point* deadline) {
  switch (use) {
    case GrpcRequestCheck::Use::kPath:
      *path = value;
      break;
    case GrpcRequestCheck::Use::kAuthorization:
      *authorization = std::string(value);
      break;
    case GrpcRequestCheck::Use::kGrpcTimeout:
      if (auto timeout = ParseGrpcTimeout(value)) {
        *deadline = std::chrono::steady_clock::now() +
                    std::min<std::chrono::nanoseconds>(*timeout, std::chrono::hours(24 * 365));
      }
      break;
    case GrpcRequestCheck::Use::kNone:
      break;
  }
}

std::string RequestTooLarge(int64_t max_bytes) {
  return fmt::format("request larger than {} bytes", max_bytes);
}

void WriteGrpcFrame(const google::protobuf::MessageLite& m, size_t size, uint8_t* out) {
  out[0] = 0;
  out[1] = static_cast<uint8_t>((size >> 24) & 0xff);
  out[2] = static_cast<uint8_t>((size >> 16) & 0xff);
  out[3] = static_cast<uint8_t>((size >> 8) & 0xff);
  out[4] = static_cast<uint8_t>(size & 0xff);
  m.SerializeWithCachedSizesToArray(out + kGrpcPrefixBytes);
}

std::string GrpcFrame(const google::protobuf::MessageLite& m) {
  const size_t n = m.ByteSizeLong();
  std::string out(kGrpcPrefixBytes + n, '\0');
  out[1] = static_cast<char>((n >> 24) & 0xff);
  out[2] = static_cast<char>((n >> 16) & 0xff);
  out[3] = static_cast<char>((n >> 8) & 0xff);
  out[4] = static_cast<char>(n & 0xff);
  m.SerializeWithCachedSizesToArray(reinterpret_cast<uint8_t*>(out.data() + kGrpcPrefixBytes));
  return out;
}

std::string GrpcFrame(std::string_view message) {
  const size_t n = message.size();
  std::string out(kGrpcPrefixBytes, '\0');
  out[1] = static_cast<char>((n >> 24) & 0xff);
  out[2] = static_cast<char>((n >> 16) & 0xff);
  out[3] = static_cast<char>((n >> 8) & 0xff);
  out[4] = static_cast<char>(n & 0xff);
  out.append(message);
  return out;
}

std::optional<std::chrono::nanoseconds> ParseGrpcTimeout(std::string_view v) {
  if (v.size() < 2 || v.size() > 9) return std::nullopt;
  int64_t n = 0;
  for (char c : v.substr(0, v.size() - 1)) {
    if (c < '0' || c > '9') return std::nullopt;
    n = n * 10 + (c - '0');
  }
  switch (v.back()) {
    case 'H':
      return std::chrono::hours(n);
    case 'M':
      return std::chrono::minutes(n);
    case 'S':
      return std::chrono::seconds(n);
    case 'm':
      return std::chrono::milliseconds(n);
    case 'u':
      return std::chrono::microseconds(n);
    case 'n':
      return std::chrono::nanoseconds(n);
    default:
      return std::nullopt;
  }
}

namespace {

// Trailers (`http_status` empty), or a response of one HEADERS frame with `http_status`.
int SubmitStatus(nghttp2_session* session, int32_t id, std::string_view http_status, int code,
                 std::string_view message) {
  const bool trailers = http_status.empty();
  if (code == 0 && message.empty()) {  // OK: nothing to format
    const nghttp2_nv ok = StaticNv("grpc-status", "0");
    if (trailers) return nghttp2_submit_trailer(session, id, &ok, 1);
    const nghttp2_nv nva[] = {Nv(":status", http_status, NGHTTP2_NV_FLAG_NO_COPY_NAME),
                              StaticNv("content-type", "application/grpc"), ok};
    return nghttp2_submit_response(session, id, nva, std::size(nva), nullptr);
  }
  const std::string code_text = std::to_string(code);
  const std::string encoded = PercentEncode(message);
  const nghttp2_nv status[] = {Nv("grpc-status", code_text, NGHTTP2_NV_FLAG_NO_COPY_NAME),
                               Nv("grpc-message", encoded, NGHTTP2_NV_FLAG_NO_COPY_NAME)};
  const size_t n = encoded.empty() ? 1 : 2;
  if (trailers) return nghttp2_submit_trailer(session, id, status, n);
  const nghttp2_nv nva[] = {Nv(":status", http_status, NGHTTP2_NV_FLAG_NO_COPY_NAME),
                            StaticNv("content-type", "application/grpc"), status[0], status[1]};
  return nghttp2_submit_response(session, id, nva, 2 + n, nullptr);
}

bool EqualsIgnoreCase(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    const char c = a[i] >= 'A' && a[i] <= 'Z' ? static_cast<char>(a[i] - 'A' + 'a') : a[i];
    if (c != b[i]) return false;
  }
  return true;
}

// application/grpc or application/grpc+proto, each with or without parameters (";...").
bool IsGrpcContentType(std::string_view v) {
  constexpr std::string_view kBase = "application/grpc";
  if (!v.starts_with(kBase)) return false;
  v.remove_prefix(kBase.size());
  if (v.starts_with("+proto")) v.remove_prefix(6);
  return v.empty() || v.front() == ';';
}

constexpr uint8_t kMethod = 1, kScheme = 2, kPath = 4, kAuthority = 8;

// The characters of a field name in HTTP/2: RFC 9110's tchar, letters lowercase only.
constexpr auto kNameChars = [] {
  std::array<bool, 256> ok{};
  for (int c = 'a'; c <= 'z'; ++c) ok[static_cast<size_t>(c)] = true;
  for (int c = '0'; c <= '9'; ++c) ok[static_cast<size_t>(c)] = true;
  for (char c : std::string_view("!#$%&'*+-.^_`|~")) ok[static_cast<unsigned char>(c)] = true;
  return ok;
}();

bool IsFieldName(std::string_view name) {
  for (char c : name) {
    if (!kNameChars[static_cast<unsigned char>(c)]) return false;
  }
  return true;
}

// content-length: 1 to 18 digits (-1: not one).
int64_t ParseContentLength(std::string_view v) {
  if (v.empty() || v.size() > 18) return -1;
  int64_t n = 0;
  for (char c : v) {
    if (c < '0' || c > '9') return -1;
    n = n * 10 + (c - '0');
  }
  return n;
}

}  // namespace

GrpcRequestCheck::Use GrpcRequestCheck::Field(std::string_view name, std::string_view value) {
  if (name.empty()) {
    malformed_ = true;
    return Use::kNone;
  }
  if (name.front() == ':') {
    uint8_t bit = 0;
    if (name == ":path") {
      bit = value.empty() ? 0 : kPath;
    } else if (name == ":method") {
      bit = kMethod;
      post_ = value == "POST";
      if (!post_) bad_method_ = value;
    } else if (name == ":scheme") {
      bit = kScheme;
    } else if (name == ":authority") {
      bit = kAuthority;
    }
    malformed_ = malformed_ || regular_ || bit == 0 || (pseudo_ & bit) != 0;
    pseudo_ |= bit;
    return bit == kPath ? Use::kPath : Use::kNone;
  }
  regular_ = true;
  if (name == "content-type") {
    content_type_ = true;
    grpc_ = IsGrpcContentType(value);
    if (!grpc_) bad_content_ = value;
  } else if (name == "grpc-timeout") {
    return Use::kGrpcTimeout;
  } else if (name == "authorization") {
    return Use::kAuthorization;
  } else if (name == "te") {
    malformed_ = malformed_ || !EqualsIgnoreCase(value, "trailers");
  } else if (name == "content-length") {
    const int64_t n = ParseContentLength(value);
    malformed_ = malformed_ || n < 0 || content_length_ >= 0;
    content_length_ = n;
  } else if (name == "connection" || name == "keep-alive" || name == "proxy-connection" ||
             name == "transfer-encoding" || name == "upgrade" || !IsFieldName(name)) {
    malformed_ = true;
  }
  return Use::kNone;
}

GrpcRequestCheck::Verdict GrpcRequestCheck::Finish(std::string* message) const {
  if (malformed_ || (pseudo_ & (kMethod | kScheme | kPath)) != (kMethod | kScheme | kPath)) {
    return Verdict::kMalformed;
  }
  if (!grpc_) {
    *message = !content_type_
                   ? std::string("content-type is missing: a gRPC request's is application/grpc")
                   : fmt::format(
                         "content-type must be application/grpc or application/grpc+proto, not "
                         "\"{}\"",
                         bad_content_);
    return Verdict::kNotGrpc;
  }
  if (!post_) {
    *message = fmt::format(":method must be POST, not \"{}\"", bad_method_);
    return Verdict::kNotPost;
  }
  return Verdict::kOk;
}

int SubmitGrpcStatus(nghttp2_session* session, int32_t id, int code, std::string_view message,
                     bool trailers) {
  return SubmitStatus(session, id, trailers ? std::string_view() : "200", code, message);
}

int SubmitHttpRefusal(nghttp2_session* session, int32_t id, int http_status, int code,
                      std::string_view message) {
  return SubmitStatus(session, id, std::to_string(http_status), code, message);
}

int SubmitGrpcHeaders(nghttp2_session* session, int32_t id, const void* provider) {
  const nghttp2_nv nva[] = {StaticNv(":status", "200"),
                            StaticNv("content-type", "application/grpc")};
  return nghttp2_submit_response(session, id, nva, std::size(nva),
                                 static_cast<const nghttp2_data_provider*>(provider));
}

}  // namespace chronoq::grpc_api
