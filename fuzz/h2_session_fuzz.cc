// Fuzz target: one connection of the gRPC engine's own HTTP/2 framing (src/grpc_api/
// h2_own_session.h, grpc-engine h2, the default) fed arbitrary client bytes, against the real
// services (chronoq.v1.DelayQueue over the embedded engine on the in-memory store, manual clock;
// health and reflection) as the server's connection drives it (h2_server.cc's Conn: Receive, then
// Send until nothing is left, the work the session posted, its deadlines, GOAWAY at shutdown,
// Close). The first input byte picks how the rest is cut into reads and what happens around them;
// the rest follows the client's connection preface, which the target sends (docs/fuzzing.md).
//
// Invariants, besides no crash or sanitizer report (use after free, leaks): each Send hands out
// whole frames; the server's first frame is its SETTINGS; every frame is of a type a server
// sends, with the length its type has, within the client's SETTINGS_MAX_FRAME_SIZE, on stream 0
// or on a stream the client opened, as its type allows; a header block is HEADERS then
// CONTINUATIONs of the same stream with nothing between, and decodes (the client's HPACK
// decoder, kept across blocks); a stream's first block has :status, a later one grpc-status;
// DATA only between a stream's HEADERS and its end; nothing after a stream's END_STREAM but
// RST_STREAM, nothing after its RST_STREAM; the server's DATA stays within the windows the client
// gave (65,535 bytes plus its WINDOW_UPDATEs for the connection; the largest initial window it
// announced plus its WINDOW_UPDATEs for a stream).
#include <nghttp2/nghttp2.h>

#include <algorithm>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "base/clock.h"
#include "base/log.h"
#include "base/scheduler.h"
#include "base/unique_function.h"
#include "engine/engine.h"
#include "fuzz/fuzz_check.h"
#include "fuzz/fuzz_world.h"
#include "grpc_api/api_context.h"
#include "grpc_api/consume_streams.h"
#include "grpc_api/h2_frames.h"
#include "grpc_api/h2_own_session.h"
#include "grpc_api/h2_session.h"
#include "grpc_api/h2_stream.h"
#include "grpc_api/method_stats.h"
#include "service/queue_service.h"
#include "storage/memory/mem_kv.h"
#include "storage/message_store.h"

namespace {

using namespace chronoq;                // NOLINT: a fuzz target's few lines
using namespace chronoq::grpc_api::h2;  // NOLINT

// One server's worth of state, fresh for every input so that a crash reproduces from its input.
struct World : fuzz::ServiceWorld {
  grpc_api::MethodStats stats;
  grpc_api::ConsumeStreams streams;
  grpc_api::ApiContext api;
  std::unique_ptr<grpc_api::H2Services> services;
  grpc_api::H2SessionEnv env;

  World() {
    api.service = service.get();
    api.clock = &clock;
    api.scheduler = &scheduler;
    api.stats = &stats;
    api.streams = &streams;
    services = std::make_unique<grpc_api::H2Services>(&api);
    env.api = &api;
    env.services = services.get();
    env.max_request_bytes = 64 * 1024 + 5;  // small: inputs reach RESOURCE_EXHAUSTED
    env.rst_stream_burst = 100;
  }
  ~World() {
    streams.EndAll();
    services.reset();  // before the service: health watches its online state
  }
};

// The connection under the session, as h2_server.cc's Conn is, without the socket: one thread,
// work posted runs when the driver says, deadlines when the driver checks them.
class Link final : public grpc_api::H2Link, public std::enable_shared_from_this<Link> {
 public:
  std::unique_ptr<grpc_api::H2OwnSession> session;
  std::deque<UniqueFunction<void()>> posted;
  std::vector<UniqueFunction<void()>> after_send;
  std::chrono::steady_clock::time_point armed = std::chrono::steady_clock::time_point::max();

  grpc_api::H2Out* out() override { return session.get(); }
  void Run(UniqueFunction<void()> fn) override { fn(); }
  void Post(UniqueFunction<void()> fn) override { posted.push_back(std::move(fn)); }
  void AfterSend(UniqueFunction<void()> fn) override { after_send.push_back(std::move(fn)); }
  void Flush() override {}  // the driver drains after each step
  bool OnThread() const override { return true; }
  void ArmDeadline(std::chrono::steady_clock::time_point t) override { armed = std::min(armed, t); }
  std::shared_ptr<void> Hold() override { return shared_from_this(); }
  std::weak_ptr<void> WeakHold() override { return weak_from_this(); }
};

// What the client's bytes gave the server leave to send (read from the input as the server reads
// it: whole frames after the preface).
struct ClientView {
  size_t preface_left = kPreface.size();  // taken as the preface, whatever it is
  std::string in;
  uint32_t max_frame = kDefaultMaxFrame;
  int64_t max_initial_window = kDefaultWindow;
  int64_t conn_window = kDefaultWindow;  // 65,535 plus the WINDOW_UPDATEs
  std::map<int32_t, int64_t> stream_updates;
  int32_t highest_stream = 0;  // the highest stream the client sent HEADERS on

