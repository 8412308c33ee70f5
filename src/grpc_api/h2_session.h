// Internal to src/grpc_api: the nghttp2 engine's (h2_server.h) HTTP/2 session of one connection,
// below its I/O (h2_server.cc): nghttp2's server session and its callbacks, which collect each
// stream's headers and body; a request complete (END_STREAM) is decoded and handed to the service
// (h2_routes.h); the answer is submitted as HEADERS, DATA and trailers. Consume streams are
// h2_consume.h's from their HEADERS on, the standard services' calls h2_stream.h's. Deadlines
// (grpc-timeout): the connection's timer at the earliest (H2Link::ArmDeadline), then
// SweepDeadlines answers DEADLINE_EXCEEDED. Limits: the client's RST_STREAM budget (h2_limits.h).
//
// Names no Asio type; nghttp2's session is only declared.
//
// Thread-safety: none; everything runs on the connection's thread (answers from other threads
// come through H2Host::Run).
#pragma once

#include <sys/types.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "grpc_api/api_context.h"
#include "grpc_api/h2_consume.h"
#include "grpc_api/h2_limits.h"
#include "grpc_api/h2_routes.h"
#include "grpc_api/h2_stream.h"
#include "grpc_api/h2_wire.h"
#include "service/queue_service.h"

struct nghttp2_session;

namespace chronoq::grpc_api {

// What the sessions need of their server (outlives them).
struct H2SessionEnv {
  const ApiContext* api = nullptr;
  H2Services* services = nullptr;  // health, reflection
  int64_t max_request_bytes = 0;
  int rst_stream_burst = 1000;
  int rst_stream_per_second = 33;
};

// The connection under a session: H2Host (its thread, its writes), its deadline timer, and its
// lifetime.
class H2Link : public H2Host {
 public:
  // Writes what the session has to send (nothing while it reads or writes already).
  virtual void Flush() = 0;
  // Whether the caller runs on the connection's thread.
  virtual bool OnThread() const = 0;
  // The session's SweepDeadlines at `t` (or at an earlier time armed already).
  virtual void ArmDeadline(std::chrono::steady_clock::time_point t) = 0;
  // Keeps the connection (and so its session) alive; its weak form.
  virtual std::shared_ptr<void> Hold() = 0;
  virtual std::weak_ptr<void> WeakHold() = 0;

 protected:
  ~H2Link() = default;
};

// The HTTP/2 session of a connection as its I/O (h2_server.cc) drives it: nghttp2's (H2Session)
// or the engine's own framing (grpc-engine=h2, h2_own_session.h).
class H2Framing : public H2Out {
 public:
  virtual ~H2Framing() = default;
  // Queues the server's SETTINGS.
  virtual void Start() = 0;
  virtual bool started() const = 0;
  // The bytes read; false on a protocol error (the connection closes).
  virtual bool Receive(const uint8_t* data, size_t n) = 0;
  // The next bytes to send (0: none; negative: an error, the connection closes).
  virtual ssize_t Send(const uint8_t** data) = 0;
  // Whether the session still wants to read or write (neither: the connection closes).
  virtual bool WantsIo() const = 0;
  // No call open since: the idle timeout's start (a time_point's max while calls are open).
  virtual std::chrono::steady_clock::time_point idle_since() const = 0;
  // Shutdown: GOAWAY announcing it (new streams still served), then GOAWAY with the last stream
  // received; the session ends once the calls in flight are answered.
  virtual void Notice() = 0;
  virtual void GoAway() = 0;
  // Ends the session now: GOAWAY NO_ERROR (idle).
  virtual void Terminate() = 0;
  // The connection closed: parked Pulls cancelled, the streams told.
  virtual void Close() = 0;
  // The streams past their deadline: DEADLINE_EXCEEDED; arms the next.
  virtual void SweepDeadlines() = 0;
  // A standard service's call on stream `id` has something to write (StreamingWake).
  virtual void PumpStreaming(int32_t id) = 0;
};

// The wake of a standard service's call on stream `id` (H2Services::Open): the session's
// PumpStreaming(id), on the connection's thread, while the connection lives.
std::function<void()> StreamingWake(H2Link* link, H2Framing* session, int32_t id);

// The ids of `streams` (unique_ptrs to objects with `id` and `deadline`) past their deadline at
// `now`; `*next` the earliest deadline of the others (max: none).
template <class Streams>
std::vector<int32_t> ExpiredStreams(const Streams& streams,
                                    std::chrono::steady_clock::time_point now,
                                    std::chrono::steady_clock::time_point* next) {
  *next = std::chrono::steady_clock::time_point::max();
  std::vector<int32_t> expired;
  for (const auto& s : streams) {
    if (s->deadline <= now) {
      expired.push_back(s->id);
    } else {
      *next = std::min(*next, s->deadline);
    }
  }
  return expired;
}

class H2Session final : public H2Framing, public H2Answers {
 public:
  H2Session(const H2SessionEnv* env, H2Link* link);
  ~H2Session() override;
  H2Session(const H2Session&) = delete;
  H2Session& operator=(const H2Session&) = delete;

  // Creates nghttp2's session and queues its SETTINGS.
  void Start() override;
  bool started() const override { return session_ != nullptr; }

