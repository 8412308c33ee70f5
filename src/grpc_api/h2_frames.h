// Internal to src/grpc_api: HTTP/2's frames (RFC 9113 section 4 and 6) for the engine that frames
// HTTP/2 itself (grpc-engine=h2, h2_own_session.h): the frame header read and written
// (base/h2_frame.h, shared with the bench's HTTP/2 client), the constants it uses, and HPACK
// (RFC 7541) through nghttp2's standalone coder (nghttp2_hd_*; its types stay in h2_frames.cc).
//
// Thread-safety: none (one connection's thread).
#pragma once

#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "base/h2_frame.h"

namespace chronoq::grpc_api::h2 {

inline constexpr std::string_view kPreface = "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n";
inline constexpr uint32_t kDefaultMaxFrame = 16384;
inline constexpr int64_t kDefaultWindow = 65535;
inline constexpr int64_t kMaxWindow = 0x7fffffff;

enum FrameType : uint8_t {
  kData = 0,
  kHeaders = 1,
  kPriority = 2,
  kRstStream = 3,
  kSettings = 4,
  kPushPromise = 5,
  kPing = 6,
  kGoaway = 7,
  kWindowUpdate = 8,
  kContinuation = 9,
};

inline constexpr uint8_t kFlagEndStream = 0x1;
inline constexpr uint8_t kFlagAck = 0x1;
inline constexpr uint8_t kFlagEndHeaders = 0x4;
inline constexpr uint8_t kFlagPadded = 0x8;
inline constexpr uint8_t kFlagPriority = 0x20;

enum Settings : uint16_t {
  kHeaderTableSize = 1,
  kEnablePush = 2,
  kMaxConcurrentStreams = 3,
  kInitialWindowSize = 4,
  kMaxFrameSize = 5,
  kMaxHeaderListSize = 6,
};

enum ErrorCode : uint32_t {
  kNoError = 0,
  kProtocolError = 1,
  kInternalError = 2,
  kFlowControlError = 3,
  kStreamClosed = 5,
  kFrameSizeError = 6,
  kRefusedStream = 7,
  kCancel = 8,
  kCompressionError = 9,
  kEnhanceYourCalm = 11,
};

using base::h2::AppendFrameHeader;
using base::h2::AppendU32Frame;
using base::h2::FrameHeader;
using base::h2::kFrameHeaderBytes;
using base::h2::ReadFrameHeader;
using base::h2::ReadU32;
using base::h2::WriteFrameHeader;

// The payload of the frame `h` at `p` without its padding (PADDED: a length byte first, that many
// bytes last) and, for HEADERS with PRIORITY, without `priority_bytes` (5) of priority: `p` and
// `n` are set to what is left. False when the padding does not fit (a malformed frame; `p` and
// `n` then mean nothing).
inline bool Unpad(const FrameHeader& h, const uint8_t*& p, size_t& n, size_t priority_bytes) {
  n = h.length;
  size_t pad = 0;
  if ((h.flags & kFlagPadded) != 0) {
    if (n < 1) return false;
    pad = p[0];
    ++p;
    --n;
  }
  if (priority_bytes > 0) {
    if (n < priority_bytes) return false;
    p += priority_bytes;
    n -= priority_bytes;
  }
  if (pad > n) return false;
  n -= pad;
  return true;
}

// One header field, for the encoder: `index`ed into the dynamic table or never.
struct Field {
  std::string_view name;
  std::string_view value;
  bool index = true;
};

// A connection's HPACK decoder. Decode returns false on a compression error (the connection's
// end: its table is out of step). A block made only of one-byte indexed fields cannot change the
// dynamic table, so when the same bytes come again (a gRPC client's next call on the connection,
// its fields indexed since the first) and no other block came between, its fields are the ones
// kept from the last time: nghttp2's decoder is not run (docs/grpc.md).
class HpackDecoder {
 public:
  HpackDecoder();
  ~HpackDecoder();
  HpackDecoder(const HpackDecoder&) = delete;
  HpackDecoder& operator=(const HpackDecoder&) = delete;

  // Decodes a whole header block, calling `fn(name, value)` per field (views valid during the
  // call).
  template <typename Fn>
  bool Decode(const uint8_t* block, size_t n, Fn&& fn) {
    return DecodeWith(block, n, &fn, [](void* f, std::string_view name, std::string_view value) {
      (*static_cast<Fn*>(f))(name, value);
    });
  }

 private:
  bool DecodeWith(const uint8_t* block, size_t n, void* fn,
                  void (*call)(void*, std::string_view, std::string_view));
  struct Impl;
  std::unique_ptr<Impl> impl_;
  // The last block when it was only indexed fields, and its fields (name, value).
  std::string indexed_block_;
  std::vector<std::pair<std::string, std::string>> indexed_fields_;
};

// A connection's HPACK encoder.
class HpackEncoder {
 public:
  HpackEncoder();
  ~HpackEncoder();
  HpackEncoder(const HpackEncoder&) = delete;
  HpackEncoder& operator=(const HpackEncoder&) = delete;

  // Appends the block of `fields` to `out`; false on an error.
  bool Encode(const Field* fields, size_t n, std::string* out);
  // The peer's SETTINGS_HEADER_TABLE_SIZE.
  bool SetTableSize(uint32_t bytes);
  // The dynamic table's entries (a block that leaves it unchanged can be written again as is).
  size_t Entries() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace chronoq::grpc_api::h2
