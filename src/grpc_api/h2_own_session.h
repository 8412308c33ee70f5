// Internal to src/grpc_api: the HTTP/2 session of one connection framed by the engine itself
// (grpc-engine=h2, the default; docs/grpc.md "HTTP/2 framing of our own"), without nghttp2's
// session: frames read and written here (h2_frames.h), HPACK through nghttp2's standalone coder.
// Serves the unary methods as H2Session does (h2_routes.h DispatchUnary, the same GrpcRequestCheck,
// deadlines, the RST_STREAM budget), and Consume, health and reflection through the same stream
// objects (h2_consume.h, h2_stream.h) over H2Out (h2_own_calls.cc).
//
// Stream states (RFC 9113 section 5.1): open at its HEADERS, half-closed (remote) at END_STREAM
// from the client, closed once the answer's END_STREAM is queued (then RST_STREAM(NO_ERROR) if the
// client still sends) or at RST_STREAM. Flow control both ways: the server's DATA within the
// client's connection and stream windows (what does not fit waits for WINDOW_UPDATE); the
// client's DATA within 4 MiB for the connection and 1 MiB per stream, given back as it arrives.
//
// Thread-safety: none; everything runs on the connection's thread.
#pragma once

#include <sys/types.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "grpc_api/h2_frames.h"
#include "grpc_api/h2_session.h"

namespace chronoq::grpc_api {

class H2OwnSession final : public H2Framing, public H2Answers {
 public:
  H2OwnSession(const H2SessionEnv* env, H2Link* link);
  ~H2OwnSession() override;
  H2OwnSession(const H2OwnSession&) = delete;
  H2OwnSession& operator=(const H2OwnSession&) = delete;

  void Start() override;
  bool started() const override { return started_; }
  bool Receive(const uint8_t* data, size_t n) override;
  ssize_t Send(const uint8_t** data) override;
  bool WantsIo() const override;
  std::chrono::steady_clock::time_point idle_since() const override {
    return streams_.empty() ? idle_since_ : std::chrono::steady_clock::time_point::max();
  }
  void Notice() override;
  void GoAway() override;
  void Terminate() override;
  void Close() override;
  void SweepDeadlines() override;
  void PumpStreaming(int32_t id) override;

  // H2Out (h2_own_calls.cc): the streaming calls' answers.
  void SubmitResponse(int32_t id, H2Producer* producer) override;
  int SubmitStatus(int32_t id, int code, std::string_view message, bool trailers) override;
  void ResumeData(int32_t id) override;
  void ConsumeStream(int32_t id, size_t n) override;
  void ConsumeConnection(size_t n) override;

 private:
  // The server's settings (as H2Session's): streams at once, the receive windows.
  static constexpr uint32_t kMaxStreams = 1000;
  static constexpr int64_t kStreamWindow = 1 << 20;
  static constexpr int64_t kConnWindow = 4 << 20;
  // A header block larger than this ends the connection (ENHANCE_YOUR_CALM).
  static constexpr size_t kMaxHeaderBlock = 256 * 1024;
  // Closed streams kept for the next calls, and the largest request buffer kept with one.
  static constexpr size_t kSpareStreams = 8;
  static constexpr size_t kKeptBodyBytes = 64 * 1024;

  struct Stream {
    int32_t id = 0;
    std::string path;
    std::optional<std::string> authorization;
    std::chrono::steady_clock::time_point deadline = std::chrono::steady_clock::time_point::max();
    std::string body;  // the request's DATA (gRPC frames)
    service::LongPollTicket ticket;
    std::shared_ptr<std::atomic<bool>> gone;
    GrpcRequestCheck check;
    bool remote_closed = false;  // END_STREAM received
    bool refused = false;        // answered before its end
    bool answered = false;       // its status is queued
    int64_t send_window = 0;     // the client's window for this stream
    int64_t recv_unacked = 0;    // DATA received and not yet given back by WINDOW_UPDATE
    int64_t consumed = 0;        // of it, handled (given back at half the window)
    // A streaming call: Consume, or a standard service's (health, reflection).
    std::shared_ptr<H2Consume> consume;
    std::shared_ptr<H2StreamState> streaming;
    H2Producer* producer = nullptr;  // its answer's DATA (SubmitResponse)
    bool ready = false;              // the producer has something (not kDeferred)
    std::string trailers;            // submitted while producing: written after the DATA
    // The answer's DATA not yet written (past the windows), then its trailers.
    std::string pending;
    size_t pending_pos = 0;
    bool blocked = false;  // waits for a WINDOW_UPDATE

    void Clear();
  };

