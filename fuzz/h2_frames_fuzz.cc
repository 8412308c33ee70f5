// Fuzz target: the frames of the gRPC engine's own HTTP/2 framing (src/grpc_api/h2_frames.h) as a
// client's bytes would bring them: frame headers read one after the other (any type, length,
// flags, stream), each payload unpadded as the session does (DATA and HEADERS, PADDED and
// PRIORITY), header blocks assembled from HEADERS and its CONTINUATIONs and HPACK-decoded by the
// connection's decoder. Invariants: a frame header written back reads the same (the reserved bit
// dropped); an unpadded payload is the padded frame's length less its pad length byte, priority
// and padding, inside the frame, and Unpad refuses exactly the frames whose padding does not fit;
// the decoder (with its kept fields for a repeated indexed block) says the same as nghttp2's
// inflater run on every block (the reference: the same success or failure, the same fields in
// the same order); fields decoded re-encode with the encoder into a block that decodes to them.
#include <nghttp2/nghttp2.h>

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "fuzz/fuzz_check.h"
#include "grpc_api/h2_frames.h"

namespace {

using namespace chronoq::grpc_api::h2;  // NOLINT: a fuzz target's few lines

using Fields = std::vector<std::pair<std::string, std::string>>;

// nghttp2's inflater on a whole block; false on a compression error.
bool ReferenceDecode(nghttp2_hd_inflater* inflater, const uint8_t* p, size_t n, Fields* out) {
  for (;;) {
    nghttp2_nv nv;
    int flags = 0;
    const ssize_t used = nghttp2_hd_inflate_hd2(inflater, &nv, &flags, p, n, 1);
    if (used < 0) return false;
    p += used;
    n -= static_cast<size_t>(used);
    if ((flags & NGHTTP2_HD_INFLATE_EMIT) != 0) {
      out->emplace_back(std::string(reinterpret_cast<const char*>(nv.name), nv.namelen),
                        std::string(reinterpret_cast<const char*>(nv.value), nv.valuelen));
    }
    if ((flags & NGHTTP2_HD_INFLATE_FINAL) != 0) {
      nghttp2_hd_inflate_end_headers(inflater);
      return true;
    }
    if ((flags & NGHTTP2_HD_INFLATE_EMIT) == 0 && n == 0) return true;
    // Each round consumes input or emits a field (the session's decoder loops on it too).
    FUZZ_CHECK(used > 0 || (flags & NGHTTP2_HD_INFLATE_EMIT) != 0);
  }
}

// The connection's decoders: the one under test and the reference, in step.
struct Decoders {
  std::unique_ptr<HpackDecoder> decoder = std::make_unique<HpackDecoder>();
  nghttp2_hd_inflater* reference = nullptr;
  Decoders() { FUZZ_CHECK(nghttp2_hd_inflate_new(&reference) == 0); }
  ~Decoders() { nghttp2_hd_inflate_del(reference); }
  Decoders(const Decoders&) = delete;
  Decoders& operator=(const Decoders&) = delete;
  // A compression error ends the connection: a new one starts with new decoders.
  void Reset() {
    decoder = std::make_unique<HpackDecoder>();
    nghttp2_hd_inflate_del(reference);
    FUZZ_CHECK(nghttp2_hd_inflate_new(&reference) == 0);
  }
};

// Re-encodes `fields` (the encoder takes at most 8 a block) and decodes them with a fresh decoder.
void CheckReencodes(const Fields& fields) {
  HpackEncoder encoder;
  HpackDecoder decoder;
  for (size_t at = 0; at < fields.size(); at += 8) {
    std::vector<Field> batch;
    for (size_t i = at; i < fields.size() && i < at + 8; ++i) {
      batch.push_back({fields[i].first, fields[i].second, (i & 1) == 0});
    }
    std::string block;
    FUZZ_CHECK(encoder.Encode(batch.data(), batch.size(), &block));
    Fields back;
    FUZZ_CHECK(
        decoder.Decode(reinterpret_cast<const uint8_t*>(block.data()), block.size(),
                       [&](std::string_view n, std::string_view v) { back.emplace_back(n, v); }));
    FUZZ_CHECK(back.size() == batch.size());
    for (size_t i = 0; i < back.size(); ++i) {
      FUZZ_CHECK(back[i].first == batch[i].name && back[i].second == batch[i].value);
    }
  }
}

void CheckBlock(Decoders& d, const std::string& block) {
  const auto* p = reinterpret_cast<const uint8_t*>(block.data());
  Fields got;
  const bool ok = d.decoder->Decode(
      p, block.size(), [&](std::string_view n, std::string_view v) { got.emplace_back(n, v); });
  Fields want;
  const bool want_ok = ReferenceDecode(d.reference, p, block.size(), &want);
  FUZZ_CHECK(ok == want_ok);
  if (!ok) return d.Reset();
  FUZZ_CHECK(got == want);
  CheckReencodes(got);
}

void CheckHeader(const uint8_t* p, const FrameHeader& h) {
  uint8_t back[kFrameHeaderBytes];
  WriteFrameHeader(back, h.length, h.type, h.flags, h.stream);
  uint8_t in[kFrameHeaderBytes];
  std::memcpy(in, p, kFrameHeaderBytes);
  in[5] &= 0x7f;  // the reserved bit
  FUZZ_CHECK(std::memcmp(back, in, kFrameHeaderBytes) == 0);
  FUZZ_CHECK(h.length <= 0xffffff && h.stream >= 0);
  std::string appended;
  AppendFrameHeader(&appended, h.length, h.type, h.flags, h.stream);
  FUZZ_CHECK(appended.size() == kFrameHeaderBytes &&
             std::memcmp(appended.data(), back, kFrameHeaderBytes) == 0);
}

// Unpad's result, against the frame's own arithmetic.
bool CheckUnpad(const FrameHeader& h, const uint8_t* payload, const uint8_t** out, size_t* n) {
  const size_t priority = h.type == kHeaders && (h.flags & kFlagPriority) != 0 ? 5 : 0;
  const bool padded = (h.flags & kFlagPadded) != 0;
  const uint8_t* p = payload;
  size_t left = 0;
  const bool ok = Unpad(h, p, left, priority);
  const size_t pad = padded && h.length > 0 ? payload[0] : 0;
  const size_t overhead = (padded ? 1 : 0) + priority + pad;
  FUZZ_CHECK(ok == (overhead <= h.length && (!padded || h.length >= 1)));
  if (!ok) return false;
  FUZZ_CHECK(p == payload + (padded ? 1 : 0) + priority);
  FUZZ_CHECK(left == h.length - overhead);
  FUZZ_CHECK(p + left + pad == payload + h.length);
  *out = p;
  *n = left;
  return true;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  Decoders decoders;
  std::string block;  // HEADERS and its CONTINUATIONs so far
  int32_t block_stream = 0;
  bool in_block = false;
  size_t off = 0;
  while (size - off >= kFrameHeaderBytes) {
    const FrameHeader h = ReadFrameHeader(data + off);
    CheckHeader(data + off, h);
    // Lengths past the input are cut to what is there (the frame's length as read is checked
    // above; what follows is the payload the input has).
    FrameHeader f = h;
    f.length = static_cast<uint32_t>(std::min<size_t>(h.length, size - off - kFrameHeaderBytes));
    const uint8_t* payload = data + off + kFrameHeaderBytes;
    off += kFrameHeaderBytes + f.length;
    const uint8_t* p = nullptr;
    size_t n = 0;
    if (in_block && (f.type != kContinuation || f.stream != block_stream)) {
      in_block = false;  // interrupted: the session's connection error; the next block is new
      block.clear();
    }
    switch (f.type) {
      case kData:
        CheckUnpad(f, payload, &p, &n);
        break;
      case kHeaders:
        if (!CheckUnpad(f, payload, &p, &n)) break;
        block.assign(reinterpret_cast<const char*>(p), n);
        block_stream = f.stream;
        in_block = (f.flags & kFlagEndHeaders) == 0;
        if (!in_block) CheckBlock(decoders, block);
        break;
      case kContinuation:
        if (!in_block) break;
        block.append(reinterpret_cast<const char*>(payload), f.length);
        if ((f.flags & kFlagEndHeaders) != 0) {
          in_block = false;
          CheckBlock(decoders, block);
        }
        break;
      default:
        break;
    }
  }
  return 0;
}
