#include "http/router.h"

#include <fmt/format.h>

#include <algorithm>

#include "http/codec.h"

namespace chronoq::http {

HttpResponse RequestError(int http_status, std::string_view msg, std::string_view path) {
  HttpResponse r;
  r.status = http_status;
  r.body = EncodeRequestError(http_status, msg, path);
  return r;
}

void Router::Add(std::string path, std::vector<std::string> methods, Handler handler) {
  routes_.insert_or_assign(std::move(path), Route{std::move(methods), std::move(handler)});
}

void Router::Dispatch(HttpRequest& req, RequestContext& ctx, Reply reply) const {
  std::string_view path = req.path();
  auto it = routes_.find(path);
  if (it == routes_.end()) {
    reply(RequestError(404, fmt::format("no such endpoint: {}", path), path));
    return;
  }
  const Route& route = it->second;
  if (!route.methods.empty() &&
      std::find(route.methods.begin(), route.methods.end(), req.method) == route.methods.end()) {
    std::string allow = fmt::format("{}", fmt::join(route.methods, ", "));
    HttpResponse r = RequestError(
        405, fmt::format("method {} is not allowed for {}; use {}", req.method, path, allow), path);
    r.headers.emplace_back("Allow", allow);
    reply(std::move(r));
    return;
  }
  route.handler(req, ctx, std::move(reply));
}

}  // namespace chronoq::http
