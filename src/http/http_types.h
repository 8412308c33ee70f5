// Plain request/response types shared by the server (Beast, in server.cc only), the router and the
// handlers, so that handlers never see Beast types.
#pragma once

#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "base/unique_function.h"

namespace chronoq::http {

struct HttpRequest {
  std::string method;        // "GET", "POST", ...
  std::string target;        // as received: path plus optional "?query"
  std::string content_type;  // the Content-Type header, or empty
  std::string body;
  bool has_content_type = false;

  std::string_view path() const {
    std::string_view t = target;
    return t.substr(0, t.find('?'));
  }
  std::string_view query() const {
    std::string_view t = target;
    size_t q = t.find('?');
    return q == std::string_view::npos ? std::string_view() : t.substr(q + 1);
  }
};

struct HttpResponse {
  int status = 200;
  std::string body;                                          // JSON
  std::vector<std::pair<std::string, std::string>> headers;  // extra headers, e.g. Allow
  bool close = false;  // close the connection after this response
};

using Reply = UniqueFunction<void(HttpResponse)>;

// What a handler may ask of the connection its request came on.
class RequestContext {
 public:
  virtual ~RequestContext() = default;
  // False once the client has closed or reset the connection. Thread-safe; valid until the reply
  // for this request has been given.
  virtual bool PeerAlive() const = 0;
  // Asks to hear (once, on the connection's thread) when the client goes away before the reply is
  // given. Call only while handling the request, before returning.
  virtual void OnPeerGone(UniqueFunction<void()> fn) = 0;
};

}  // namespace chronoq::http