  // Takes `bytes`; returns where in them each RST_STREAM frame starts (0 when it started in
  // earlier bytes), and its stream.
  std::vector<std::pair<size_t, int32_t>> Feed(std::string_view bytes) {
    const size_t skip = std::min(preface_left, bytes.size());
    preface_left -= skip;
    const size_t before = in.size();  // a partial frame from the last bytes
    in.append(bytes.substr(skip));
    std::vector<std::pair<size_t, int32_t>> resets;
    size_t off = 0;
    while (in.size() - off >= kFrameHeaderBytes) {
      const auto* p = reinterpret_cast<const uint8_t*>(in.data() + off);
      const FrameHeader h = ReadFrameHeader(p);
      if (in.size() - off - kFrameHeaderBytes < h.length) break;
      const uint8_t* payload = p + kFrameHeaderBytes;
      off += kFrameHeaderBytes + h.length;
      if (h.type == kSettings && (h.flags & kFlagAck) == 0) {
        for (size_t i = 0; i + 6 <= h.length; i += 6) {
          const uint16_t id = static_cast<uint16_t>((payload[i] << 8) | payload[i + 1]);
          const uint32_t v = ReadU32(payload + i + 2);
          if (id == kMaxFrameSize && v <= 0xffffff) max_frame = std::max(max_frame, v);
          if (id == kInitialWindowSize) {
            max_initial_window = std::max<int64_t>(max_initial_window, v);
          }
        }
      } else if (h.type == kWindowUpdate && h.length == 4) {
        const int64_t inc = ReadU32(payload) & 0x7fffffffu;
        if (h.stream == 0) {
          conn_window += inc;
        } else {
          stream_updates[h.stream] += inc;
        }
      } else if (h.type == kHeaders) {
        highest_stream = std::max(highest_stream, h.stream);
      } else if (h.type == kRstStream && h.stream != 0) {
        const size_t start = off - kFrameHeaderBytes - h.length;
        resets.emplace_back(start > before ? skip + start - before : skip, h.stream);
      }
    }
    in.erase(0, off);
    return resets;
  }
};

// The server's bytes, checked frame by frame as a client reads them.
class ServerView {
 public:
  explicit ServerView(const ClientView* client) : client_(client) {
    FUZZ_CHECK(nghttp2_hd_inflate_new(&inflater_) == 0);
  }
  ~ServerView() { nghttp2_hd_inflate_del(inflater_); }
  ServerView(const ServerView&) = delete;
  ServerView& operator=(const ServerView&) = delete;

  // The client reset stream `id`, and the server has read it: nothing more may come on it.
  void ClientReset(int32_t id) { streams_[id].client_reset = true; }

  // What one Send handed out: whole frames.
  void Feed(const uint8_t* p, size_t n) {
    size_t off = 0;
    while (off < n) {
      FUZZ_CHECK(n - off >= kFrameHeaderBytes);
      const FrameHeader h = ReadFrameHeader(p + off);
      FUZZ_CHECK(n - off - kFrameHeaderBytes >= h.length);
      OnFrame(h, p + off + kFrameHeaderBytes);
      off += kFrameHeaderBytes + h.length;
    }
  }

 private:
  struct Stream {
    bool headers = false;  // the response's HEADERS came
    bool ended = false;    // END_STREAM came
    bool reset = false;
    bool client_reset = false;
    int64_t data = 0;
  };

