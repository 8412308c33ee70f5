// Router: exact-path dispatch with per-route methods. Unknown path -> HTTP 404; known path, wrong
// method -> HTTP 405 with an Allow header (API.md section 1). Routes are added before serving and
// never change afterwards, so Dispatch is thread-safe.
#pragma once

#include <functional>
#include <string>
#include <unordered_map>
#include <vector>

#include "http/http_types.h"

namespace chronoq::http {

// Handles one request: must call `reply` exactly once, now or later, on any thread.
using Handler = std::function<void(HttpRequest& req, RequestContext& ctx, Reply reply)>;

class Router {
 public:
  // `methods` empty: any method.
  void Add(std::string path, std::vector<std::string> methods, Handler handler);
  void Dispatch(HttpRequest& req, RequestContext& ctx, Reply reply) const;

 private:
  struct Route {
    std::vector<std::string> methods;
    Handler handler;
  };
  // Transparent hashing: lookups by string_view, without a copy of the path.
  struct PathHash {
    using is_transparent = void;
    size_t operator()(std::string_view s) const { return std::hash<std::string_view>{}(s); }
  };
  std::unordered_map<std::string, Route, PathHash, std::equal_to<>> routes_;
};

// An HTTP error response with the standard five-field body.
HttpResponse RequestError(int http_status, std::string_view msg, std::string_view path);

}  // namespace chronoq::http
