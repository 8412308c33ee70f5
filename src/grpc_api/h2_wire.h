// The gRPC protocol's pieces of HTTP/2 that the nghttp2 engine's parts share (h2_server.cc,
// h2_routes.cc, h2_consume.cc): the length-prefixed message frame, grpc-timeout, and a call's
// status (Trailers-Only, or trailers after DATA). Names nghttp2 and protobuf types only as
// declarations.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

struct nghttp2_session;
namespace google::protobuf {
class MessageLite;
}  // namespace google::protobuf

namespace chronoq::grpc_api {

// A stream's response DATA, produced as the client's windows let it through (nghttp2's data
// provider, or the own framing's equivalent). Runs on the connection's thread.
class H2Producer {
 public:
  static constexpr uint32_t kEof = 0x01;  // the DATA ends with these bytes
  static constexpr uint32_t kNoEndStream =
      0x02;                                   // with kEof: trailers follow (H2Out::SubmitStatus)
  static constexpr ssize_t kDeferred = -508;  // nothing to write now: H2Out::ResumeData later
  // Writes up to `length` bytes to `buf`: their count, or kDeferred.
  virtual ssize_t Produce(uint8_t* buf, size_t length, uint32_t* flags) = 0;

 protected:
  ~H2Producer() = default;
};

// What a streaming call's writer (h2_consume.h, h2_stream.h) asks of its connection's HTTP/2
// session: nghttp2's (H2Session) or the engine's own framing (H2OwnSession). Connection's
// thread only.
class H2Out {
 public:
  // The response's HEADERS (:status 200, application/grpc) of stream `id`, its DATA from
  // `producer` (which outlives the stream's end).
  virtual void SubmitResponse(int32_t id, H2Producer* producer) = 0;
  // Ends stream `id` with a gRPC status: `trailers` after the DATA (from a producer's kEof with
  // kNoEndStream, or after it), else Trailers-Only. Non-zero: not submitted.
  virtual int SubmitStatus(int32_t id, int code, std::string_view message, bool trailers) = 0;
  // The producer of stream `id` has something again (after kDeferred).
  virtual void ResumeData(int32_t id) = 0;
  // `n` bytes of stream `id`'s DATA are handled: its window and the connection's given back.
  virtual void ConsumeStream(int32_t id, size_t n) = 0;
  // The same for a stream that is gone: the connection's window only.
  virtual void ConsumeConnection(size_t n) = 0;

 protected:
  ~H2Out() = default;
};

// gRPC status codes the engine answers itself.
inline constexpr int kGrpcInvalidArgument = 3;
inline constexpr int kGrpcDeadlineExceeded = 4;
inline constexpr int kGrpcResourceExhausted = 8;
inline constexpr int kGrpcUnimplemented = 12;
inline constexpr int kGrpcInternal = 13;

// The 5-byte prefix of a gRPC message: 0 (uncompressed) and the length, big-endian.
inline constexpr size_t kGrpcPrefixBytes = 5;

// The prefix of a gRPC message at `p` (kGrpcPrefixBytes bytes): whether it is compressed, and
// the message's length.
struct GrpcPrefix {
  bool compressed = false;
  size_t length = 0;
};
inline GrpcPrefix ReadGrpcPrefix(const char* p) {
  const auto* b = reinterpret_cast<const uint8_t*>(p);
  return {b[0] != 0,
          (size_t{b[1]} << 24) | (size_t{b[2]} << 16) | (size_t{b[3]} << 8) | size_t{b[4]}};
}

// A stream's request bytes split into gRPC messages as they arrive (a message may span DATA
// frames, a frame hold several); a compressed message, or one over `max_bytes`, is refused from
// its prefix, before it is buffered.
class GrpcDeframer {
 public:
  enum class Next { kMessage, kNeedMore, kCompressed, kTooLarge };
  explicit GrpcDeframer(int64_t max_bytes) : max_bytes_(max_bytes) {}
  void Append(const uint8_t* data, size_t len) {
    if (pos_ > 0) in_.erase(0, std::exchange(pos_, 0));
    in_.append(reinterpret_cast<const char*>(data), len);
  }
  // The next complete message (`*message` valid until the next Append or Release), or why none.
  Next Take(std::string_view* message) {
    if (in_.size() - pos_ < kGrpcPrefixBytes) return Next::kNeedMore;
    const GrpcPrefix p = ReadGrpcPrefix(in_.data() + pos_);
    if (p.compressed) return Next::kCompressed;
    if (static_cast<int64_t>(p.length) > max_bytes_) return Next::kTooLarge;
    if (in_.size() - pos_ - kGrpcPrefixBytes < p.length) return Next::kNeedMore;
    *message = std::string_view(in_).substr(pos_ + kGrpcPrefixBytes, p.length);
    pos_ += kGrpcPrefixBytes + p.length;
    return Next::kMessage;
  }
  // Drops what is buffered (a refused stream).
  void Release() {
    std::string().swap(in_);
    pos_ = 0;
  }

