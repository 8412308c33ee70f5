// The bytes of an HTTP/1.1 answer, shared by the server (server.cc) and ServeInProcess
// (in_process.h) so that both answer the same request with the same bytes and keep or close the
// connection alike. Pure functions (HttpDate caches per thread); no I/O.
#pragma once

#include <string>
#include <string_view>

#include "http/http_types.h"
#include "http/request_parser.h"

namespace chronoq::http {

// The interim answer to `Expect: 100-continue` (RequestParser::Event::kContinue).
inline constexpr std::string_view kContinueAnswer = "HTTP/1.1 100 Continue\r\n\r\n";

// Whether the connection stays open after `response` answers a request: the client asked for it
// (ParsedRequest::keep_alive), the response does not close it, and the server is not stopping.
bool KeepConnection(bool request_keep_alive, const HttpResponse& response, bool stopping = false);

// Appends the answer to *out: status line, Server, Date, Content-Type, Content-Length, the
// response's own headers, `Connection: close` when the connection closes after it (or
// `Connection: keep-alive` to an HTTP/1.0 client, `version` 10, that keeps it), then the body,
// which the answer to a HEAD request (`head`) leaves out: it carries the headers of the GET
// answer only (RFC 9110 section 9.3.2), and a body would corrupt the framing of the connection.
void AppendResponse(const HttpResponse& response, unsigned version, bool keep_alive, bool head,
                    std::string* out);

// The answer to a request the parser rejected (400, 413 or 431 with the request-error body of
// API.md section 2); the connection closes after it.
HttpResponse FailureResponse(const RequestFailure& failure);

// "Sat, 21 Nov 2026 19:44:01 GMT": now, recomputed at most once a second per thread. The view is
// valid until this thread's next call.
std::string_view HttpDate();

}  // namespace chronoq::http
