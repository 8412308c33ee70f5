#include "http/response_writer.h"

#include <charconv>
#include <ctime>

#include "http/codec.h"
#include "http/router.h"

namespace chronoq::http {
namespace {

void AppendNumber(size_t n, std::string* out) {
  char buf[24];
  auto [end, ec] = std::to_chars(buf, buf + sizeof(buf), n);
  out->append(buf, end);
}

}  // namespace

bool KeepConnection(bool request_keep_alive, const HttpResponse& response, bool stopping) {
  return request_keep_alive && !response.close && !stopping;
}

void AppendResponse(const HttpResponse& r, unsigned version, bool keep_alive, bool head,
                    std::string* out) {
  size_t extra = 0;
  for (const auto& [k, v] : r.headers) extra += k.size() + v.size() + 4;
  out->reserve(out->size() + 200 + extra + (head ? 0 : r.body.size()));
  out->append("HTTP/1.1 ");
  AppendNumber(static_cast<size_t>(r.status), out);
  out->push_back(' ');
  out->append(ReasonPhrase(r.status));
  out->append("\r\nServer: chronoq\r\nDate: ");
  out->append(HttpDate());
  out->append("\r\nContent-Type: ");
  out->append(r.content_type);
  // A 304 has no body, and a Content-Length there would have to be the full answer's (RFC 9110
  // section 8.6): it is left out.
  if (r.status != 304) {
    out->append("\r\nContent-Length: ");
    AppendNumber(r.body.size(), out);
  }
  out->append("\r\n");
  for (const auto& [k, v] : r.headers) {
    out->append(k);
    out->append(": ");
    out->append(v);
    out->append("\r\n");
  }
  if (!keep_alive) {
    out->append("Connection: close\r\n");
  } else if (version < 11) {
    out->append("Connection: keep-alive\r\n");
  }
  out->append("\r\n");
  if (!head) out->append(r.body);
}

HttpResponse FailureResponse(const RequestFailure& failure) {
  HttpResponse r = RequestError(failure.status, failure.message, failure.path);
  r.close = true;
  return r;
}

std::string_view HttpDate() {
  thread_local std::time_t cached_at = 0;
  thread_local char buf[64];
  std::time_t now = std::time(nullptr);
  if (now != cached_at) {
    std::tm tm{};
    gmtime_r(&now, &tm);
    std::strftime(buf, sizeof(buf), "%a, %d %b %Y %H:%M:%S GMT", &tm);
    cached_at = now;
  }
  return buf;
}

}  // namespace chronoq::http
