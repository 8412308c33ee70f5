#include "http/in_process.h"

#include <fmt/format.h>

#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <memory>
#include <optional>

#include "http/codec.h"
#include "http/target.h"

namespace chronoq::http {
namespace {

namespace beast = boost::beast;
namespace bhttp = beast::http;

// Never gone: the bytes are all there.
class MemoryContext final : public RequestContext {
 public:
  bool PeerAlive() const override { return true; }
  void OnPeerGone(UniqueFunction<void()> fn) override { on_gone_ = std::move(fn); }
  // The client leaves before its answer (as when a connection closes during a long poll).
  void Leave() {
    if (UniqueFunction<void()> fn = std::move(on_gone_)) fn();
  }

 private:
  UniqueFunction<void()> on_gone_;
};

bool IsParseError(const beast::error_code& ec) {
  return ec != bhttp::error::need_more && ec != bhttp::error::partial_message &&
         ec != bhttp::error::end_of_stream && ec != bhttp::error::need_buffer;
}

InProcessExchange ErrorExchange(int status, std::string msg, const std::string& target) {
  InProcessExchange x;
  x.target = target;
  std::string_view path = std::string_view(target).substr(0, target.find('?'));
  x.response = RequestError(status, msg, path);
  x.response.close = true;
  return x;
}

std::string BodyLimitMsg(const InProcessOptions& o) {
  return fmt::format("request body is larger than {} bytes (max-body-bytes)", o.max_body_bytes);
}

}  // namespace

InProcessResult ServeInProcess(const Router& router, const InProcessOptions& options,
                               std::string_view bytes, const std::function<void()>& settle,
                               int max_settles) {
  InProcessResult out;
  while (!bytes.empty()) {
    bhttp::request_parser<bhttp::string_body> parser;
    parser.header_limit(static_cast<std::uint32_t>(options.max_header_bytes));
    parser.body_limit(boost::none);
    beast::error_code ec;
    size_t used = parser.put(boost::asio::buffer(bytes.data(), bytes.size()), ec);
    bytes.remove_prefix(used);
    std::string storage;
    std::string target(OriginForm(parser.get().target(), &storage));
    if (ec == bhttp::error::header_limit) {
      out.exchanges.push_back(
          ErrorExchange(431,
                        fmt::format("request headers are larger than {} bytes (max-header-bytes)",
                                    options.max_header_bytes),
                        target));
      return out;
    }
    if (ec) {
      if (IsParseError(ec)) {
        out.exchanges.push_back(
            ErrorExchange(400, fmt::format("malformed HTTP request: {}", ec.message()), target));
      }
      return out;  // need_more: an incomplete request, and the client went away
    }
    if (parser.content_length() && *parser.content_length() > options.max_body_bytes) {
      out.exchanges.push_back(ErrorExchange(413, BodyLimitMsg(options), target));
      return out;
    }
    parser.body_limit(options.max_body_bytes);
    parser.eager(true);
    while (!parser.is_done()) {
      used = parser.put(boost::asio::buffer(bytes.data(), bytes.size()), ec);
      bytes.remove_prefix(used);
      if (ec == bhttp::error::body_limit) {
        out.exchanges.push_back(ErrorExchange(413, BodyLimitMsg(options), target));
        return out;
      }
      if (ec && IsParseError(ec)) {
        out.exchanges.push_back(
            ErrorExchange(400, fmt::format("malformed HTTP request: {}", ec.message()), target));
        return out;
      }
      if (ec || used == 0) return out;  // the body is incomplete
    }

    auto& msg = parser.get();
    InProcessExchange x;
    x.method = std::string(msg.method_string());
    x.target = target;
    x.head = msg.method() == bhttp::verb::head;
    HttpRequest req;
    req.method = x.method;
    req.target = x.target;
    auto ct = msg.find(bhttp::field::content_type);
    req.has_content_type = ct != msg.end();
    if (req.has_content_type) req.content_type = ct->value();
    req.body = std::move(msg.body());

    auto reply = std::make_shared<std::optional<HttpResponse>>();
    MemoryContext ctx;
    router.Dispatch(req, ctx, Reply([reply](HttpResponse r) { reply->emplace(std::move(r)); }));
    for (int i = 0; i < max_settles && !reply->has_value(); ++i) settle();
    if (!reply->has_value()) {
      ctx.Leave();
      out.settled = false;
      return out;
    }
    x.response = std::move(**reply);
    x.keep_alive = msg.keep_alive() && !x.response.close;
    bool keep = x.keep_alive;
    out.exchanges.push_back(std::move(x));
    if (!keep) return out;
  }
  return out;
}

}  // namespace chronoq::http
