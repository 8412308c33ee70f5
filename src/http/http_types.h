// Plain request/response types shared by the server (Beast, in server.cc only), the router and the
// handlers, so that handlers never see Beast types.
#pragma once

#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "auth/access.h"
#include "base/unique_function.h"

namespace chronoq::http {

// The views point into the server's parser buffer: valid until the reply is given.
struct HttpRequest {
  std::string_view method;         // "GET", "POST", ...
  std::string_view target;         // origin-form: path plus optional "?query"
  std::string_view content_type;   // the Content-Type header, or empty
  std::string_view if_none_match;  // the first If-None-Match header, or empty (dashboard assets)
  std::string_view authorization;  // the first Authorization header (has_authorization)
  std::string body;
  bool has_content_type = false;
  bool has_authorization = false;
  // Who sent it: set by the router's authentication (anonymous without tokens). Handlers call the
  // service through a Session of this caller (handlers.h Svc).
  auth::Caller caller{};

  std::string_view path() const { return target.substr(0, target.find('?')); }
  std::string_view query() const {
    size_t q = target.find('?');
    return q == std::string_view::npos ? std::string_view() : target.substr(q + 1);
  }
};

struct HttpResponse {
  int status = 200;
  std::string body;                                          // JSON unless content_type says
  std::string_view content_type = "application/json";        // a static string
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
