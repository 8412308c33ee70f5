// Connection limits of the HTTP server, each over real sockets against the real binary:
// max-connections (beyond it: HTTP 503 and close, at once), the request timeout counted from a
// request's first byte (slow-loris headers and bodies), the idle keep-alive timeout, fitting
// max-connections to the file-descriptor limit at start, and running out of file descriptors
// (the accept loop backs off without spinning and accepts again once descriptors are free).
// Connections do not depend on the storage: one variant (memory) runs these. They wait on the
// server's real timers, configured short, with generous deadlines for a loaded machine.
#include <fmt/format.h>
#include <signal.h>
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

#include "tests/integration/it_util.h"

namespace chronoq::it {
namespace {

using namespace std::chrono_literals;
using client::HttpConnection;
using testutil::RawConnection;
using SteadyClock = std::chrono::steady_clock;

constexpr std::string_view kHealthRequest =
    "GET /camellia/health/check HTTP/1.1\r\nHost: chronoq\r\n\r\n";

class ConnectionLimitsTest : public ::testing::Test {
 protected:
  // A server of this test's own (the counts must be exact).
  void Start(std::vector<std::string> flags, uint64_t fd_limit = 0) {
    flags.insert(flags.begin(), {"--storage=memory", "--log-level=warn"});
    server_.set_fd_limit(fd_limit);
    Status s = server_.Start(flags);
    ASSERT_TRUE(s.ok()) << s.message();
  }
  HttpConnection Connect() {
    Result<HttpConnection> c = HttpConnection::Connect(server_.endpoint());
    EXPECT_TRUE(c.has_value()) << c.error().message();
    return c.has_value() ? std::move(c).value() : HttpConnection();
  }
  // True when GET /camellia/health/check on `c` is answered 200.
  static bool Served(HttpConnection& c, std::chrono::milliseconds timeout = 10s) {
    Result<client::Response> r = c.Request("GET", "/camellia/health/check", {}, {}, timeout);
    return r.has_value() && r->status == 200;
  }
  // The value of an unlabelled sample in a GET /metrics answer read on `c`; -1 when absent.
  static double Metric(HttpConnection& c, std::string_view name) {
    Result<client::Response> r = c.Request("GET", "/metrics");
    if (!r.has_value()) return -1;
    std::istringstream in(r->body);
    std::string line;
    while (std::getline(in, line)) {
      if (line.size() > name.size() && line.compare(0, name.size(), name) == 0 &&
          line[name.size()] == ' ') {
        return std::stod(line.substr(name.size() + 1));
      }
    }
    return -1;
  }
  // The server's CPU time so far (user + system) and whether it is alive (not a zombie).
  double CpuSeconds(bool* alive) {
    std::ifstream f("/proc/" + std::to_string(server_.pid()) + "/stat");
    std::string stat((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
    size_t close = stat.rfind(')');  // the command name may hold spaces
    std::istringstream rest(close == std::string::npos ? "" : stat.substr(close + 2));
    std::string state;
    rest >> state;
    std::string skip;
    for (int i = 0; i < 10; ++i) rest >> skip;  // ppid .. cmajflt (fields 4 to 13)
    long utime = 0, stime = 0;
    rest >> utime >> stime;
    *alive = !state.empty() && state != "Z" && state != "X";
    return static_cast<double>(utime + stime) / static_cast<double>(::sysconf(_SC_CLK_TCK));
  }
  int OpenFds() {
    int n = 0;
    std::error_code ec;
    for (auto it = std::filesystem::directory_iterator(
             "/proc/" + std::to_string(server_.pid()) + "/fd", ec);
         !ec && it != std::filesystem::directory_iterator(); it.increment(ec)) {
      ++n;
    }
    return n;
  }
  // Sends `at_once`, then `trickled` one byte every 100 ms, until the server closes the
  // connection or everything was sent; `normal` meanwhile sends a request every step, which must
  // be served. Returns the time from the first byte until the close (or -1 ms: never closed).
  std::chrono::milliseconds TrickleUntilClosed(std::string_view at_once, std::string_view trickled,
                                               HttpConnection& normal, int* served) {
    RawConnection slow;
    EXPECT_TRUE(slow.Connect(server_.endpoint()).ok());
    auto start = SteadyClock::now();
    EXPECT_TRUE(slow.Send(at_once).ok());
    for (char ch : trickled) {
      if (slow.WaitClosed(100ms)) break;
      if (!slow.Send(std::string_view(&ch, 1)).ok()) break;
      if (Served(normal)) ++*served;
    }
    bool closed = slow.WaitClosed(10s);
    auto took = std::chrono::duration_cast<std::chrono::milliseconds>(SteadyClock::now() - start);
    EXPECT_EQ(slow.received(), "") << "a request that was never complete got an answer";
    return closed ? took : std::chrono::milliseconds(-1);
  }

  ServerProcess server_;
};

TEST_F(ConnectionLimitsTest, BeyondMaxConnectionsNewConnectionsGet503AtOnceAndExistingAreServed) {
  Start({"--max-connections=3"});
  std::vector<HttpConnection> open;
  for (int i = 0; i < 3; ++i) {
    open.push_back(Connect());
    ASSERT_TRUE(Served(open.back())) << "connection " << i;
  }

  // The fourth is answered at once, without waiting for its request, and closed.
  RawConnection extra;
  ASSERT_TRUE(extra.Connect(server_.endpoint()).ok());
  auto start = SteadyClock::now();
  ASSERT_TRUE(extra.ReadUntil("max-connections", 5s)) << extra.received();
  EXPECT_LT(SteadyClock::now() - start, 3s);
  EXPECT_EQ(extra.received().rfind("HTTP/1.1 503 Service Unavailable\r\n", 0), 0u)
      << extra.received();
  EXPECT_NE(extra.received().find("Retry-After: 1\r\n"), std::string::npos) << extra.received();
  EXPECT_NE(extra.received().find("Connection: close\r\n"), std::string::npos);
  EXPECT_NE(extra.received().find("\"code\":503"), std::string::npos) << extra.received();
  EXPECT_TRUE(extra.WaitClosed(5s));

  // One that sends its request first gets the answer too (not a reset).
  RawConnection eager;
  ASSERT_TRUE(eager.Connect(server_.endpoint()).ok());
  ASSERT_TRUE(eager.Send(kHealthRequest).ok());
  ASSERT_TRUE(eager.ReadUntil("max-connections", 5s)) << eager.received();
  EXPECT_EQ(eager.received().rfind("HTTP/1.1 503", 0), 0u) << eager.received();
  EXPECT_TRUE(eager.WaitClosed(5s));

  for (int i = 0; i < 3; ++i) EXPECT_TRUE(Served(open[i])) << "connection " << i;

  // Closing one makes room (the server notices the close a moment later).
  open[0].Close();
  HttpConnection next;
  auto deadline = SteadyClock::now() + 10s;
  bool admitted = false;
  while (!admitted && SteadyClock::now() < deadline) {
    next = Connect();
    admitted = Served(next);
    if (!admitted) std::this_thread::sleep_for(50ms);
  }
  ASSERT_TRUE(admitted);
  EXPECT_TRUE(Served(open[1]));
  EXPECT_TRUE(Served(open[2]));
  EXPECT_EQ(Metric(next, "cq_http_connections"), 3);
  EXPECT_EQ(Metric(next, "cq_http_max_connections"), 3);
  EXPECT_GE(Metric(next, "cq_http_connections_refused_total"), 2);
}

TEST_F(ConnectionLimitsTest, AClientTricklingItsHeaderIsDroppedAfterTheRequestTimeout) {
  Start({"--request-timeout-millis=500", "--idle-timeout-millis=60000"});
  HttpConnection normal = Connect();
  int served = 0;
  // 100 more bytes at one every 100 ms would take 10 s; each byte keeps the socket busy.
  std::string header = "GET /camellia/health/check HTTP/1.1\r\nHost: chronoq\r\nX-Pad: ";
  std::chrono::milliseconds took = TrickleUntilClosed(
      header.substr(0, 1), header.substr(1) + std::string(100, 'a'), normal, &served);
  ASSERT_GE(took.count(), 0) << "the trickling client was never disconnected";
  EXPECT_GE(took, 450ms);
  EXPECT_LT(took, 4s);
  EXPECT_GE(served, 2) << "a normal client was not served meanwhile";
  EXPECT_TRUE(Served(normal));
}

TEST_F(ConnectionLimitsTest, AClientTricklingItsBodyIsDroppedAfterTheRequestTimeout) {
  Start({"--request-timeout-millis=500", "--idle-timeout-millis=60000"});
  HttpConnection normal = Connect();
  int served = 0;
  std::string body = "topic=t&msg=" + std::string(100, 'a') + "&delayMillis=0";
  std::string head = fmt::format(
      "POST /camellia/delayQueue/sendMsg HTTP/1.1\r\nHost: chronoq\r\n"
      "Content-Type: application/x-www-form-urlencoded\r\nContent-Length: {}\r\n\r\n",
      body.size());
  std::chrono::milliseconds took = TrickleUntilClosed(head, body, normal, &served);
  ASSERT_GE(took.count(), 0) << "the trickling client was never disconnected";
  EXPECT_GE(took, 450ms);
  EXPECT_LT(took, 4s);
  EXPECT_GE(served, 2) << "a normal client was not served meanwhile";
}

TEST_F(ConnectionLimitsTest, AnIdleKeepAliveConnectionIsClosedAndABusyOneIsNot) {
  Start({"--idle-timeout-millis=500", "--request-timeout-millis=60000"});
  HttpConnection idle = Connect();
  HttpConnection busy = Connect();
  ASSERT_TRUE(Served(idle));
  auto last_request = SteadyClock::now();
  // The busy one sends a request every 100 ms for 1.5 s: three idle timeouts, never idle for one.
  for (int i = 0; i < 15; ++i) {
    ASSERT_TRUE(Served(busy)) << "request " << i << " of the busy connection";
    if (i == 0 && SteadyClock::now() - last_request < 400ms) {
      EXPECT_FALSE(idle.WaitClosed(1ms)) << "closed before the idle timeout";
    }
    std::this_thread::sleep_for(100ms);
  }
  EXPECT_TRUE(idle.WaitClosed(5s)) << "the idle connection is still open";
  EXPECT_TRUE(Served(busy));
}

TEST_F(ConnectionLimitsTest, MaxConnectionsIsLoweredToFitTheFileDescriptorLimit) {
  Start({"--max-connections=1000"}, /*fd_limit=*/400);  // 400 - 256 kept = 144
  EXPECT_NE(server_.Stderr().find("max-connections lowered from 1000 to 144"), std::string::npos)
      << server_.Stderr();
  HttpConnection c = Connect();
  EXPECT_EQ(Metric(c, "cq_http_max_connections"), 144);
}

TEST_F(ConnectionLimitsTest, AFileDescriptorLimitWithNoRoomForConnectionsIsRefusedAtStart) {
  server_.set_fd_limit(200);
  Status s = server_.Start({"--storage=memory", "--log-level=warn"});
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message().find("leaves no room for connections"), std::string::npos) << s.message();
}

// The fds run out although max-connections allows more (the store's files count too): accepting
// fails with EMFILE. The server backs off instead of spinning, keeps serving the connections it
// has, and accepts the waiting ones once descriptors are free again.
TEST_F(ConnectionLimitsTest, OutOfFileDescriptorsTheAcceptLoopBacksOffAndRecovers) {
  Start({"--max-connections=1000"});
  const int in_use = OpenFds();
  ASSERT_GT(in_use, 0);
  rlimit before{};
  ASSERT_EQ(::prlimit(server_.pid(), RLIMIT_NOFILE, nullptr, &before), 0) << std::strerror(errno);
  rlimit low{static_cast<rlim_t>(in_use + 6), before.rlim_max};  // room for about 6 connections
  ASSERT_EQ(::prlimit(server_.pid(), RLIMIT_NOFILE, &low, nullptr), 0) << std::strerror(errno);

  constexpr int kClients = 16;
  std::vector<RawConnection> conns(kClients);
  for (int i = 0; i < kClients; ++i) {
    ASSERT_TRUE(conns[i].Connect(server_.endpoint()).ok()) << i;  // completes in the backlog
    ASSERT_TRUE(conns[i].Send(kHealthRequest).ok()) << i;
  }
  std::this_thread::sleep_for(1s);  // the accepts that can succeed have succeeded
  std::vector<int> pending;
  int answered = 0;
  for (int i = 0; i < kClients; ++i) {
    if (conns[i].ReadUntil("HTTP/1.1 200", 50ms)) {
      ++answered;
    } else {
      pending.push_back(i);
    }
  }
  EXPECT_GE(answered, 1) << "accepted connections must be served";
  ASSERT_FALSE(pending.empty()) << "the file descriptors never ran out";

  // Out of descriptors, the server is alive and idle: no busy loop on the failing accept.
  bool alive = false;
  double cpu0 = CpuSeconds(&alive);
  std::this_thread::sleep_for(1s);
  double cpu1 = CpuSeconds(&alive);
  EXPECT_TRUE(alive);
  EXPECT_LT(cpu1 - cpu0, 0.2) << "CPU seconds used in one second while out of descriptors";

  // Free the descriptors: every waiting connection is accepted and served, in turn.
  for (int i = 0; i < kClients; ++i) {
    if (std::find(pending.begin(), pending.end(), i) == pending.end()) conns[i].Close();
  }
  for (int i : pending) {
    EXPECT_TRUE(conns[i].ReadUntil("HTTP/1.1 200", 10s)) << "connection " << i;
    conns[i].Close();
  }
  ASSERT_EQ(::prlimit(server_.pid(), RLIMIT_NOFILE, &before, nullptr), 0);
  HttpConnection c = Connect();
  EXPECT_TRUE(Served(c));
  EXPECT_GE(Metric(c, "cq_http_accept_errors_total"), 1);
  EXPECT_NE(server_.Stderr().find("accept failed"), std::string::npos) << server_.Stderr();
}

}  // namespace
}  // namespace chronoq::it
