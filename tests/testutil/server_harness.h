// Integration-test harness: runs the real `chronoq` binary as a child process and talks to it over
// real sockets with the blocking client (client/http_client.h).
//
//   ServerProcess server;
//   Status s = server.Start({"--test-clock"});       // serve --listen=127.0.0.1:0 --test-clock
//   ASSERT_TRUE(s.ok()) << s.message();              // the message quotes the server's stderr
//   ApiClient api(server.endpoint());
//   ApiResponse r = api.Queue("sendMsg", {{"topic", "t"}, {"msg", "m"}, {"delayMillis", "0"}});
//   EXPECT_EQ(r.code(), 200) << r.Describe();
//   api.AdvanceClock(5000);                          // test mode: moves the server's clock
//   int rc = server.Stop(SIGTERM);                   // exit code, or -signal
//
// The binary is the one built with the tests (CQ_BINARY_PATH), or $CQ_BINARY when set.
//
// gRPC: every process the harness starts gets CHRONOQ_GRPC_LISTEN= (no gRPC server: the default
// port 9090 would be shared by tests running at once) unless its environment or `extra_env`
// names the variable. A flag wins over it: Start({"--grpc-listen=127.0.0.1:0"}) runs the gRPC
// server on a free port, which grpc_port() tells.
//
// Two nodes (CQ_TEST_STORAGE=redis2): Start() runs a second server (the peer) on the same Redis
// namespace, with the same flags and (in test mode) the same clock. An ApiClient of the first
// server then sends sendMsg and getMonitorData there and every other queue operation (pull, ack,
// get, delete, topic info, parked long polls) to the peer; clock moves go to both. So every
// integration test also checks that nodes sharing one Redis behave as one queue.
// Tests never sleep to let time pass: they start the server with --test-clock and advance it.
//
// Thread-safety: a ServerProcess is used by one thread; an ApiClient (one connection) too. Use one
// ApiClient per thread or per concurrent request.
#pragma once

#include <sys/types.h>

#include <boost/json/value.hpp>
#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "base/status.h"
#include "client/http_client.h"

namespace chronoq::testutil {

inline constexpr std::string_view kQueuePath = "/camellia/delayQueue/";

// Form parameters in order; values are raw (ApiClient encodes them).
using Form = std::vector<std::pair<std::string, std::string>>;

// Path of the chronoq binary under test.
std::string BinaryPath();

// The outcome of running the binary to completion.
struct ExitResult {
  int exit_code = -1;      // when it exited normally
  int term_signal = 0;     // when a signal ended it
  bool timed_out = false;  // killed by us after the timeout
  std::string out;
  std::string err;
};

// Runs `chronoq <args...>` to completion (killed after `timeout`), capturing stdout and stderr.
// Its stdin is /dev/null.
ExitResult RunBinary(const std::vector<std::string>& args,
                     std::chrono::milliseconds timeout = std::chrono::seconds(10),
                     const std::vector<std::string>& extra_env = {});
// As RunBinary, with `input` on its stdin (`chronoq send-batch`, `chronoq ack --batch`).
ExitResult RunBinaryWithInput(const std::vector<std::string>& args, std::string_view input,
                              std::chrono::milliseconds timeout = std::chrono::seconds(10));

// Fails the current test (gtest ADD_FAILURE) when `log` holds an AddressSanitizer, LeakSanitizer,
// ThreadSanitizer or UndefinedBehaviorSanitizer report; `who` names the process in the failure.
// The harness checks every server's and every command's stderr this way.
void ExpectNoSanitizerReport(std::string_view who, std::string_view log);

class ServerProcess {
 public:
  ServerProcess() = default;
  ~ServerProcess();  // stops a server still running (SIGTERM; SIGKILL after 10 s)
  ServerProcess(const ServerProcess&) = delete;
  ServerProcess& operator=(const ServerProcess&) = delete;

  // Starts `chronoq serve --listen=127.0.0.1:0 <flags...>` and waits (up to `timeout`) for its
  // "chronoq listening on HOST:PORT" line. The error names what went wrong and quotes the
  // server's stderr. `extra_env` holds "NAME=value" entries added to the environment.
  Status Start(const std::vector<std::string>& flags,
               std::chrono::milliseconds timeout = std::chrono::seconds(10),
               const std::vector<std::string>& extra_env = {});

