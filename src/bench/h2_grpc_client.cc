#include "bench/h2_grpc_client.h"

#include <fcntl.h>
#include <nghttp2/nghttp2.h>
#include <sys/epoll.h>
#include <unistd.h>

#include <algorithm>
#include <charconv>
#include <climits>
#include <cstdint>
#include <cstring>

#include "base/h2_frame.h"

namespace chronoq::bench {
namespace {

// HTTP/2 (RFC 9113) as a gRPC client needs it.
constexpr uint8_t kData = 0, kHeaders = 1, kRstStream = 3, kSettings = 4, kPushPromise = 5,
                  kPing = 6, kGoaway = 7, kWindowUpdate = 8, kContinuation = 9;
constexpr uint8_t kEndStream = 1, kAck = 1, kEndHeaders = 4, kPadded = 8, kPriority = 0x20;
constexpr uint32_t kCancel = 8;  // RST_STREAM's error code
constexpr std::string_view kPreface = "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n";
// The windows this side opens: the answers (Consume's messages) flow without waiting for
// WINDOW_UPDATEs; half of a window consumed is given back.
constexpr int64_t kStreamWindow = int64_t{1} << 24;
constexpr int64_t kConnWindow = int64_t{1} << 30;
constexpr int64_t kDefaultWindow = 65535;

// The frame header and 32-bit fields, as the server's own framing writes and reads them.
using base::h2::AppendFrameHeader;
using base::h2::AppendU32Frame;
using base::h2::ReadU32;
void Append32(std::string* out, uint32_t v) {
  const char b[4] = {static_cast<char>(v >> 24), static_cast<char>(v >> 16),
                     static_cast<char>(v >> 8), static_cast<char>(v)};
  out->append(b, 4);
}

// HPACK (RFC 7541 section 5.1): `v` with an N-bit prefix, the byte's other bits `first`.
void AppendHpackInt(std::string* out, uint8_t first, int prefix_bits, size_t v) {
  const size_t max = (size_t{1} << prefix_bits) - 1;
  if (v < max) {
    out->push_back(static_cast<char>(first | v));
    return;
  }
  out->push_back(static_cast<char>(first | max));
  v -= max;
  while (v >= 128) {
    out->push_back(static_cast<char>((v & 0x7f) | 0x80));
    v >>= 7;
  }
  out->push_back(static_cast<char>(v));
}
// A string literal, not Huffman-coded (the fields a call repeats are indexed after its first).
void AppendHpackString(std::string* out, std::string_view s) {
  AppendHpackInt(out, 0, 7, s.size());
  out->append(s);
}

// A call's stream: its request bytes still to send, its answer's bytes not yet framed.
struct H2Stream {
  int32_t id = 0;
  GrpcCall* call = nullptr;
  std::string out;  // length-prefixed request messages not yet in DATA frames
  size_t out_pos = 0;
  bool last = false;      // no more request messages after `out`
  bool end_sent = false;  // END_STREAM sent
  int64_t send_window = 0;
  int64_t recv_unacked = 0;  // DATA bytes received since the last WINDOW_UPDATE
  std::string in;            // a partial answer message
  int status = -1;           // grpc-status
  std::string message;       // grpc-message, or why the stream ended without a status

