// Test support for the gRPC API's HTTP/2 tests (src/grpc_api/h2_limits_test.cc and
// h2_reentry_test.cc): a raw HTTP/2 client written frame by frame (HPACK literals, no Huffman; the
// answers decoded with nghttp2's HPACK inflater), and a fixture that starts the gRPC server on the
// engine its parameter names, in process over the embedded engine on the in-memory store.
#pragma once

#include <grpcpp/grpcpp.h>
#include <gtest/gtest.h>
#include <nghttp2/nghttp2.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "chronoq/v1/delay_queue.grpc.pb.h"
#include "grpc_api/grpc_server.h"
#include "tests/testutil/grpc_world.h"
#include "tests/testutil/server_harness.h"

namespace chronoq::grpc_api::h2test {

using std::chrono::milliseconds;
using std::chrono::seconds;

// HTTP/2 frames (RFC 9113 section 4.1).
constexpr uint8_t kData = 0, kHeaders = 1, kRstStream = 3, kSettings = 4, kPing = 6, kGoaway = 7;
constexpr uint8_t kEndStream = 1, kEndHeaders = 4;
constexpr uint32_t kProtocolError = 0x1, kEnhanceYourCalm = 0xb, kCancel = 0x8;

inline std::string Frame(uint8_t type, uint8_t flags, uint32_t stream, std::string_view payload) {
  std::string f;
  const size_t n = payload.size();
  f += {static_cast<char>(n >> 16),
        static_cast<char>(n >> 8),
        static_cast<char>(n),
        static_cast<char>(type),
        static_cast<char>(flags),
        static_cast<char>((stream >> 24) & 0x7f),
        static_cast<char>(stream >> 16),
        static_cast<char>(stream >> 8),
        static_cast<char>(stream)};
  f += payload;
  return f;
}

inline std::string U32(uint32_t v) {
  return {static_cast<char>(v >> 24), static_cast<char>(v >> 16), static_cast<char>(v >> 8),
          static_cast<char>(v)};
}

// The client preface and an empty SETTINGS.
inline std::string Preface() {
  return std::string("PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n") + Frame(kSettings, 0, 0, "");
}

// A gRPC request's header block for `path` (HPACK: indexed :method POST and :scheme http,
// literals without indexing).
inline std::string RequestHeaders(std::string_view path) {
  auto literal = [](uint8_t name_index, std::string_view value) {
    std::string s;
    if (name_index < 15) {
      s += static_cast<char>(name_index);
    } else {
      s += {'\x0f', static_cast<char>(name_index - 15)};
    }
    s += static_cast<char>(value.size());
    s += value;
    return s;
  };
  std::string block = "\x83\x86";
  block += literal(1, "x");  // :authority
  block += literal(4, path);
  block += literal(31, "application/grpc");  // content-type
  block += std::string("\x00\x02te\x08trailers", 13);
  return block;
}

// The frames of `bytes` (as the server sent them): their types and, for GOAWAY, its error code.
struct Received {
  std::vector<uint8_t> types;
  uint32_t goaway_error = UINT32_MAX;
};
inline Received Parse(const std::string& bytes) {
  Received r;
  size_t at = 0;
  while (bytes.size() - at >= 9) {
    const auto* p = reinterpret_cast<const uint8_t*>(bytes.data() + at);
    const size_t n = (size_t{p[0]} << 16) | (size_t{p[1]} << 8) | p[2];
    if (bytes.size() - at - 9 < n) break;
    r.types.push_back(p[3]);
    if (p[3] == kGoaway && n >= 8) {
      r.goaway_error =
          (uint32_t{p[13]} << 24) | (uint32_t{p[14]} << 16) | (uint32_t{p[15]} << 8) | p[16];
    }
    at += 9 + n;
  }
  return r;
}

inline bool Has(const Received& r, uint8_t type) {
  return std::find(r.types.begin(), r.types.end(), type) != r.types.end();
}

// A header block of literal fields without indexing (new names), in the order given.
inline std::string Block(const std::vector<std::pair<std::string, std::string>>& fields) {
  std::string block;
  for (const auto& [name, value] : fields) {
    block += '\0';
    block += static_cast<char>(name.size());
    block += name;
    block += static_cast<char>(value.size());
    block += value;
  }
  return block;
}
// A gRPC request's fields for `path`.
inline std::vector<std::pair<std::string, std::string>> GrpcFields(std::string path) {
  return {{":method", "POST"},
          {":scheme", "http"},
          {":path", std::move(path)},
          {":authority", "x"},
          {"content-type", "application/grpc"},
          {"te", "trailers"}};
}

// How the server ended each stream: its header fields (HPACK-decoded, all HEADERS frames of the
// stream in order), whether it ended the stream (END_STREAM), and a RST_STREAM's error code.
struct StreamEnd {
  std::map<std::string, std::string> fields;
  bool ended = false;
  uint32_t reset = UINT32_MAX;
};
inline std::map<uint32_t, StreamEnd> Streams(const std::string& bytes) {
  std::map<uint32_t, StreamEnd> out;
  nghttp2_hd_inflater* inflater = nullptr;
  nghttp2_hd_inflate_new(&inflater);
  size_t at = 0;
  while (bytes.size() - at >= 9) {
    const auto* p = reinterpret_cast<const uint8_t*>(bytes.data() + at);
    const size_t n = (size_t{p[0]} << 16) | (size_t{p[1]} << 8) | p[2];
    if (bytes.size() - at - 9 < n) break;
    const uint32_t id =
        ((uint32_t{p[5]} & 0x7f) << 24) | (uint32_t{p[6]} << 16) | (uint32_t{p[7]} << 8) | p[8];
    const uint8_t* payload = p + 9;
    if (p[3] == kHeaders) {  // END_HEADERS in one frame: the server sends no CONTINUATION here
      StreamEnd& s = out[id];
      size_t left = n;
      for (;;) {
        nghttp2_nv nv;
        int flags = 0;
        const ssize_t used = nghttp2_hd_inflate_hd2(inflater, &nv, &flags, payload, left, 1);
        if (used < 0) break;
        payload += used;
        left -= static_cast<size_t>(used);
        if ((flags & NGHTTP2_HD_INFLATE_EMIT) != 0) {
          s.fields[std::string(reinterpret_cast<char*>(nv.name), nv.namelen)] =
              std::string(reinterpret_cast<char*>(nv.value), nv.valuelen);
        }
        if ((flags & NGHTTP2_HD_INFLATE_FINAL) != 0) {
          nghttp2_hd_inflate_end_headers(inflater);
          break;
        }
        if (used == 0 && (flags & NGHTTP2_HD_INFLATE_EMIT) == 0) break;
      }
      if ((p[4] & kEndStream) != 0) s.ended = true;
    } else if (p[3] == kData && (p[4] & kEndStream) != 0) {
      out[id].ended = true;
    } else if (p[3] == kRstStream && n == 4) {
      out[id].reset = (uint32_t{payload[0]} << 24) | (uint32_t{payload[1]} << 16) |
                      (uint32_t{payload[2]} << 8) | payload[3];
    }
    at += 9 + n;
  }
  nghttp2_hd_inflate_del(inflater);
  return out;
}

// What the server sent on `*c` once each of streams `ids` has ended or been reset (or 5 s passed).
inline std::map<uint32_t, StreamEnd> AwaitEnds(testutil::RawConnection* c,
                                               const std::vector<uint32_t>& ids) {
  std::map<uint32_t, StreamEnd> got;
  for (auto end = std::chrono::steady_clock::now() + seconds(5);
       std::chrono::steady_clock::now() < end;) {
    c->ReadFor(milliseconds(50));
    got = Streams(c->received());
    if (std::all_of(ids.begin(), ids.end(),
                    [&](uint32_t id) { return got[id].ended || got[id].reset != UINT32_MAX; })) {
      break;
    }
  }
  return got;
}

// On each engine that frames HTTP/2 itself or through nghttp2 (docs/grpc.md).
class H2ServerTest : public ::testing::TestWithParam<const char*>, protected testutil::GrpcWorld {
 protected:
  H2ServerTest() : GrpcWorld("h2") {}

