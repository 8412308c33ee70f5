// Consume on the nghttp2 engine (h2_server.h): one HTTP/2 stream as the ConsumeTransport of the
// engine-neutral stream (consume_stream.h, where every rule of Consume is).
//
// Flow control (docs/grpc.md): the server writes through a data provider that is deferred while
// the stream has nothing to write and resumed when a message is queued, so the client's window
// limits what is written, and the stream's credit what is taken from the store (one message in
// flight to nghttp2, the rest waiting in the stream). The receive side is paced: the connection
// runs without automatic WINDOW_UPDATEs, and a Consume stream's DATA is consumed (its window given
// back) only while no complete request waits to be handled, so a client flooding acks is held by
// its window and then by TCP.
//
// Threads: every method here runs on the connection's thread; the stream calls the transport
// from any thread, and those calls are run on the connection's thread (H2Host::Run).
#pragma once

#include <sys/types.h>

#include <chrono>
#include <cstdint>
#include <deque>
#include <memory>
#include <optional>
#include <string>
#include <utility>

#include "base/unique_function.h"
#include "grpc_api/api_context.h"
#include "grpc_api/consume_stream.h"
#include "grpc_api/h2_wire.h"

namespace chronoq::grpc_api {

// The connection a stream lives on (h2_server.cc's Conn).
class H2Host {
 public:
  // The connection's HTTP/2 session, for a stream's answer.
  virtual H2Out* out() = 0;
  // Runs `fn` on the connection's thread: at once when called there, else posted (what nghttp2
  // has to send is written after it).
  virtual void Run(UniqueFunction<void()> fn) = 0;
  // Runs `fn` on the connection's thread later (never inline), then writes.
  virtual void Post(UniqueFunction<void()> fn) = 0;
  // From nghttp2's callbacks while it produces what to send: runs `fn` once it is done, before
  // the write, which takes what `fn` submits too.
  virtual void AfterSend(UniqueFunction<void()> fn) = 0;

 protected:
  ~H2Host() = default;
};

class H2Consume final : public ConsumeTransport,
                        public H2Producer,
                        public std::enable_shared_from_this<H2Consume> {
 public:
  // Opens the Consume call of stream `id` on `host` (`hold` keeps the host alive until the call
  // is finished): its caller's `authorization`, its client's `deadline` (system clock; max:
  // none), requests larger than `max_request_bytes` refused.
  static std::shared_ptr<H2Consume> Open(H2Host* host, std::shared_ptr<void> hold,
                                         const ApiContext* api, int32_t id,
                                         std::optional<std::string> authorization,
                                         std::chrono::system_clock::time_point deadline,
                                         int64_t max_request_bytes);
  H2Consume(H2Host* host, std::shared_ptr<void> hold, int32_t id, int64_t max_request_bytes);

  // The connection's reports (on its thread).
  void OnData(const uint8_t* data, size_t len);  // the stream's DATA
  void OnRemoteEnd();                            // END_STREAM: the client sends no more
  void OnClose();                                // reset, or the connection closed
  void OnDeadline();                             // the client's deadline passed
  // The data provider's read (nghttp2_data_source_read_callback's work).
  ssize_t Produce(uint8_t* buf, size_t length, uint32_t* data_flags) override;

  // ConsumeTransport.
  void SendMetadata() override;
  void ReadRequest(v1::ConsumeRequest* req) override;
  void WriteResponse(const v1::ConsumeResponse* resp) override;
  void FinishCall(int code, std::string message) override;

 private:
  void DoSendMetadata();
  void DoRead(v1::ConsumeRequest* req);
  void DoWrite(std::string frame);
  void DoFinish(int code, std::string message);
  // The requests complete in in_ to pending_; refuses one too large or compressed.
  void Deframe();
  // Hands the first pending request to the read in flight.
  void Deliver();
  // Gives back the window of what was received and waits for no handling.
  void GiveBackWindow();
  void Resume();

  H2Host* const host_;
  std::shared_ptr<void> hold_;       // the host, until the call is finished
  std::shared_ptr<H2Consume> self_;  // this, until the call is finished
  std::shared_ptr<ConsumeStream> stream_;
  const int32_t id_;
  const int64_t max_request_bytes_;
  // Receiving: the bytes of the request being read, the complete ones not yet handed over, the
  // bytes received and not yet given back to the client's window.
  GrpcDeframer in_;
  std::deque<std::string> pending_;
  size_t unconsumed_ = 0;
  v1::ConsumeRequest* read_into_ = nullptr;  // the read in flight
  bool remote_ended_ = false;
  bool refused_ = false;  // a request too large or compressed: the rest is dropped
  // Sending.
  bool headers_sent_ = false;
  bool deferred_ = false;  // the data provider waits for a message or the status
  std::string out_;        // the message being written
  size_t out_pos_ = 0;
  bool writing_ = false;                               // a WriteResponse not yet answered
  std::optional<std::pair<int, std::string>> status_;  // the trailers to send after out_
  bool finished_ = false;                              // FinishCall ran
  bool closed_ = false;                                // the HTTP/2 stream is gone
};

}  // namespace chronoq::grpc_api
