// GrpcReceiver: a real gRPC server of the library the gRPC transport uses, on 127.0.0.1 (an
// ephemeral port), serving ANY method through a generic callback service (no generated code): it
// records each call (method, request bytes, client metadata), then answers OK with the request
// bytes reversed, or fails with a given status, or never answers until the caller gives up. For
// the push tests (unit and integration). Started by its constructor, stopped by its destructor.
//
// Thread-safety: every method may be called from any thread.
#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace chronoq::push::testing {

struct GrpcRequest {
  std::string method;  // "/pkg.Service/Method"
  std::string bytes;   // the request message as sent
  std::multimap<std::string, std::string> metadata;
  // The first value of metadata `key` (lower case); "<absent>" when there is none.
  std::string Metadata(std::string_view key) const;
};

class GrpcReceiver {
 public:
  enum class Mode {
    kAnswer,  // OK, with the request bytes reversed as the answer
    kFail,    // the status `fail_code` with `fail_message`
    kHang,    // no answer; the call ends when the client cancels it (its deadline)
  };
  struct Options {
    Mode mode = Mode::kAnswer;
    int fail_code = 14;  // a grpc::StatusCode (14: UNAVAILABLE)
    std::string fail_message = "down for maintenance";
  };

  explicit GrpcReceiver(Options options);
  GrpcReceiver() : GrpcReceiver(Options{}) {}
  ~GrpcReceiver();
  GrpcReceiver(const GrpcReceiver&) = delete;
  GrpcReceiver& operator=(const GrpcReceiver&) = delete;

  uint16_t port() const;
  // "127.0.0.1:<port>": a callback's target and the Pusher's target key.
  std::string Target() const;

  std::vector<GrpcRequest> Requests() const;
  size_t RequestCount() const;
  // Waits until RequestCount() >= n or `bound` has passed; returns whether it got there.
  bool WaitForRequests(size_t n, std::chrono::milliseconds bound) const;

  struct Impl;

 private:
  std::unique_ptr<Impl> impl_;
};

}  // namespace chronoq::push::testing