  void Start(GrpcOptions g) {
    g.engine = GetParam();
    StartServer(std::move(g));
  }
  client::Endpoint Endpoint() const {
    client::Endpoint ep;
    ep.port = server_->port();
    return ep;
  }
  // A raw connection past the preface (the server's SETTINGS read).
  void Open(testutil::RawConnection* c) {
    ASSERT_TRUE(c->Connect(Endpoint()).ok());
    ASSERT_TRUE(c->Send(Preface()).ok());
    // Waited for up to 5 s (a loaded host answers late).
    for (auto end = std::chrono::steady_clock::now() + seconds(5);
         !Has(Parse(c->received()), kSettings) && std::chrono::steady_clock::now() < end;) {
      c->ReadFor(milliseconds(20));
    }
    ASSERT_TRUE(Has(Parse(c->received()), kSettings));
  }
  // A unary call of gRPC's client on a channel of its own.
  grpc::Status Call() {
    auto stub = v1::DelayQueue::NewStub(grpc::CreateChannel(
        "127.0.0.1:" + std::to_string(server_->port()), grpc::InsecureChannelCredentials()));
    grpc::ClientContext ctx;
    ctx.set_deadline(std::chrono::system_clock::now() + seconds(5));
    v1::ListTopicsRequest req;
    v1::ListTopicsResponse resp;
    return stub->ListTopics(&ctx, req, &resp);
  }
};

}  // namespace chronoq::grpc_api::h2test