  // The bytes read; false on a protocol error (the connection closes).
  bool Receive(const uint8_t* data, size_t n) override;
  // The next bytes to send (0: none; negative: an error, the connection closes).
  ssize_t Send(const uint8_t** data) override;
  // Whether nghttp2 still wants to read or write (neither: the connection closes).
  bool WantsIo() const override;

  // No call open since: the idle timeout's start (a time_point's max while calls are open).
  std::chrono::steady_clock::time_point idle_since() const override {
    return streams_.empty() ? idle_since_ : std::chrono::steady_clock::time_point::max();
  }
  // Shutdown: GOAWAY announcing it (new streams still served), then GOAWAY with the last stream
  // received; the session ends once the calls in flight are answered.
  void Notice() override;
  void GoAway() override;
  // Ends the session now: GOAWAY NO_ERROR (idle).
  void Terminate() override;
  // The connection closed: parked Pulls cancelled, the streams told.
  void Close() override;
  // The streams past their deadline: DEADLINE_EXCEEDED; arms the next.
  void SweepDeadlines() override;
  void PumpStreaming(int32_t id) override;

  // H2Out, over nghttp2's data providers and window calls.
  void SubmitResponse(int32_t id, H2Producer* producer) override;
  int SubmitStatus(int32_t id, int code, std::string_view message, bool trailers) override;
  void ResumeData(int32_t id) override;
  void ConsumeStream(int32_t id, size_t n) override;
  void ConsumeConnection(size_t n) override;

 private:
  friend struct H2SessionCallbacks;  // h2_session.cc: nghttp2's callbacks
  // One HTTP/2 stream: a call.
  struct Stream {
    int32_t id = 0;
    size_t slot = 0;  // its index in streams_
    std::string path;
    std::optional<std::string> authorization;
    // grpc-timeout: when the client gives up (max: never).
    std::chrono::steady_clock::time_point deadline = std::chrono::steady_clock::time_point::max();
    std::string body;                    // the request's bytes (gRPC frames)
    std::shared_ptr<H2Consume> consume;  // a Consume call
    // A call of the standard services (health, reflection): its own deframing and writing.
    std::shared_ptr<H2StreamState> streaming;
    // A parked Pull, cancelled when the stream closes first; `gone` tells its long poll.
    service::LongPollTicket ticket;
    std::shared_ptr<std::atomic<bool>> gone;
    GrpcRequestCheck check;  // its header block's rules (h2_wire.h)
    bool refused = false;    // answered before its end (too large, deadline passed, not gRPC's)
    bool answered = false;   // its status is submitted
    // The answer's message, serialized into its DATA frame when nghttp2 asks for it (else
    // into `out` when the frame cannot hold it whole).
    ResponsePtr response;
    size_t response_bytes = 0;  // response->ByteSizeLong()
    std::string out;            // the answer's DATA
    size_t out_pos = 0;

    // Back to a new stream's state, for the next call (keeping the buffers' capacity).
    void Clear();
  };

  Stream* StreamOf(int32_t id) const;
  // The stream of a new call `id`, among the open ones: a closed one's again (its buffers
  // allocated already), or a new one.
  Stream* Open(int32_t id);
  // Takes `s` out of the open streams.
  std::unique_ptr<Stream> Remove(Stream* s);
  // A closed stream, kept for the next call while only a few are.
  void Recycle(std::unique_ptr<Stream> s);
  // The answer of stream `id`, from any thread.
  void Complete(int32_t id, H2Answer a) override;
  void Submit(int32_t id, H2Answer a);
  void Refuse(int32_t id, Stream* s, int code, std::string message) {
    s->refused = true;
    Submit(id, H2Answer{code, std::move(message), {}});
  }
  // A request's header block complete: whether it is a gRPC request to serve; if not, the
  // stream is refused (RST_STREAM PROTOCOL_ERROR when malformed, else HTTP 405 or 415).
  bool Admit(int32_t id, Stream* s);
  // A malformed request (RFC 9113 section 8.1.1, `what` for the log): RST_STREAM PROTOCOL_ERROR.
  void ResetMalformed(int32_t id, Stream* s, std::string_view what);
  // A request complete: its one message to the method of its path.
  void Dispatch(int32_t id, Stream* s);
  void OpenConsume(int32_t id, Stream* s);
  // Standard services: opens the call at its HEADERS; true when the stream is such a call.
  bool OpenStreaming(int32_t id, Stream* s);
  void CancelParked(Stream& s);

  const H2SessionEnv* const env_;
  H2Link* const link_;
  nghttp2_session* session_ = nullptr;
  bool closed_ = false;
  // The open streams, in no order (each knows its slot; nghttp2's stream user data points to
  // them, and finds them by id; nghttp2_session_del does not report the streams it drops).
  std::vector<std::unique_ptr<Stream>> streams_;
  std::vector<std::unique_ptr<Stream>> spare_;  // closed, for the next calls
  // The stream whose request headers are being received (OnBeginHeaders to its last header).
  int32_t receiving_id_ = 0;
  Stream* receiving_ = nullptr;
  std::chrono::steady_clock::time_point idle_since_ = std::chrono::steady_clock::now();
  ResetBudget resets_;
};

}  // namespace chronoq::grpc_api
