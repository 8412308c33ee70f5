#include "http/in_process.h"

#include <memory>
#include <optional>

#include "http/request_parser.h"
#include "http/response_writer.h"

namespace chronoq::http {
namespace {

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

}  // namespace

InProcessResult ServeInProcess(const Router& router, const InProcessOptions& options,
                               std::string_view bytes, const std::function<void()>& settle,
                               int max_settles) {
  InProcessResult out;
  RequestParser parser(RequestLimits{options.max_header_bytes, options.max_body_bytes});
  while (!bytes.empty()) {
    parser.Reset();
    InProcessExchange x;
    RequestParser::Step step;
    for (;;) {
      step = parser.Feed(bytes);
      bytes.remove_prefix(step.consumed);
      if (step.event != RequestParser::Event::kContinue) break;
      x.wire += kContinueAnswer;
    }
    if (step.event == RequestParser::Event::kNeedMore) return out;  // the client went away
    if (step.event == RequestParser::Event::kError) {
      const RequestFailure& failure = parser.failure();
      x.target = failure.path;
      x.response = FailureResponse(failure);
      AppendResponse(x.response, 11, /*keep_alive=*/false, /*head=*/false, &x.wire);
      out.exchanges.push_back(std::move(x));
      return out;
    }

    ParsedRequest& parsed = parser.request();
    x.method = std::string(parsed.request.method);
    x.target = std::string(parsed.request.target);
    x.head = parsed.head;
    auto reply = std::make_shared<std::optional<HttpResponse>>();
    MemoryContext ctx;
    router.Dispatch(parsed.request, ctx,
                    Reply([reply](HttpResponse r) { reply->emplace(std::move(r)); }));
    for (int i = 0; i < max_settles && !reply->has_value(); ++i) settle();
    if (!reply->has_value()) {
      ctx.Leave();
      out.settled = false;
      return out;
    }
    x.response = std::move(**reply);
    x.keep_alive = KeepConnection(parsed.keep_alive, x.response);
    AppendResponse(x.response, parsed.version, x.keep_alive, x.head, &x.wire);
    const bool keep = x.keep_alive;
    out.exchanges.push_back(std::move(x));
    if (!keep) return out;
  }
  return out;
}

}  // namespace chronoq::http