 private:
  const int64_t max_bytes_;
  std::string in_;
  size_t pos_ = 0;  // in_'s bytes before it are taken
};

// A request's header block, field by field, checked as the engine needs it: nghttp2's HTTP
// messaging checks are off (nghttp2_option_set_no_http_messaging, h2_session.cc; they cost about
// 1.3k instructions per call net, docs/benchmarks.md), so the rules the engine relies on are kept
// here. Malformed (RFC 9113 section 8.1.1: the stream is reset with PROTOCOL_ERROR): a
// pseudo-header other than :method, :scheme, :path and :authority, one twice or after a regular
// field, :method, :scheme or :path missing, :path empty, a connection-specific field
// (connection, keep-alive, proxy-connection, transfer-encoding, upgrade), te other than
// "trailers". Then gRPC's rules (answered as grpc-go does): a content-type other than
// application/grpc or application/grpc+proto (with or without parameters): HTTP 415 and
// INVALID_ARGUMENT; a :method other than POST: HTTP 405 and INTERNAL. Also malformed, as in
// nghttp2's checks: a field name with a character outside lowercase tchar (RFC 9110 section 5.6.2;
// an uppercase letter in particular, RFC 9113 section 8.2.1: only the names the engine does not
// know are scanned, a known one is compared whole), a content-length that is not digits or comes
// twice, and the DATA of a request that goes past its content-length or ends short of it
// (RFC 9113 section 8.1.1; LengthKept). Not checked, as nothing here relies on them: the
// characters of values (a known field's value is compared or parsed, an unknown one ignored).
class GrpcRequestCheck {
 public:
  enum class Verdict { kOk, kMalformed, kNotGrpc, kNotPost };
  // The fields the engine keeps of a request (the others are only checked).
  enum class Use { kNone, kPath, kAuthorization, kGrpcTimeout };
  // The next field of the request's header block (HPACK-decoded, in order), and whether the
  // engine keeps it.
  Use Field(std::string_view name, std::string_view value);
  // The block is complete: what to do with the request; `*message` the sentence of a refusal.
  Verdict Finish(std::string* message) const;
  // `len` bytes of the request's DATA arrived.
  void Data(size_t len) { received_ += static_cast<int64_t>(len); }
  // Whether the DATA so far agrees with the request's content-length, if it has one: not past
  // it, and (`ended`: the request's END_STREAM arrived) all of it.
  bool LengthKept(bool ended) const {
    return content_length_ < 0 ||
           (ended ? received_ == content_length_ : received_ <= content_length_);
  }

 private:
  int64_t content_length_ = -1;  // -1: none given
  int64_t received_ = 0;         // the DATA's bytes so far
  uint8_t pseudo_ = 0;           // the pseudo-headers seen (one bit each)
  bool regular_ = false;         // a regular field seen: a pseudo-header after it is malformed
  bool malformed_ = false;
  bool post_ = false;
  bool content_type_ = false;
  bool grpc_ = false;        // content-type application/grpc[+proto][;...]
  std::string bad_method_;   // :method when not POST (for the sentence)
  std::string bad_content_;  // content-type when not gRPC's (for the sentence)
};

// A field GrpcRequestCheck::Field said the engine keeps (`use`), into the call's path,
// authorization or deadline (grpc-timeout, from now).
void KeepRequestField(GrpcRequestCheck::Use use, std::string_view value, std::string* path,
                      std::optional<std::string>* authorization,
                      std::chrono::steady_clock::time_point* deadline);

// A call's deadline (steady clock; max: none) on the system clock (max: none), as Consume takes it.
inline std::chrono::system_clock::time_point ToSystemDeadline(
    std::chrono::steady_clock::time_point deadline) {
  if (deadline == std::chrono::steady_clock::time_point::max()) {
    return std::chrono::system_clock::time_point::max();
  }
  return std::chrono::system_clock::now() +
         std::chrono::duration_cast<std::chrono::system_clock::duration>(
             deadline - std::chrono::steady_clock::now());
}

// gRPC's grpc-message: bytes outside printable ASCII, and '%', percent-encoded.
std::string PercentEncode(std::string_view s);

// RESOURCE_EXHAUSTED's sentence for a request message over `max_bytes`.
std::string RequestTooLarge(int64_t max_bytes);

// The length-prefixed gRPC frame of `m`.
std::string GrpcFrame(const google::protobuf::MessageLite& m);
// Writes the length-prefixed gRPC frame of `m` to `out` (kGrpcPrefixBytes + `size` bytes), `size`
// being m.ByteSizeLong() (called before: its sizes are cached).
void WriteGrpcFrame(const google::protobuf::MessageLite& m, size_t size, uint8_t* out);
// `message` (serialized) with gRPC's 5-byte prefix.
std::string GrpcFrame(std::string_view message);

// grpc-timeout (1 to 8 digits and a unit: H, M, S, m, u, n); nullopt when it is not one.
std::optional<std::chrono::nanoseconds> ParseGrpcTimeout(std::string_view v);

// Ends stream `id` with gRPC status `code` and its sentence (grpc-message, percent-encoded):
// `trailers`: as trailers after the response's HEADERS and DATA (nghttp2_submit_trailer, from a
// data provider or after it); else Trailers-Only (one HEADERS frame with :status 200, the
// content-type and the status). Returns nghttp2's answer (0: submitted).
int SubmitGrpcStatus(nghttp2_session* session, int32_t id, int code, std::string_view message,
                     bool trailers);

// Ends stream `id` with HTTP status `http_status` (a request that is not gRPC's: 405, 415),
// gRPC status `code` and its sentence, in one HEADERS frame.
int SubmitHttpRefusal(nghttp2_session* session, int32_t id, int http_status, int code,
                      std::string_view message);

// Submits the response's HEADERS of stream `id` (:status 200, application/grpc) with `provider`
// as its DATA (an nghttp2_data_provider*).
int SubmitGrpcHeaders(nghttp2_session* session, int32_t id, const void* provider);

}  // namespace chronoq::grpc_api
