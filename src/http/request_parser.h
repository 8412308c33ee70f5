// RequestParser: reads HTTP/1.1 requests from a connection's bytes, without I/O. The server
// (server.cc) and ServeInProcess (in_process.h, the fuzz target's path) both read requests with
// it, so every rule about what a request may be lives here once: the header limit (431), the body
// limit from Content-Length and while reading a chunked body (413), the framing RFC 9112 makes a
// server reject (400), Beast's parse errors (400), absolute-form targets, Expect: 100-continue.
//
// Operation: the caller keeps the connection's unread bytes and calls Feed() with all of them;
// Feed() says how many it consumed (the caller drops those, and keeps the rest, e.g. pipelined
// requests, for the next call) and what happened:
//   kNeedMore   read more bytes, append them, and call again with every byte not consumed;
//   kContinue   the header is complete and the client waits for `100 Continue` before sending
//               the body (said once per request): send it, then call again;
//   kRequest    a complete request, in request() until Reset();
//   kError      the request cannot be served: answer failure() (response_writer.h
//               FailureResponse) and close the connection.
// After kRequest, Reset() readies the parser for the next request on the connection; it keeps
// its buffers, so a connection's requests cost no allocation here once the first is read.
//
// The outcome depends on the bytes only, not on how they were split between calls: until the
// header is decided, each attempt parses every byte from the request's start at once (Beast's
// own incremental header parsing waits for the end of the header once it has seen part of it,
// so a header over the limit would be reported without its path, and a syntax error in it as
// a 431). Attempts are made when the bytes held have doubled, when the end of the header
// (CRLF CRLF) arrives, and when they reach the header limit, so that trickled bytes cost linear
// time. The limit applies as Beast applies it: to the request line and to the header fields
// (each at most max_header_bytes).
//
// The common request (GET or POST of HTTP/1.1 with an origin-form target, plain header fields,
// one Host, at most one Content-Length) is read by a parser of a strict subset of the syntax
// Beast reads, with the same result, however its bytes are split: a header not all there yet
// waits for the next attempt as Beast's would, and a body not all there yet is taken as it
// comes. Every other request, and any byte that parser does not know, goes to Beast, which reads
// the request from its first byte, so refusals and their answers are Beast's
// (fuzz/http_fast_path_fuzz.cc compares the two readings).
//
// Thread-safety: none; one connection's thread uses it.
#pragma once

#include <cstddef>
#include <memory>
#include <string>
#include <string_view>

#include "http/http_types.h"

namespace chronoq::http {

struct RequestLimits {
  size_t max_header_bytes = 16 * 1024;  // larger request line or header fields: HTTP 431
  size_t max_body_bytes = 8 << 20;      // larger bodies: HTTP 413
  // Read the common request without Beast (request_parser.cc "The fast path"); off only where
  // a test or the fuzz target compares the two readings.
  bool fast_path = true;
};

// A request that cannot be served; the connection closes after the answer.
struct RequestFailure {
  int status = 400;     // 400 malformed, 413 body too large, 431 header too large
  std::string message;  // the error body's `msg`, e.g. "malformed HTTP request: bad method"
  std::string path;     // the target's path (origin-form, no query) once the request line was
                        // read, else empty
};

// A complete request. The views of `request` point into the parser: valid until Reset().
struct ParsedRequest {
  HttpRequest request;     // the target in origin-form
  unsigned version = 11;   // 10 (HTTP/1.0) or 11
  bool keep_alive = true;  // what the client asked for: HTTP/1.1 without `Connection: close`,
                           // HTTP/1.0 with `Connection: keep-alive`
  bool head = false;       // a HEAD request: its answer carries no body
  bool fast_path = false;  // read by the fast path (request_parser.cc), not by Beast: for tests
                           // that the common request takes it
};

class RequestParser {
 public:
  enum class Event { kNeedMore, kContinue, kRequest, kError };
  struct Step {
    Event event = Event::kNeedMore;
    size_t consumed = 0;  // bytes of the front of Feed()'s argument that are used up
  };

  explicit RequestParser(RequestLimits limits);
  ~RequestParser();
  RequestParser(const RequestParser&) = delete;
  RequestParser& operator=(const RequestParser&) = delete;

  // Parses the front of `bytes`: every byte of the connection not consumed by earlier calls for
  // this request, in order (what arrived since the last call appended).
  // REQUIRES: the last event was kNeedMore or kContinue, or Reset() came after it.
  Step Feed(std::string_view bytes);

  // Whether the current request's header is complete (a kNeedMore then waits for the body).
  bool header_done() const;

  // REQUIRES: the last event was kRequest. The handler may take the body.
  ParsedRequest& request();
  // REQUIRES: the last event was kError.
  const RequestFailure& failure() const;

  // Readies the parser for the next request on the same connection. Cheap; keeps the buffers
  // (a body buffer grown past 64 KiB is released).
  void Reset();

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace chronoq::http