  // The next Start()s run the server with RLIMIT_NOFILE = `n` (soft and hard); 0: inherited.
  void set_fd_limit(uint64_t n) { fd_limit_ = n; }

  uint16_t port() const { return port_; }
  // The gRPC port, when the flags gave --grpc-listen (0 otherwise).
  uint16_t grpc_port() const { return grpc_port_; }
  client::Endpoint endpoint() const {
    client::Endpoint ep;
    ep.host = "127.0.0.1";
    ep.port = port_;
    return ep;
  }
  pid_t pid() const { return pid_; }
  bool running() const { return pid_ > 0; }
  const std::string& listening_line() const { return line_; }

  // Sends `sig` and waits up to `timeout` for the process to end. Returns its exit code, -signal
  // when a signal ended it, or kStillRunning (the process is then SIGKILLed and reaped).
  static constexpr int kStillRunning = -1000;
  int Stop(int sig, std::chrono::milliseconds timeout = std::chrono::seconds(5));
  // Kills (SIGKILL) and reaps a running server.
  void Kill();

  // Everything the server wrote to stderr so far (its log).
  std::string Stderr() const;
  // The embedded store's directory (empty for memory storage). Kept across Start()s of this
  // object, removed by its destructor.
  const std::string& data_dir() const { return data_dir_; }
  // The second node (CQ_TEST_STORAGE=redis2), or nullptr.
  const ServerProcess* peer() const { return peer_.get(); }

 private:
  Status StartPeer(const std::vector<std::string>& flags, std::chrono::milliseconds timeout,
                   const std::vector<std::string>& extra_env);
  std::unique_ptr<ServerProcess> peer_;
  bool is_peer_ = false;
  pid_t pid_ = -1;
  uint16_t port_ = 0;
  uint16_t grpc_port_ = 0;
  int stdout_fd_ = -1;
  std::string stderr_path_;
  std::string redis_ns_;  // storage=redis: this server's namespace, kept across restarts
  std::string data_dir_;
  std::string line_;
  uint64_t fd_limit_ = 0;
};

// The storage integration tests run against: $CQ_TEST_STORAGE, "embedded" (default), "memory",
// "redis" or "redis2" (redis, two nodes).
std::string StorageUnderTest();

// An answer of the server: HTTP status and, when the body is JSON, the parsed value.
struct ApiResponse {
  int status = 0;               // HTTP status; 0 when the request failed below HTTP
  std::string transport_error;  // why, when status == 0
  client::Response http;
  boost::json::value json;  // null unless the body parsed as JSON
  bool json_ok = false;

  // json["code"] as an integer; -1 when absent.
  int64_t code() const;
  // json["msg"] as a string; "" when absent.
  std::string msg() const;
  // json[key] (null value when absent or not an object).
  const boost::json::value& at(std::string_view key) const;
  std::string header(std::string_view name) const { return http.Header(name); }
  // "HTTP 200 {...}" for failure messages (body shortened).
  std::string Describe() const;
};

// One keep-alive connection to a server, reconnecting when the server closed it.
class ApiClient {
 public:
  // Requests go to `ep`, and to its peer when `ep` is a server with two nodes (see above).
  explicit ApiClient(client::Endpoint ep);

  ApiResponse Request(std::string_view method, std::string_view target, std::string_view body = {},
                      std::string_view content_type = "application/x-www-form-urlencoded",
                      std::chrono::milliseconds timeout = std::chrono::seconds(30));
  // POST `path` with `form` as an x-www-form-urlencoded body (and optional raw query string).
  ApiResponse Post(std::string_view path, const Form& form, std::string_view raw_query = {});
  // POST a JSON body.
  ApiResponse PostJson(std::string_view path, std::string_view json,
                       std::string_view raw_query = {});
  // GET `path` with `form` as the query string.
  ApiResponse Get(std::string_view path, const Form& query = {});
  // POST /camellia/delayQueue/<op>.
  ApiResponse Queue(std::string_view op, const Form& form) {
    return Post(std::string(kQueuePath) + std::string(op), form);
  }
  // GET /camellia/delayQueue/<op>.
  ApiResponse Monitor(std::string_view op, const Form& query = {}) {
    return Get(std::string(kQueuePath) + std::string(op), query);
  }

