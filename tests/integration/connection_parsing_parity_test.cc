// The server and ServeInProcess (the fuzz target's path, http/in_process.h) read requests alike:
// a table of raw byte strings (good requests, malformed ones, limits, pipelining, a missing Host,
// Transfer-Encoding problems, absolute-form targets, 100-continue, HEAD, HTTP/1.0) goes both to the
// real binary over a socket and through ServeInProcess with the server's handlers over the same
// kind of backend built from the same flags, and what comes back must be byte for byte the same
// (but for the Date header). Both read with http/request_parser.h and write with
// http/response_writer.h; this test fails when either path stops doing so.
//
// Each row is sent on a new connection, whose sending side is then closed, and the server's
// bytes are read until it closes the connection. The rows share one queue on each side, in the
// same order, on test clocks that show the same time and never move.
#include <fmt/format.h>

#include "base/clock.h"
#include "base/scheduler.h"
#include "config/config.h"
#include "engine/engine.h"
#include "http/handlers.h"
#include "http/in_process.h"
#include "metrics/registry.h"
#include "service/queue_service.h"
#include "storage/memory/mem_kv.h"
#include "storage/message_store.h"
#include "tests/integration/it_util.h"

namespace chronoq::it {
namespace {

using namespace std::chrono_literals;

// The server's flags; ServeInProcess gets the same settings. Small limits keep the rows short.
const std::vector<std::string> kFlags = {"--storage=memory", "--test-clock", "--log-level=warn",
                                         "--max-header-bytes=1024", "--max-body-bytes=256"};

// What `chronoq serve kFlags` builds (app/serve.cc), in process, with its clock at `now_ms`.
class InProcessServer {
 public:
  InProcessServer(const config::ServerConfig& cfg, int64_t now_ms)
      : clock_(FromEpochMs(now_ms)), scheduler_(&clock_), store_(&kv_, cfg.ns) {
    engine::EngineOptions eo;
    eo.retention = Millis(cfg.end_life_msg_expire_millis);
    eo.topic_inactive = Millis(cfg.topic_inactive_millis);
    eo.memory_horizon = Millis(cfg.memory_horizon_millis);
    engine_ = std::make_unique<engine::Engine>(eo, &store_, &clock_, &scheduler_);
    EXPECT_TRUE(engine_->Recover().ok());
    service::ServiceOptions so;
    so.limits = config::ToLimits(cfg);
    so.defaults = config::ToDefaults(cfg);
    so.monitor_interval = std::chrono::seconds(cfg.monitor_interval_seconds);
    so.metrics_max_topics = static_cast<size_t>(cfg.metrics_max_topics);
    service_ = std::make_unique<service::QueueService>(engine_.get(), &clock_, &scheduler_, so);
    ctx_.service = service_.get();
    ctx_.registry = &registry_;
    http::RegisterRoutes(router_, &ctx_);
    http::RegisterTestRoutes(router_, &scheduler_, &clock_, service_.get());
    options_.max_header_bytes = static_cast<size_t>(cfg.max_header_bytes);
    options_.max_body_bytes = static_cast<size_t>(cfg.max_body_bytes);
  }
  ~InProcessServer() {
    service_.reset();
    engine_.reset();
  }

  // The bytes the server would write on a connection that sends `bytes` and closes.
  std::string Serve(std::string_view bytes) {
    http::InProcessResult res = http::ServeInProcess(router_, options_, bytes, [] {});
    EXPECT_TRUE(res.settled);
    std::string wire;
    for (const http::InProcessExchange& x : res.exchanges) wire += x.wire;
    return wire;
  }

