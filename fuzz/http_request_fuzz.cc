// Fuzz target: the HTTP request path in process (http/in_process.h): arbitrary bytes, as one
// client connection would send them, are parsed as HTTP/1.1 requests and answered by the real
// router and handlers over the embedded engine on an in-memory store, with a manual clock (the
// test-clock routes are on, so inputs can move time). Invariants: no crash or sanitizer report;
// every complete request is answered (parked long polls are settled by moving the clock); every
// answer has a known HTTP status, header fields that cannot break the framing, and a body that
// is a valid JSON object (UTF-8) with an integer "code" (except the Prometheus text of /metrics).
#include <boost/json.hpp>
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "base/clock.h"
#include "base/log.h"
#include "base/scheduler.h"
#include "engine/engine.h"
#include "fuzz/fuzz_check.h"
#include "fuzz/fuzz_world.h"
#include "http/handlers.h"
#include "http/in_process.h"
#include "metrics/registry.h"
#include "service/queue_service.h"
#include "storage/memory/mem_kv.h"
#include "storage/message_store.h"

namespace {

using namespace chronoq;  // NOLINT: a fuzz target's few lines

bool ValidHeaderName(std::string_view s) {
  if (s.empty()) return false;
  for (char c : s) {
    bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
              c == '-' || c == '_';
    if (!ok) return false;
  }
  return true;
}

bool ValidHeaderValue(std::string_view s) {
  for (char c : s) {
    if (c == '\r' || c == '\n' || c == '\0') return false;
  }
  return true;
}

void CheckExchange(const http::InProcessExchange& x) {
  const http::HttpResponse& r = x.response;
  // Request errors (API.md section 1); 500 only from the health status of a node set offline.
  static constexpr int kErrors[] = {400, 404, 405, 413, 431};
  bool request_error =
      std::find(std::begin(kErrors), std::end(kErrors), r.status) != std::end(kErrors);
  bool offline = r.status == 500 && x.target.starts_with("/camellia/health/status");
  FUZZ_CHECK(r.status == 200 || request_error || offline);
  for (const auto& [k, v] : r.headers) {
    FUZZ_CHECK(ValidHeaderName(k));
    FUZZ_CHECK(ValidHeaderValue(v));
  }
  if (r.status == 200 && x.target.starts_with("/metrics")) return;  // Prometheus text, not JSON
  boost::system::error_code ec;
  boost::json::value body = boost::json::parse(r.body, ec);  // rejects invalid UTF-8
  if (ec) std::fprintf(stderr, "body: %s\n", r.body.c_str());
  FUZZ_CHECK(!ec);
  FUZZ_CHECK(body.is_object());
  const boost::json::value* code = body.as_object().if_contains("code");
  FUZZ_CHECK(code != nullptr && code->is_int64());
  if (request_error) {
    const boost::json::value* status = body.as_object().if_contains("status");
    FUZZ_CHECK(status != nullptr && status->is_int64() && status->as_int64() == r.status);
  }
}

// One server's worth of state, fresh for every input so that a crash reproduces from its input.
struct World : fuzz::ServiceWorld {
  metrics::Registry registry;  // empty: /metrics shows only the queue's families
  http::HandlerContext ctx;
  http::Router router;

  World() {
    ctx.service = service.get();
    ctx.registry = &registry;
    http::RegisterRoutes(router, &ctx);
    http::RegisterTestRoutes(router, &scheduler, &clock, service.get());
  }
};

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  base::InitLogging(base::LogLevel::kOff, false);
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  World w;
  http::InProcessOptions o;
  o.max_header_bytes = 2048;  // small limits, so that inputs reach 413 and 431
  o.max_body_bytes = 4096;
  std::string_view bytes(reinterpret_cast<const char*>(data), size);
  http::InProcessResult res =
      http::ServeInProcess(w.router, o, bytes, [&w] { w.scheduler.Advance(Millis(121'000)); });
  FUZZ_CHECK(res.settled);
  for (const http::InProcessExchange& x : res.exchanges) CheckExchange(x);
  return 0;
}