  // Test mode: moves the server clock forward by `millis`, running every timer due on the way;
  // returns the server's new time (ms epoch), or -1 on failure (also reported as a test failure).
  int64_t AdvanceClock(int64_t millis);
  int64_t Now() { return AdvanceClock(0); }
  // Test mode: number of long polls parked (or being served) right now; -1 on failure.
  // `draining` (optional): set when a pull for parked requests is in flight.
  int64_t ParkedLongPolls(bool* draining = nullptr);
  // Waits (polling, up to `timeout`) until ParkedLongPolls() == n and no pull for parked
  // requests is in flight (so that what the test does next cannot race with one). False on
  // timeout.
  bool WaitParked(int64_t n, std::chrono::milliseconds timeout = std::chrono::seconds(5));

  // Starts a request without reading its answer (long polls); read it with Finish().
  Status Begin(std::string_view method, std::string_view target, std::string_view body = {},
               std::string_view content_type = "application/x-www-form-urlencoded");
  Status BeginQueue(std::string_view op, const Form& form) {
    return Begin("POST", std::string(kQueuePath) + std::string(op), client::FormEncode(form));
  }
  ApiResponse Finish(std::chrono::milliseconds timeout = std::chrono::seconds(10));

  // Two nodes: from now on every request goes to the first node (clock moves still reach both).
  // For what is per node by design (getMonitorData) and for raw connections to the first node.
  void OneNode() { one_node_ = true; }
  // Every request from now on carries `Authorization: Bearer <token>`; empty: none.
  void set_token(std::string token) { token_ = std::move(token); }

  // The connection of the last request (two nodes: maybe the peer's); connects when needed.
  client::HttpConnection& connection() { return Connection(last_on_peer_); }
  void Close() {
    conn_.Close();
    peer_conn_.Close();
  }

 private:
  // True when `target` goes to the peer.
  bool OnPeer(std::string_view target) const;
  client::HttpConnection& Connection(bool peer);
  Status BeginOn(bool peer, std::string_view method, std::string_view target, std::string_view body,
                 std::string_view content_type);
  client::Endpoint ep_;
  client::HttpConnection conn_;
  uint16_t peer_port_ = 0;  // 0: no peer
  client::HttpConnection peer_conn_;
  bool last_on_peer_ = false;  // where the request Finish() reads came from
  bool one_node_ = false;
  std::string token_;
};

// Parses an answer (status, headers, body) into an ApiResponse.
ApiResponse ToApiResponse(client::Response r);

// A raw TCP connection for protocol tests: bytes in, bytes out.
class RawConnection {
 public:
  RawConnection() = default;
  ~RawConnection();
  RawConnection(const RawConnection&) = delete;
  RawConnection& operator=(const RawConnection&) = delete;

  Status Connect(const client::Endpoint& ep);
  Status Send(std::string_view bytes);
  // Closes the sending side (the server reads end of file); answers can still be read.
  Status ShutdownWrite();
  // Reads until `needle` appears in what was received (kept in received()); false on timeout or
  // close before it appears.
  bool ReadUntil(std::string_view needle, std::chrono::milliseconds timeout);
  // Reads whatever arrives within `timeout` (returns early when the peer closes).
  void ReadFor(std::chrono::milliseconds timeout);
  // True when the peer has closed the connection (waits up to `timeout`).
  bool WaitClosed(std::chrono::milliseconds timeout);
  const std::string& received() const { return received_; }
  void Clear() { received_.clear(); }
  void Close();

 private:
  // Reads once; 1 data, 0 closed, -1 timeout or error.
  int ReadOnce(std::chrono::milliseconds timeout);
  int fd_ = -1;
  std::string received_;
};

}  // namespace chronoq::testutil