  void Reset() {
    call = nullptr;
    out.clear();
    out_pos = 0;
    last = end_sent = false;
    recv_unacked = 0;
    in.clear();
    status = -1;
    message.clear();
  }
};

void AppendFramed(std::string* out, std::string_view message) {
  const auto n = static_cast<uint32_t>(message.size());
  const char prefix[5] = {0, static_cast<char>(n >> 24), static_cast<char>(n >> 16),
                          static_cast<char>(n >> 8), static_cast<char>(n)};
  out->append(prefix, 5);
  out->append(message);
}

// Hands each complete length-prefixed message at the front of `data` to `call`; returns the
// bytes consumed.
size_t DeliverMessages(std::string_view data, GrpcCall* call) {
  size_t pos = 0;
  while (data.size() - pos >= 5) {
    const auto* p = reinterpret_cast<const unsigned char*>(data.data() + pos);
    const size_t len = (size_t{p[1]} << 24) | (size_t{p[2]} << 16) | (size_t{p[3]} << 8) | p[4];
    if (data.size() - pos - 5 < len) break;
    call->OnMessage(data.substr(pos + 5, len));
    pos += 5 + len;
  }
  return pos;
}

}  // namespace

// One connection: the frames of RFC 9113 written and read here, the request headers encoded by
// the HPACK encoder below (as gRPC's own clients do: every field a call repeats indexed in the
// dynamic table after the first call, so that a call's HEADERS is a few bytes), the answers'
// header blocks decoded by nghttp2's HPACK decoder.
struct GrpcH2Loop::Conn {
  GrpcH2Loop* loop = nullptr;
  int fd = -1;
  std::unique_ptr<tls::ClientSession> tls;  // over TLS only
  std::string out;                          // frames not yet written
  size_t out_pos = 0;
  bool dead = false;
  bool write_interest = false;
  bool dirty = false;                              // `out` has frames to write
  std::vector<std::unique_ptr<H2Stream>> streams;  // the open calls (a few: searched in order)
  std::vector<std::unique_ptr<H2Stream>> pool;     // streams to reuse
  int32_t next_id = 1;
  // The server's settings and windows.
  int64_t send_window = kDefaultWindow;
  int64_t initial_window = kDefaultWindow;
  size_t max_frame = 16384;
  size_t max_streams = SIZE_MAX;
  int32_t goaway_last = INT32_MAX;  // after a GOAWAY: the last stream it serves
  int64_t recv_unacked = 0;         // the connection's DATA bytes since its last WINDOW_UPDATE
  // The HPACK encoder's dynamic table (RFC 7541 section 2.3.2), oldest first, and its size.
  struct Entry {
    std::string name, value;
  };
  std::vector<Entry> table;
  size_t table_bytes = 0;
  size_t table_max = 4096;
  bool table_update = false;  // a size update is due at the start of the next header block
  // The last request's header block when every field of it was indexed (the table unchanged):
  // the next call to the same path sends the same bytes.
  std::string sent_path;
  std::string sent_block;
  bool sent_valid = false;
  // Header blocks of indexed fields only (which leave the decoder's table as it is) seen since
  // the table last changed, and their fields: the same bytes again are not decoded again.
  struct Seen {
    std::string block;
    std::vector<std::pair<std::string, std::string>> fields;
  };
  std::vector<Seen> seen;
  // Reading: bytes short of a whole frame, and a header block awaiting its CONTINUATION.
  std::string in;
  std::string block;
  int32_t block_id = 0;
  bool block_end = false;
  nghttp2_hd_inflater* inflater = nullptr;

  ~Conn() {
    if (inflater != nullptr) nghttp2_hd_inflate_del(inflater);
    tls.reset();
    if (fd >= 0) ::close(fd);
  }

  std::unique_ptr<H2Stream> NewStream() {
    if (pool.empty()) return std::make_unique<H2Stream>();
    std::unique_ptr<H2Stream> s = std::move(pool.back());
    pool.pop_back();
    return s;
  }
  void Release(std::unique_ptr<H2Stream> s) {
    s->Reset();
    pool.push_back(std::move(s));
  }
  H2Stream* Find(int32_t id) const {
    for (const auto& s : streams) {
      if (s->id == id) return s.get();
    }
    return nullptr;
  }
  // Takes stream `id` out of the open ones (null when it is not open).
  std::unique_ptr<H2Stream> Take(int32_t id) {
    for (size_t i = 0; i < streams.size(); ++i) {
      if (streams[i]->id != id) continue;
      std::unique_ptr<H2Stream> s = std::move(streams[i]);
      streams[i] = std::move(streams.back());
      streams.pop_back();
      return s;
    }
    return nullptr;
  }