 private:
  base::ManualClock clock_;
  base::ManualScheduler scheduler_;
  metrics::Registry registry_;
  storage::MemKv kv_;
  storage::MessageStore store_;
  std::unique_ptr<engine::Engine> engine_;
  std::unique_ptr<service::QueueService> service_;
  http::HandlerContext ctx_;
  http::Router router_;
  http::InProcessOptions options_;
};

// Each Date header's value replaced by "*".
std::string WithoutDates(std::string wire) {
  for (size_t at = wire.find("\r\nDate: "); at != std::string::npos;
       at = wire.find("\r\nDate: ", at + 1)) {
    size_t start = at + 8;
    wire.replace(start, wire.find("\r\n", start) - start, "*");
  }
  return wire;
}

// The status codes in `wire`, in order ("100 200 404").
std::string Statuses(const std::string& wire) {
  std::string out;
  for (size_t at = wire.find("HTTP/1.1 "); at != std::string::npos;
       at = wire.find("HTTP/1.1 ", at + 1)) {
    if (at != 0 && wire.compare(at - 2, 2, "\r\n") != 0 && wire.compare(at - 1, 1, "}") != 0) {
      continue;  // not at the start of an answer
    }
    out += (out.empty() ? "" : " ") + wire.substr(at + 9, 3);
  }
  return out;
}

struct Row {
  std::string what;
  std::string bytes;
  std::string statuses;  // the answers expected, in order
};

std::vector<Row> Rows() {
  const std::string q(testutil::kQueuePath);
  const std::string ct = "Content-Type: application/x-www-form-urlencoded\r\n";
  auto post = [&](const std::string& op, const std::string& body, const std::string& head = "") {
    return "POST " + q + op + " HTTP/1.1\r\nHost: x\r\n" + ct + head +
           "Content-Length: " + std::to_string(body.size()) + "\r\n\r\n" + body;
  };
  auto send = [&](const std::string& id) {
    return post("sendMsg", "topic=parity&msgId=" + id + "&msg=m-" + id + "&delayMillis=0");
  };
  const std::string health = "GET /camellia/health/check HTTP/1.1\r\nHost: x\r\n\r\n";
  const std::string chunked_head =
      "POST " + q + "sendMsg HTTP/1.1\r\nHost: x\r\n" + ct + "Transfer-Encoding: chunked\r\n\r\n";
  auto chunk = [](const std::string& data) {
    return fmt::format("{:x}\r\n{}\r\n", data.size(), data);
  };
  const std::string big(1100, 'a');  // over max-header-bytes
  std::string incomplete_body = post("sendMsg", "topic=parity");
  incomplete_body.resize(incomplete_body.size() - 3);
  return {
      {"health check", health, "200"},
      {"sendMsg", send("a"), "200"},
      {"pipelined",
       send("b") + post("getMsg", "topic=parity&msgId=b") + health + "GET " + q +
           "getTopicInfo?topic=parity HTTP/1.1\r\nHost: x\r\n\r\n",
       "200 200 200 200"},
      {"pullMsg", post("pullMsg", "topic=parity&batch=1"), "200"},
      {"HEAD", "HEAD /camellia/health/check HTTP/1.1\r\nHost: x\r\n\r\n" + health, "200 200"},
      {"HTTP/1.0", "GET /camellia/health/check HTTP/1.0\r\n\r\n" + health, "200"},
      {"HTTP/1.0 keep-alive",
       "GET /camellia/health/check HTTP/1.0\r\nConnection: keep-alive\r\n\r\n" + health, "200 200"},
      {"Connection: close",
       "GET /camellia/health/check HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n" + health,
       "200"},
      {"absolute-form",
       "GET http://h:1/camellia/health/check HTTP/1.1\r\nHost: x\r\n\r\n"
       "GET HTTPS://h?x=1 HTTP/1.1\r\nHost: x\r\n\r\n",
       "200 404"},
      {"100-continue", post("getMsg", "topic=parity&msgId=a", "Expect: 100-continue\r\n"),
       "100 200"},
      {"chunked",
       chunked_head + chunk("topic=parit") + chunk("y&msgId=c&msg=m&delayMillis=0") + "0\r\n\r\n",
       "200"},
      {"unknown path", "GET /nope?x=1 HTTP/1.1\r\nHost: x\r\n\r\n" + health, "404 200"},
      {"wrong method", "GET " + q + "sendMsg HTTP/1.1\r\nHost: x\r\n\r\n" + health, "405 200"},
      {"missing parameter", post("sendMsg", "msg=m") + health, "400 200"},
      {"garbage", "GARBAGE\r\n\r\n", "400"},
      {"HTTP/2.0", "GET / HTTP/2.0\r\nHost: x\r\n\r\n", "400"},
      {"bad header line", "GET /camellia/health/check HTTP/1.1\r\nHost: x\r\nBogus\r\n\r\n", "400"},
      {"HTTP/1.1 without Host", "GET /camellia/health/check HTTP/1.1\r\n\r\n", "400"},
      {"sendMsg without Host",
       "POST " + q + "sendMsg HTTP/1.1\r\n" + ct + "Content-Length: 7\r\n\r\ntopic=p", "400"},
      {"two Host headers", "GET /camellia/health/check HTTP/1.1\r\nHost: x\r\nHost: y\r\n\r\n",
       "400"},
      {"Transfer-Encoding: gzip", post("sendMsg", "", "Transfer-Encoding: gzip\r\n"), "400"},
      {"Transfer-Encoding not ending in chunked",
       "POST " + q + "sendMsg HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked, gzip\r\n\r\nxyz",
       "400"},
      {"Content-Length and Transfer-Encoding",
       "POST " + q +
           "sendMsg HTTP/1.1\r\nHost: x\r\nContent-Length: 3\r\n"
           "Transfer-Encoding: chunked\r\n\r\n0\r\n\r\n",
       "400"},
      {"bad chunk", chunked_head + "zz\r\n", "400"},
      {"an error behind a good request", health + "GET / HTTP/1.1\r\nBogus\r\n\r\n", "200 400"},
      {"request line over the header limit", "GET /" + big + " HTTP/1.1\r\nHost: x\r\n\r\n", "431"},
      {"header over the header limit",
       "GET http://h/camellia/health/check?x HTTP/1.1\r\nHost: x\r\nX-Big: " + big + "\r\n\r\n",
       "431"},
      {"Content-Length over the body limit",
       "POST " + q + "sendMsg?x=1 HTTP/1.1\r\nHost: x\r\nContent-Length: 257\r\n\r\n", "413"},
      {"100-continue over the body limit",
       "POST " + q +
           "sendMsg HTTP/1.1\r\nHost: x\r\nExpect: 100-continue\r\n"
           "Content-Length: 257\r\n\r\n",
       "413"},
      {"chunked body over the body limit",
       chunked_head + "100\r\n" + std::string(256, 'c') + "\r\n1\r\n", "413"},
      {"an incomplete request behind a good one", health + "GET / HTTP/1.1\r\nHost:", "200"},
      {"an incomplete body", incomplete_body, ""},
  };
}

TEST(ConnectionParsingParityTest, TheServerAndServeInProcessWriteTheSameBytes) {
  ServerProcess server;
  Status s = server.Start(kFlags);
  ASSERT_TRUE(s.ok()) << s.message();
  std::vector<std::string> args(kFlags.begin(), kFlags.end());
  args.push_back("--listen=127.0.0.1:0");
  const char* const no_env[] = {nullptr};
  config::LoadResult loaded = config::Load(args, no_env);
  ASSERT_TRUE(loaded.errors.empty()) << loaded.errors.front();
  ApiClient api(server.endpoint());
  const int64_t now = api.Now();  // the server's test clock, which no row moves
  ASSERT_GT(now, 0);
  InProcessServer in_process(loaded.config, now);

  std::vector<Row> rows = Rows();
  for (const Row& row : rows) {
    SCOPED_TRACE(row.what);
    testutil::RawConnection c;
    ASSERT_TRUE(c.Connect(server.endpoint()).ok());
    ASSERT_TRUE(c.Send(row.bytes).ok());
    c.ShutdownWrite().IgnoreError();  // fails when the server has closed already
    EXPECT_TRUE(c.WaitClosed(10s)) << "the server left the connection open";
    std::string from_server = WithoutDates(c.received());
    std::string from_in_process = WithoutDates(in_process.Serve(row.bytes));
    EXPECT_EQ(from_server, from_in_process);
    EXPECT_EQ(Statuses(from_server), row.statuses) << from_server;
  }
  EXPECT_EQ(api.Now(), now);
  std::printf("[ parity ] %zu rows\n", rows.size());
}

}  // namespace
}  // namespace chronoq::it
