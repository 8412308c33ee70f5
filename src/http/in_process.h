// ServeInProcess: the server's request path without sockets, for fuzzing and tests. Bytes that
// one client connection would send are read with the server's own RequestParser (request_parser.h:
// limits, framing checks, error answers, absolute-form targets, 100-continue), each complete
// request is dispatched to the Router, and the answers come back in order with the bytes the
// server would write for them (response_writer.h, the same keep-alive decision). What stays in
// server.cc is only the sockets: reading, writing, timeouts, connection limits.
#pragma once

#include <cstddef>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "http/router.h"

namespace chronoq::http {

struct InProcessOptions {
  size_t max_header_bytes = 16 * 1024;  // as ServerOptions
  size_t max_body_bytes = 8 << 20;
};

struct InProcessExchange {
  std::string method;  // empty when the request could not be read
  std::string target;  // origin-form; for a request that could not be read, its path (or empty)
  HttpResponse response;
  bool head = false;        // a HEAD request: the server would send no body
  bool keep_alive = false;  // the connection stays open after this answer
  // The bytes the server writes for this exchange: `100 Continue` when the client waited for
  // it, then the answer (whose Date header is the time of the call).
  std::string wire;
};

// Answers every request in `bytes` until the connection would close (an error, a request without
// keep-alive, or a response asking to close) or the bytes end (an incomplete last request gets no
// answer, as on a connection closed by the client). A handler that has not replied when Dispatch
// returns (a parked long poll) is given `settle` calls, at most `max_settles`, to make it reply,
// e.g. by moving a manual clock; a request still unanswered after them ends the exchange with
// `settled` false in the result.
struct InProcessResult {
  std::vector<InProcessExchange> exchanges;
  bool settled = true;
};
InProcessResult ServeInProcess(const Router& router, const InProcessOptions& options,
                               std::string_view bytes, const std::function<void()>& settle,
                               int max_settles = 4);

}  // namespace chronoq::http