  // One field of a request's header block. `name_index`: the static table's entry with this
  // name (0: none); `index`: never, for a secret.
  void Encode(std::string* out, size_t name_index, std::string_view name, std::string_view value,
              bool index = true) {
    for (size_t i = 0; i < table.size(); ++i) {
      if (table[i].name == name && table[i].value == value) {
        AppendHpackInt(out, 0x80, 7, 62 + (table.size() - 1 - i));  // indexed
        return;
      }
    }
    const size_t bytes = 32 + name.size() + value.size();
    // Indexed from here while the table has room (never evicting: the indexes stay put).
    if (index && table_bytes + bytes <= table_max) {
      table.push_back({std::string(name), std::string(value)});
      table_bytes += bytes;
      sent_valid = false;                        // the indexes of the entries before it moved
      AppendHpackInt(out, 0x40, 6, name_index);  // literal with incremental indexing
    } else {
      AppendHpackInt(out, index ? 0x00 : 0x10, 4, name_index);  // without / never indexed
    }
    if (name_index == 0) AppendHpackString(out, name);
    AppendHpackString(out, value);
  }

  void WindowUpdate(int32_t id, int64_t n) {
    AppendU32Frame(&out, kWindowUpdate, id, {static_cast<uint32_t>(n)});
  }
  void RstStream(int32_t id, uint32_t code) {
    AppendU32Frame(&out, kRstStream, id, {code});
    dirty = true;
  }

  // DATA frames of `s`'s pending request bytes, as far as the windows and the frame size let.
  void Pump(H2Stream* s) {
    while (!s->end_sent) {
      const size_t left = s->out.size() - s->out_pos;
      // (A window may be below 0 after the server lowered INITIAL_WINDOW_SIZE.)
      const auto n = static_cast<size_t>(std::max<int64_t>(
          0, std::min<int64_t>({static_cast<int64_t>(left), static_cast<int64_t>(max_frame),
                                send_window, s->send_window})));
      if (n == 0 && (left > 0 || !s->last)) return;
      const bool end = s->last && n == left;
      AppendFrameHeader(&out, n, kData, end ? kEndStream : 0, s->id);
      out.append(s->out, s->out_pos, n);
      s->out_pos += n;
      send_window -= static_cast<int64_t>(n);
      s->send_window -= static_cast<int64_t>(n);
      s->end_sent = end;
      if (s->out_pos == s->out.size()) {
        s->out.clear();
        s->out_pos = 0;
      }
      dirty = true;
    }
  }

  // Call `s` is over (taken out of `streams`): its OnClose, then its stream is kept for reuse.
  void Close(std::unique_ptr<H2Stream> s, std::string_view why) {
    --loop->open_calls_;
    GrpcCall* call = s->call;
    const int status = s->status;
    std::string message = std::move(s->message);
    if (status < 0 && message.empty()) message = why;
    s->Reset();
    pool.push_back(std::move(s));
    if (call != nullptr) call->OnClose(status, message);
  }
  // The server ended stream `id` (END_STREAM). A request still being sent is abandoned.
  void RemoteEnd(int32_t id) {
    std::unique_ptr<H2Stream> s = Take(id);
    if (s == nullptr) return;
    if (!s->end_sent) RstStream(id, kCancel);
    Close(std::move(s), "the stream ended without grpc-status");
  }