  void OnFrame(const FrameHeader& h, const uint8_t* p) {
    FUZZ_CHECK(h.length <= client_->max_frame);
    if (frames_++ == 0) FUZZ_CHECK(h.type == kSettings && (h.flags & kFlagAck) == 0);
    if (in_block_) FUZZ_CHECK(h.type == kContinuation && h.stream == block_stream_);
    const bool on_stream =
        h.type == kData || h.type == kHeaders || h.type == kRstStream || h.type == kContinuation;
    if (on_stream) {
      FUZZ_CHECK(h.stream > 0 && (h.stream & 1) == 1 && h.stream <= client_->highest_stream);
    } else if (h.type != kWindowUpdate) {
      FUZZ_CHECK(h.stream == 0);
    }
    Stream& s = streams_[h.stream];
    if (on_stream) FUZZ_CHECK(!s.client_reset);
    switch (h.type) {
      case kData:
        FUZZ_CHECK(s.headers && !s.ended && !s.reset);
        s.data += h.length;
        conn_data_ += h.length;
        FUZZ_CHECK(conn_data_ <= client_->conn_window);
        FUZZ_CHECK(s.data <= client_->max_initial_window + StreamUpdates(h.stream));
        if ((h.flags & kFlagEndStream) != 0) s.ended = true;
        break;
      case kHeaders:
        FUZZ_CHECK(!s.ended && !s.reset);
        FUZZ_CHECK((h.flags & (kFlagPadded | kFlagPriority)) == 0);
        block_.assign(reinterpret_cast<const char*>(p), h.length);
        block_stream_ = h.stream;
        block_end_stream_ = (h.flags & kFlagEndStream) != 0;
        in_block_ = (h.flags & kFlagEndHeaders) == 0;
        if (!in_block_) OnBlock();
        break;
      case kContinuation:
        FUZZ_CHECK(in_block_);
        block_.append(reinterpret_cast<const char*>(p), h.length);
        in_block_ = (h.flags & kFlagEndHeaders) == 0;
        if (!in_block_) OnBlock();
        break;
      case kRstStream:
        FUZZ_CHECK(h.length == 4 && !s.reset);
        // After the answer's END_STREAM only NO_ERROR (the client still sends).
        if (s.ended) FUZZ_CHECK(ReadU32(p) == kNoError);
        s.reset = true;
        break;
      case kSettings:
        FUZZ_CHECK((h.flags & kFlagAck) != 0 ? h.length == 0 : h.length % 6 == 0);
        break;
      case kPing:
        FUZZ_CHECK(h.length == 8 && (h.flags & kFlagAck) != 0);
        break;
      case kGoaway:
        FUZZ_CHECK(h.length == 8);
        break;
      case kWindowUpdate: {
        FUZZ_CHECK(h.length == 4);
        const uint32_t inc = ReadU32(p);
        FUZZ_CHECK(inc >= 1 && inc <= 0x7fffffffu);
        if (h.stream != 0) FUZZ_CHECK(h.stream <= client_->highest_stream);
        break;
      }
      default:
        FUZZ_CHECK(false && "a frame type the server never sends");
    }
  }

  int64_t StreamUpdates(int32_t id) const {
    const auto it = client_->stream_updates.find(id);
    return it == client_->stream_updates.end() ? 0 : it->second;
  }

  // A whole header block: decoded as the client's decoder does (its table kept across blocks).
  void OnBlock() {
    Stream& s = streams_[block_stream_];
    bool status = false;
    bool grpc_status = false;
    const auto* p = reinterpret_cast<const uint8_t*>(block_.data());
    size_t n = block_.size();
    for (;;) {
      nghttp2_nv nv;
      int flags = 0;
      const ssize_t used = nghttp2_hd_inflate_hd2(inflater_, &nv, &flags, p, n, 1);
      FUZZ_CHECK(used >= 0);  // the server's encoder wrote it
      p += used;
      n -= static_cast<size_t>(used);
      if ((flags & NGHTTP2_HD_INFLATE_EMIT) != 0) {
        const std::string_view name(reinterpret_cast<const char*>(nv.name), nv.namelen);
        status = status || name == ":status";
        grpc_status = grpc_status || name == "grpc-status";
      }
      if ((flags & NGHTTP2_HD_INFLATE_FINAL) != 0) break;
      FUZZ_CHECK(used > 0 || (flags & NGHTTP2_HD_INFLATE_EMIT) != 0);
    }
    nghttp2_hd_inflate_end_headers(inflater_);
    if (!s.headers) {
      FUZZ_CHECK(status);  // the response's (or a Trailers-Only answer's)
      if (block_end_stream_) FUZZ_CHECK(grpc_status);
      s.headers = true;
    } else {
      FUZZ_CHECK(!status && grpc_status && block_end_stream_);  // the trailers
    }
    if (block_end_stream_) s.ended = true;
  }

