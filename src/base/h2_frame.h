// HTTP/2's frame header (RFC 9113 section 4.1) and 32-bit fields, read and written: shared by the
// gRPC API's own HTTP/2 framing (grpc_api/h2_frames.h) and the bench's HTTP/2 gRPC client
// (bench/h2_grpc_client.cc), so both write the same bytes.
#pragma once

#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <string>

namespace chronoq::base::h2 {

inline constexpr size_t kFrameHeaderBytes = 9;

struct FrameHeader {
  uint32_t length = 0;
  uint8_t type = 0;
  uint8_t flags = 0;
  int32_t stream = 0;
};

inline uint32_t ReadU32(const uint8_t* p) {
  return (uint32_t{p[0]} << 24) | (uint32_t{p[1]} << 16) | (uint32_t{p[2]} << 8) | uint32_t{p[3]};
}

// The header of the frame at `p` (kFrameHeaderBytes bytes).
inline FrameHeader ReadFrameHeader(const uint8_t* p) {
  return {(uint32_t{p[0]} << 16) | (uint32_t{p[1]} << 8) | uint32_t{p[2]}, p[3], p[4],
          static_cast<int32_t>(ReadU32(p + 5) & 0x7fffffffu)};
}

// Writes a frame header (kFrameHeaderBytes bytes) at `p`.
inline void WriteFrameHeader(uint8_t* p, size_t length, uint8_t type, uint8_t flags,
                             int32_t stream) {
  p[0] = static_cast<uint8_t>(length >> 16);
  p[1] = static_cast<uint8_t>(length >> 8);
  p[2] = static_cast<uint8_t>(length);
  p[3] = type;
  p[4] = flags;
  const auto s = static_cast<uint32_t>(stream);
  p[5] = static_cast<uint8_t>(s >> 24);
  p[6] = static_cast<uint8_t>(s >> 16);
  p[7] = static_cast<uint8_t>(s >> 8);
  p[8] = static_cast<uint8_t>(s);
}

// Appends a frame header to `out`.
inline void AppendFrameHeader(std::string* out, size_t length, uint8_t type, uint8_t flags,
                              int32_t stream) {
  const size_t at = out->size();
  out->resize(at + kFrameHeaderBytes);
  WriteFrameHeader(reinterpret_cast<uint8_t*>(out->data() + at), length, type, flags, stream);
}

// Appends a frame whose payload is `n` 32-bit values (RST_STREAM, WINDOW_UPDATE, GOAWAY).
inline void AppendU32Frame(std::string* out, uint8_t type, int32_t stream,
                           std::initializer_list<uint32_t> values) {
  AppendFrameHeader(out, 4 * values.size(), type, 0, stream);
  for (uint32_t v : values) {
    const char b[4] = {static_cast<char>(v >> 24), static_cast<char>(v >> 16),
                       static_cast<char>(v >> 8), static_cast<char>(v)};
    out->append(b, 4);
  }
}

}  // namespace chronoq::base::h2