  // The answer's header fields: :status, grpc-status, grpc-message.
  void OnField(H2Stream* s, std::string_view n, std::string_view v) {
    if (n == "grpc-status") {
      int status = -1;
      std::from_chars(v.data(), v.data() + v.size(), status);
      s->status = status;
    } else if (n == "grpc-message") {
      s->message.assign(v);
    } else if (n == ":status" && v != "200") {
      s->message = "HTTP status " + std::string(v);
    }
  }
  // A whole header block of stream `id`: decoded (always: the decoder's table follows every
  // block), its fields to the call. False on a compression error.
  bool OnBlock(const uint8_t* p, size_t len) {
    H2Stream* s = Find(block_id);
    const std::string_view bytes(reinterpret_cast<const char*>(p), len);
    // Indexed fields only (each a byte 0x80-0xfe): the table stays as it is.
    const bool indexed = std::all_of(bytes.begin(), bytes.end(), [](char c) {
      return (static_cast<uint8_t>(c) & 0x80) != 0 && static_cast<uint8_t>(c) != 0xff;
    });
    if (indexed) {
      for (const Seen& seen_block : seen) {
        if (seen_block.block != bytes) continue;
        if (s != nullptr) {
          for (const auto& [n, v] : seen_block.fields) OnField(s, n, v);
        }
        if (block_end) RemoteEnd(block_id);
        return true;
      }
    } else {
      seen.clear();  // the decoder's table may change
    }
    Seen* keep = nullptr;
    if (indexed && seen.size() < 4) {
      seen.push_back({std::string(bytes), {}});
      keep = &seen.back();
    }
    for (;;) {
      nghttp2_nv nv;
      int flags = 0;
      const ssize_t used = nghttp2_hd_inflate_hd2(inflater, &nv, &flags, p, len, 1);
      if (used < 0) return false;
      p += used;
      len -= static_cast<size_t>(used);
      if ((flags & NGHTTP2_HD_INFLATE_EMIT) != 0) {
        const std::string_view n(reinterpret_cast<const char*>(nv.name), nv.namelen);
        const std::string_view v(reinterpret_cast<const char*>(nv.value), nv.valuelen);
        if (s != nullptr) OnField(s, n, v);
        if (keep != nullptr) keep->fields.emplace_back(n, v);
      }
      if ((flags & NGHTTP2_HD_INFLATE_FINAL) != 0) break;
      if (used == 0 && (flags & NGHTTP2_HD_INFLATE_EMIT) == 0) return false;
    }
    nghttp2_hd_inflate_end_headers(inflater);
    if (block_end) RemoteEnd(block_id);
    return true;
  }

  void OnData(int32_t id, const uint8_t* p, size_t len, size_t frame_len, bool end) {
    recv_unacked += static_cast<int64_t>(frame_len);
    if (recv_unacked >= kConnWindow / 2) {
      WindowUpdate(0, recv_unacked);
      recv_unacked = 0;
      dirty = true;
    }
    H2Stream* s = Find(id);
    if (s == nullptr) return;
    if (s->call != nullptr && len > 0) {
      std::string_view chunk(reinterpret_cast<const char*>(p), len);
      if (s->in.empty()) {
        // The usual case: whole messages in the frame, framed in place.
        s->in.assign(chunk.substr(DeliverMessages(chunk, s->call)));
      } else {
        s->in.append(chunk);
        s->in.erase(0, DeliverMessages(s->in, s->call));
      }
      s = Find(id);  // the call may have written (Write) or cancelled (Cancel) meanwhile
      if (s != nullptr && s->call != nullptr) s->call->OnReadBatch();
      s = Find(id);
    }
    if (s == nullptr) return;
    if (end) {
      RemoteEnd(id);
      return;
    }
    s->recv_unacked += static_cast<int64_t>(frame_len);
    if (s->recv_unacked >= kStreamWindow / 2) {
      WindowUpdate(id, s->recv_unacked);
      s->recv_unacked = 0;
      dirty = true;
    }
  }

  void OnSettings(const uint8_t* p, size_t len) {
    for (; len >= 6; p += 6, len -= 6) {
      const uint32_t v = ReadU32(p + 2);
      switch ((p[0] << 8) | p[1]) {
        case 1:  // HEADER_TABLE_SIZE: the table shrinks to it (its oldest entries dropped)
          if (v < table_max) {
            table_max = v;
            while (table_bytes > table_max) {
              table_bytes -= 32 + table.front().name.size() + table.front().value.size();
              table.erase(table.begin());
            }
            table_update = true;
            sent_valid = false;
          }
          break;
        case 3:  // MAX_CONCURRENT_STREAMS
          max_streams = v;
          break;
        case 4:  // INITIAL_WINDOW_SIZE: every open stream's window moves by the difference
          for (auto& s : streams) s->send_window += int64_t{v} - initial_window;
          initial_window = v;
          break;
        case 5:  // MAX_FRAME_SIZE
          max_frame = v;
          break;
        default:
          break;
      }
    }
    AppendFrameHeader(&out, 0, kSettings, kAck, 0);
    dirty = true;
  }