  const ClientView* client_;
  nghttp2_hd_inflater* inflater_ = nullptr;
  size_t frames_ = 0;
  std::map<int32_t, Stream> streams_;
  int64_t conn_data_ = 0;
  bool in_block_ = false;
  int32_t block_stream_ = 0;
  bool block_end_stream_ = false;
  std::string block_;
};

// The connection's driver (h2_server.cc's Conn::Read, Flush, OnTimer and Close).
class Driver {
 public:
  Driver(World* w, uint8_t opts) : w_(w), opts_(opts), server_(&client_) {
    link_ = std::make_shared<Link>();
    link_->session = std::make_unique<grpc_api::H2OwnSession>(&w->env, link_.get());
    link_->session->Start();
    Flush();
  }

  // The bytes read, cut before each RST_STREAM (a read may end anywhere): what the server writes
  // once it reads one is checked against it.
  void Read(std::string_view bytes) {
    size_t at = 0;
    for (const auto& [start, id] : client_.Feed(bytes)) {
      Receive(bytes.substr(at, start - at));
      at = start;
      if (closed_) return;
      server_.ClientReset(id);
    }
    Receive(bytes.substr(at));
  }

  // What happens between two reads: the work posted, time (the clock and the scheduler's
  // tasks: long polls, Consume deliveries, ack timeouts), the deadlines.
  void Between() {
    if (closed_) return;
    RunPosted();
    if ((opts_ & 0x20) != 0) w_->scheduler.Advance(Millis(1'000));
    RunPosted();
    if (link_->armed <= std::chrono::steady_clock::now()) {
      link_->armed = std::chrono::steady_clock::time_point::max();
      link_->session->SweepDeadlines();
    }
    Flush();
  }

  void Receive(std::string_view bytes) {
    if (closed_ || bytes.empty()) return;
    if (!link_->session->Receive(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size())) {
      return Close();
    }
    Flush();
  }

  void Shutdown() {
    if (closed_) return;
    link_->session->Notice();
    Flush();
    link_->session->GoAway();
    Flush();
  }

  void End() {
    if (!closed_ && (opts_ & 0x10) != 0) {
      link_->session->Terminate();
      Flush();
    }
    Close();
    RunPosted();  // the connection's queue runs on after its close
  }

 private:
  void RunPosted() {
    for (int rounds = 0; rounds < 64 && !link_->posted.empty(); ++rounds) {
      UniqueFunction<void()> fn = std::move(link_->posted.front());
      link_->posted.pop_front();
      fn();
      Flush();
    }
  }

  void Flush() {
    if (closed_) return;
    for (;;) {
      const uint8_t* data = nullptr;
      const ssize_t n = link_->session->Send(&data);
      FUZZ_CHECK(n >= 0);
      if (n > 0) {
        server_.Feed(data, static_cast<size_t>(n));
        continue;
      }
      if (link_->after_send.empty()) break;
      std::vector<UniqueFunction<void()>> fns = std::move(link_->after_send);
      link_->after_send.clear();
      for (auto& fn : fns) fn();
    }
    if (!link_->session->WantsIo()) Close();
  }

  void Close() {
    if (closed_) return;
    closed_ = true;
    link_->session->Close();
    std::vector<UniqueFunction<void()>> fns = std::move(link_->after_send);
    link_->after_send.clear();
    for (auto& fn : fns) fn();
  }

  World* w_;
  const uint8_t opts_;
  ClientView client_;
  ServerView server_;
  std::shared_ptr<Link> link_;
  bool closed_ = false;
};

// The sizes of the reads (the first byte's low 3 bits).
constexpr size_t kPieces[] = {1, 5, 9, 64, 512, 4096, 16384, 1 << 20};

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  base::InitLogging(base::LogLevel::kOff, false);
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const uint8_t opts = data[0];
  std::string input;
  if ((opts & 0x40) == 0) input = kPreface;  // bit 6: the input brings its own preface
  input.append(reinterpret_cast<const char*>(data + 1), size - 1);
  World w;
  {
    Driver d(&w, opts);
    const size_t piece = kPieces[opts & 7];
    const size_t half = input.size() / 2;
    bool shut = false;
    for (size_t at = 0; at < input.size(); at += piece) {
      if ((opts & 0x08) != 0 && !shut && at >= half) {
        d.Shutdown();  // bit 3: the server shuts down midway (GOAWAY twice)
        shut = true;
      }
      d.Read(std::string_view(input).substr(at, piece));
      d.Between();
    }
    d.Between();
    d.End();
  }
  return 0;
}