  // A connection error: GOAWAY with `code`; nothing more is read.
  void Fail(h2::ErrorCode code, const char* what);
  // The frame whose header is `h` and payload `p`; false: the connection ends.
  bool OnFrame(const h2::FrameHeader& h, const uint8_t* p);
  bool OnSettings(const h2::FrameHeader& h, const uint8_t* p);
  bool OnHeaders(const h2::FrameHeader& h, const uint8_t* p);
  bool OnHeaderBlock();  // a block complete (HEADERS and its CONTINUATIONs)
  bool OnData(const h2::FrameHeader& h, const uint8_t* p);
  void OnWindowUpdate(int32_t id, uint32_t increment);
  // The streams whose answer waits for a window: written as far as the windows now let.
  void ResumeBlocked();
  void OnEndStream(Stream* s);
  bool Admit(Stream* s);

  // The open stream `id` (null: none): O(log n), O(1) for the stream found last.
  Stream* Find(int32_t id);
  std::vector<std::unique_ptr<Stream>>::iterator Lookup(int32_t id);
  Stream* Open(int32_t id);
  // Closes `s` (its answer's END_STREAM queued, or reset): RST_STREAM(`reset`) unless -1.
  void CloseStream(Stream* s, int64_t reset);
  void CancelParked(Stream& s);

  void Complete(int32_t id, H2Answer a) override;
  void Submit(Stream* s, H2Answer a);
  // The answer's DATA (as much as the windows let through), then its trailers.
  void WriteBody(Stream* s);
  void WriteTrailersOnly(Stream* s, std::string_view http_status, int code,
                         std::string_view message);
  // The block of `fields` as HEADERS (+ CONTINUATIONs) of stream `id`, appended to `*to`;
  // `cache`: the block kept while the encoder's table is unchanged.
  void WriteHeaders(int32_t id, const h2::Field* fields, size_t n, bool end_stream,
                    std::string* cache, std::string* to);
  // The streaming calls (h2_own_calls.cc): opened at their HEADERS (false: not one).
  bool OpenCall(Stream* s);
  // `n` bytes of the stream's DATA handled: windows given back at half (null: a closed stream's).
  void Consumed(Stream* s, size_t n);
  // Writes the ready producers' DATA, as far as the windows let it.
  void ProduceData();
  // One stream's; true when the stream closed.
  bool ProduceStream(Stream* s);
  void ResetStream(Stream* s, h2::ErrorCode code);
  // The answer's END_STREAM is queued: RST_STREAM(NO_ERROR) if the client still sends, closed.
  void EndLocal(Stream* s);
  void Dispatch(Stream* s);

  const H2SessionEnv* const env_;
  H2Link* const link_;
  bool started_ = false;
  bool closed_ = false;
  bool failed_ = false;       // a connection error: GOAWAY queued, nothing more read
  bool goaway_sent_ = false;  // the final GOAWAY: no new streams
  bool peer_goaway_ = false;
  size_t preface_left_ = h2::kPreface.size();
  std::string in_;         // a partial frame
  std::string out_;        // to send
  std::string sending_;    // what Send handed out last
  int outbound_acks_ = 0;  // SETTINGS and PING acknowledgements not yet handed out
  // The header block being received (HEADERS, then CONTINUATIONs on the same stream).
  std::string block_;
  int32_t block_stream_ = 0;
  bool block_end_stream_ = false;
  bool in_block_ = false;
  int32_t last_stream_ = 0;  // the highest stream the client opened
  h2::HpackDecoder decoder_;
  h2::HpackEncoder encoder_;
  // The OK answer's HEADERS and trailers blocks, once encoding them left the table unchanged.
  std::string ok_headers_;
  std::string ok_trailers_;
  // The client's settings.
  int64_t peer_initial_window_ = h2::kDefaultWindow;
  uint32_t peer_max_frame_ = h2::kDefaultMaxFrame;
  int64_t conn_send_window_ = h2::kDefaultWindow;
  int64_t conn_recv_unacked_ = 0;  // received and not yet given back
  int64_t conn_consumed_ = 0;      // of it, handled
  Stream* producing_ = nullptr;    // whose producer runs (its trailers wait for its DATA)
  std::string scratch_;            // a producer's DATA
  // The request being dispatched (Dispatch: out of its stream, which may close inside).
  std::string request_path_;
  std::string request_body_;
  // The open streams, in the order of their ids (Find's binary search).
  std::vector<std::unique_ptr<Stream>> streams_;
  std::vector<std::unique_ptr<Stream>> spare_;
  Stream* last_found_ = nullptr;
  std::chrono::steady_clock::time_point idle_since_ = std::chrono::steady_clock::now();
  ResetBudget resets_;
};

}  // namespace chronoq::grpc_api