  // The frames in `data`: returns the bytes of whole frames handled, or -1 on a connection
  // error (`*why` says which).
  ssize_t OnFrames(const uint8_t* data, size_t size, std::string* why) {
    size_t at = 0;
    while (size - at >= 9 && !dead) {
      const uint8_t* h = data + at;
      const size_t len = (size_t{h[0]} << 16) | (size_t{h[1]} << 8) | h[2];
      if (size - at - 9 < len) break;
      at += 9 + len;
      const uint8_t type = h[3];
      const uint8_t flags = h[4];
      const auto id = static_cast<int32_t>(ReadU32(h + 5) & 0x7fffffff);
      const uint8_t* p = h + 9;
      size_t n = len;
      if (block_id != 0 && type != kContinuation) {
        *why = "HTTP/2: a header block without its CONTINUATION";
        return -1;
      }
      if ((type == kData || type == kHeaders) && (flags & kPadded) != 0) {
        if (n < 1 || p[0] >= n) {
          *why = "HTTP/2: bad padding";
          return -1;
        }
        n -= 1 + p[0];
        p += 1;
      }
      switch (type) {
        case kData:
          OnData(id, p, n, len, (flags & kEndStream) != 0);
          break;
        case kHeaders:
          if ((flags & kPriority) != 0) {
            if (n < 5) {
              *why = "HTTP/2: a short HEADERS frame";
              return -1;
            }
            p += 5;
            n -= 5;
          }
          [[fallthrough]];
        case kContinuation:
          if (type == kHeaders) {
            block_id = id;
            block_end = (flags & kEndStream) != 0;
            block.clear();
          } else if (id != block_id) {
            *why = "HTTP/2: an unexpected CONTINUATION";
            return -1;
          }
          if ((flags & kEndHeaders) == 0) {
            block.append(reinterpret_cast<const char*>(p), n);
            break;
          }
          {
            bool ok;
            if (block.empty()) {
              ok = OnBlock(p, n);
            } else {
              block.append(reinterpret_cast<const char*>(p), n);
              ok = OnBlock(reinterpret_cast<const uint8_t*>(block.data()), block.size());
            }
            block_id = 0;
            if (!ok) {
              *why = "HTTP/2: an answer's header block cannot be decoded";
              return -1;
            }
          }
          break;
        case kRstStream:
          if (auto s = Take(id); s != nullptr && n == 4) {
            Close(std::move(s), std::string("stream reset: ") + nghttp2_http2_strerror(ReadU32(p)));
          }
          break;
        case kSettings:
          if ((flags & kAck) == 0) OnSettings(p, n);
          break;
        case kPing:
          if ((flags & kAck) == 0 && n == 8) {
            AppendFrameHeader(&out, 8, kPing, kAck, 0);
            out.append(reinterpret_cast<const char*>(p), 8);
            dirty = true;
          }
          break;
        case kGoaway:
          if (n >= 8) OnGoaway(static_cast<int32_t>(ReadU32(p) & 0x7fffffff));
          break;
        case kWindowUpdate:
          if (n == 4) OnWindowUpdate(id, ReadU32(p) & 0x7fffffff);
          break;
        case kPushPromise:
          *why = "HTTP/2: PUSH_PROMISE, push being off";
          return -1;
        default:  // PRIORITY, extensions: nothing to do
          break;
      }
    }
    return static_cast<ssize_t>(at);
  }

  void OnGoaway(int32_t last) {
    goaway_last = last;
    // The calls it will not serve end here.
    for (size_t i = 0; i < streams.size();) {
      if (streams[i]->id <= last) {
        ++i;
        continue;
      }
      Close(Take(streams[i]->id), "the server ended the HTTP/2 session (GOAWAY)");
    }
  }

  void OnWindowUpdate(int32_t id, uint32_t n) {
    if (id == 0) {
      send_window += n;
      for (size_t i = 0; i < streams.size(); ++i) Pump(streams[i].get());
    } else if (H2Stream* s = Find(id)) {
      s->send_window += n;
      Pump(s);
    }
  }
};

GrpcH2Loop::GrpcH2Loop(client::Endpoint ep, std::string authorization)
    : ep_(std::move(ep)), authorization_(std::move(authorization)) {
  authority_ = ep_.host + ":" + std::to_string(ep_.port);
  if (ep_.tls) ep_.tls_options.alpn = "h2";  // gRPC over TLS is h2 by ALPN
  epfd_ = ::epoll_create1(EPOLL_CLOEXEC);
}

GrpcH2Loop::~GrpcH2Loop() {
  conns_.clear();
  if (epfd_ >= 0) ::close(epfd_);
}

Status GrpcH2Loop::Connect(int n) {
  Status result = Status::Ok();
  for (int i = 0; i < n && result.ok(); ++i) {
    auto conn = client::HttpConnection::Connect(ep_);
    if (!conn.has_value()) {
      result = conn.error();
      break;
    }
    auto c = std::make_unique<Conn>();
    c->loop = this;
    c->tls = conn->ReleaseTls();
    c->fd = conn->ReleaseFd();  // the loop owns the socket (and its TLS session) from here
    ::fcntl(c->fd, F_SETFL, ::fcntl(c->fd, F_GETFL) | O_NONBLOCK);
    nghttp2_hd_inflate_new(&c->inflater);
    // The preface; SETTINGS: no push, large windows (the stream's, then the connection's).
    c->out.append(kPreface);
    AppendFrameHeader(&c->out, 12, kSettings, 0, 0);
    c->out.append("\0\2\0\0\0\0\0\4", 8);  // ENABLE_PUSH 0, INITIAL_WINDOW_SIZE:
    Append32(&c->out, static_cast<uint32_t>(kStreamWindow));
    c->WindowUpdate(0, kConnWindow - kDefaultWindow);
    c->dirty = true;
    result = AddToEpoll(epfd_, c->fd, c.get());
    conns_.push_back(std::move(c));
  }
  return result;
}

int32_t GrpcH2Loop::Start(int conn, std::string_view path, std::string_view message, bool last,
                          GrpcCall* call) {
  Conn& c = *conns_[static_cast<size_t>(conn)];
  if (c.dead || c.next_id > c.goaway_last || c.streams.size() >= c.max_streams ||
      c.next_id > INT32_MAX - 2) {
    return -1;
  }
  std::unique_ptr<H2Stream> owned = c.NewStream();
  H2Stream* s = owned.get();
  s->id = c.next_id;
  c.next_id += 2;
  s->call = call;
  s->last = last;
  s->send_window = c.initial_window;
  AppendFramed(&s->out, message);
  // HEADERS: :method POST and :scheme from the static table, the rest from the dynamic table
  // after the first call (authorization never indexed).
  const size_t at = c.out.size();
  AppendFrameHeader(&c.out, 0, kHeaders, kEndHeaders, s->id);
  if (c.sent_valid && !c.table_update && path == c.sent_path) {
    c.out.append(c.sent_block);
  } else {
    const bool update = c.table_update;
    if (update) {
      AppendHpackInt(&c.out, 0x20, 5, c.table_max);
      c.table_update = false;
    }
    const size_t from = c.out.size();
    c.sent_valid = !update;                    // until a field is inserted in the table (Encode)
    c.out.push_back(static_cast<char>(0x83));  // :method POST
    c.out.push_back(static_cast<char>(ep_.tls ? 0x87 : 0x86));  // :scheme https / http
    c.Encode(&c.out, 4, ":path", path);
    c.Encode(&c.out, 1, ":authority", authority_);
    c.Encode(&c.out, 31, "content-type", "application/grpc");
    c.Encode(&c.out, 0, "te", "trailers");
    if (!authorization_.empty()) c.Encode(&c.out, 23, "authorization", authorization_, false);
    if (c.sent_valid) {
      c.sent_path.assign(path);
      c.sent_block.assign(c.out, from);
    }
  }
  const size_t block = c.out.size() - at - 9;
  if (block > c.max_frame) {  // not in one frame: a path or token beyond any real one
    c.out.resize(at);
    c.Release(std::move(owned));
    return -1;
  }
  c.out[at] = static_cast<char>(block >> 16);
  c.out[at + 1] = static_cast<char>(block >> 8);
  c.out[at + 2] = static_cast<char>(block);
  c.streams.push_back(std::move(owned));
  ++open_calls_;
  c.Pump(s);
  c.dirty = true;
  return s->id;
}

void GrpcH2Loop::Write(int conn, int32_t stream, std::string_view message) {
  Conn& c = *conns_[static_cast<size_t>(conn)];
  H2Stream* s = c.dead ? nullptr : c.Find(stream);
  if (s == nullptr) return;
  AppendFramed(&s->out, message);
  c.Pump(s);
}

void GrpcH2Loop::Cancel(int conn, int32_t stream) {
  Conn& c = *conns_[static_cast<size_t>(conn)];
  if (c.dead) return;
  std::unique_ptr<H2Stream> s = c.Take(stream);
  if (s == nullptr) return;
  c.RstStream(stream, kCancel);
  c.Close(std::move(s), std::string("stream reset: ") + nghttp2_http2_strerror(kCancel));
}

void GrpcH2Loop::Fail(Conn& c, std::string_view what) {
  if (c.dead) return;
  c.dead = true;
  ++connection_errors_;
  ::epoll_ctl(epfd_, EPOLL_CTL_DEL, c.fd, nullptr);
  // Every open call of the connection ends here, without a status.
  std::vector<GrpcCall*> open;
  for (auto& s : c.streams) {
    open.push_back(s->call);
    s->Reset();
    c.pool.push_back(std::move(s));
  }
  c.streams.clear();
  open_calls_ -= static_cast<int64_t>(open.size());
  for (GrpcCall* call : open) {
    if (call != nullptr) call->OnClose(-1, what);
  }
}

void GrpcH2Loop::Flush(Conn& c) {
  c.dirty = false;
  if (c.dead) return;
  // Every frame since the last write (of every call started since), in one write.
  std::string why;
  if (FlushPending(epfd_, c, &why) < 0) {
    Fail(c, why);
    return;
  }
  if (c.goaway_last != INT32_MAX && c.streams.empty()) {
    Fail(c, "the server ended the HTTP/2 session");
  }
}

void GrpcH2Loop::OnReadable(Conn& c) {
  char buf[64 * 1024];
  std::string why;
  const int read = ReadAvailable(
      c.fd, c.tls.get(), buf, sizeof(buf),
      [&](size_t n) {
        c.dirty = true;
        const auto* data = reinterpret_cast<const uint8_t*>(buf);
        if (c.in.empty()) {  // the usual case: whole frames, handled in place
          const ssize_t used = c.OnFrames(data, n, &why);
          if (used < 0) return false;
          c.in.assign(buf + used, n - static_cast<size_t>(used));
          return true;
        }
        c.in.append(buf, n);
        const ssize_t used =
            c.OnFrames(reinterpret_cast<const uint8_t*>(c.in.data()), c.in.size(), &why);
        if (used < 0) return false;
        c.in.erase(0, static_cast<size_t>(used));
        return true;
      },
      &why);
  if (read == 0) {
    Fail(c, "the server closed the connection");
  } else if (read < 0) {
    Fail(c, why.empty() ? std::string("HTTP/2: connection error") : why);
  }
}

void GrpcH2Loop::Run(SteadyClock::time_point deadline, const std::function<bool()>& stop,
                     const std::function<void()>& tick, std::chrono::milliseconds tick_every) {
  auto next_tick = SteadyClock::now() + tick_every;
  std::vector<epoll_event> events(1024);
  for (;;) {
    // Write what the last events (and the calls they started) left to send: one write per
    // connection.
    bool live = false;
    for (auto& c : conns_) {
      if (c->dirty) Flush(*c);
      live = live || !c->dead;
    }
    const auto now = SteadyClock::now();
    if (!live || now >= deadline || (stop && stop())) break;
    if (now >= next_tick) {
      if (tick) tick();
      next_tick = now + tick_every;
    }
    WaitAndDispatch<Conn>(
        epfd_, events, MicrosUntil(std::min(next_tick, deadline)), [](Conn& c) { return c.dead; },
        [this](Conn& c) { Flush(c); }, [this](Conn& c) { OnReadable(c); });
  }
  if (tick) tick();
}

}  // namespace chronoq::bench
