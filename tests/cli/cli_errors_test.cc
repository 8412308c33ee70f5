// Exit codes of the client subcommands that are not about the queue: 2 for usage errors (before
// any request), 3 when the server cannot be reached, is silent or answers garbage; --help;
// CHRONOQ_SERVER.
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <thread>

#include "tests/cli/cli_util.h"

namespace chronoq::it {
namespace {

using namespace std::chrono_literals;

// A listening TCP socket on 127.0.0.1 that the test drives by hand (a server that never answers,
// or answers garbage).
class FakeServer {
 public:
  FakeServer() {
    fd_ = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t len = sizeof(a);
    if (::bind(fd_, reinterpret_cast<sockaddr*>(&a), len) != 0 || ::listen(fd_, 8) != 0 ||
        ::getsockname(fd_, reinterpret_cast<sockaddr*>(&a), &len) != 0) {
      ADD_FAILURE() << "cannot listen";
    }
    port_ = ntohs(a.sin_port);
  }
  ~FakeServer() {
    if (thread_.joinable()) thread_.join();
    ::close(fd_);
  }
  std::string url() const { return "http://127.0.0.1:" + std::to_string(port_); }
  uint16_t port() const { return port_; }
  // Accepts one connection, reads the request and answers `bytes`, then closes it.
  void AnswerOnce(std::string bytes) {
    thread_ = std::thread([this, bytes = std::move(bytes)] {
      int c = ::accept(fd_, nullptr, nullptr);
      if (c < 0) return;
      char buf[4096];
      (void)::recv(c, buf, sizeof(buf), 0);
      (void)::send(c, bytes.data(), bytes.size(), MSG_NOSIGNAL);
      ::close(c);
    });
  }
  // Closes the listening socket: the port then refuses connections.
  void CloseListener() {
    ::close(fd_);
    fd_ = -1;
  }

 private:
  int fd_ = -1;
  uint16_t port_ = 0;
  std::thread thread_;
};

TEST(CliUsageTest, UsageErrorsExit2NamingTheOption) {
  struct Case {
    std::vector<std::string> args;
    std::string mentions;
  };
  // --server points nowhere: exit 2 proves the check came before any connection attempt.
  for (const Case& c : std::vector<Case>{
           {{"send", "--msg=m"}, "--topic"},
           {{"send", "--topic=t", "--msg=m", "--delay=5 minutes"}, "--delay"},
           {{"send", "--topic=t", "--msg=m", "--delay=1.5s"}, "--delay"},
           {{"send", "--topic=t", "--msg=m", "--ttl=3w"}, "--ttl"},
           {{"send", "--topic=t", "--msg=m", "--max-retry=many"}, "--max-retry"},
           {{"pull", "--topic=t", "--batch=-1"}, "--batch"},
           {{"pull", "--topic=t", "--frobnicate"}, "--frobnicate"},
           {{"ack", "--topic=t"}, "--msg-id"},
           {{"get", "t", "x"}, "'t'"},
           {{"topics", "--timeout=never"}, "--timeout"},
           {{"send", "--topic=t", "--msg=m", "--priority=urgent"}, "--priority"},
           {{"send-batch", "--topic=t"}, "no messages in stdin"},  // stdin is /dev/null
           {{"ack", "--topic=t", "--batch"}, "--batch: no message ids"},
           {{"update", "--topic=t", "--msg-id=a"}, "nothing to update"},
           {{"list", "--topic=t", "--status=finished"}, "--status"},
           {{"count", "--topic=t", "--msg-id=a", "--count=0"}, "--count"},
       }) {
    std::vector<std::string> args = c.args;
    args.push_back("--server=http://127.0.0.1:1");
    ExitResult r = RunBinary(args);
    EXPECT_EQ(r.exit_code, kUsage) << c.args[0] << " stderr: " << r.err;
    EXPECT_TRUE(Contains(r.err, c.mentions)) << "should mention " << c.mentions << ": " << r.err;
    EXPECT_EQ(r.out, "");
  }
}

TEST(CliUsageTest, HelpForEachSubcommand) {
  for (const char* cmd : {"send",   "send-batch", "pull",    "ack",     "nack",         "touch",
                          "get",    "list",       "peek",    "update",  "trigger-now",  "count",
                          "delete", "topics",     "topic",   "monitor", "topic-config", "pause",
                          "resume", "purge",      "redrive", "backup"}) {
    ExitResult r = RunBinary({cmd, "--help"});
    EXPECT_EQ(r.exit_code, 0) << cmd << ": " << r.err;
    EXPECT_TRUE(Contains(r.out, std::string("Usage: chronoq ") + cmd + " ")) << r.out;
    EXPECT_TRUE(Contains(r.out, "--server=URL")) << r.out;
  }
  ExitResult top = RunBinary({"--help"});
  EXPECT_EQ(top.exit_code, 0);
  for (const char* cmd : {"serve", "send", "pull", "nack", "topics", "monitor", "bench"}) {
    EXPECT_TRUE(Contains(top.out, std::string("  ") + cmd + " ")) << cmd << " in\n" << top.out;
  }
}

TEST(CliUnreachableTest, ClosedPortExits3) {
  FakeServer fake;
  std::string url = fake.url();
  fake.CloseListener();
  ExitResult r = RunBinary({"topics", "--server=" + url});
  EXPECT_EQ(r.exit_code, kUnreachable) << r.err;
  EXPECT_TRUE(Contains(r.err, "cannot reach the server at " + url)) << r.err;
  EXPECT_EQ(r.out, "");
  // --json changes nothing: there is no answer to print.
  r = RunBinary({"send", "--topic=t", "--msg=m", "--json", "--server=" + url});
  EXPECT_EQ(r.exit_code, kUnreachable) << r.err;
  EXPECT_EQ(r.out, "");
}

TEST(CliUnreachableTest, SilentServerExits3AfterTheTimeout) {
  FakeServer fake;  // accepts (the kernel backlog does) but never answers
  auto start = std::chrono::steady_clock::now();
  ExitResult r =
      RunBinary({"get", "--topic=t", "--msg-id=x", "--timeout=300ms", "--server=" + fake.url()});
  auto took = std::chrono::steady_clock::now() - start;
  EXPECT_EQ(r.exit_code, kUnreachable) << r.err;
  EXPECT_TRUE(Contains(r.err, "did not answer within 300 ms")) << r.err;
  EXPECT_LT(took, 5s);
}

TEST(CliUnreachableTest, AnswerThatIsNotTheApiExits3) {
  for (const std::string& answer :
       {std::string("HTTP/1.1 502 Bad Gateway\r\nContent-Length: 11\r\n\r\nBad Gateway"),
        std::string("HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nhello"),
        std::string("HTTP/1.1 200 OK\r\nContent-Length: 9\r\n\r\n{\"a\":1}\r\n"),
        std::string("garbage, not HTTP\r\n\r\n")}) {
    FakeServer fake;
    fake.AnswerOnce(answer);
    ExitResult r = RunBinary({"topics", "--json", "--server=" + fake.url()});
    EXPECT_EQ(r.exit_code, kUnreachable) << answer << "\nstderr: " << r.err;
    EXPECT_EQ(r.out, "") << answer;
    EXPECT_FALSE(r.err.empty());
  }
}

TEST_F(CliTest, ServerComesFromTheEnvironment) {
  std::string t = Topic();
  SendOk(t, "m", 0, {{"msgId", "a"}});
  ExitResult r =
      RunBinary({"get", "--topic=" + t, "--msg-id=a"}, 10s, {"CHRONOQ_SERVER=" + ServerUrl()});
  EXPECT_EQ(r.exit_code, kOk) << Describe(r);
  EXPECT_TRUE(Contains(r.out, "msgId        a\n")) << r.out;
  // --server wins over the environment.
  FakeServer closed;
  std::string nowhere = closed.url();
  closed.CloseListener();
  r = RunBinary({"get", "--topic=" + t, "--msg-id=a", "--server=" + nowhere}, 10s,
                {"CHRONOQ_SERVER=" + ServerUrl()});
  EXPECT_EQ(r.exit_code, kUnreachable) << Describe(r);
}

}  // namespace
}  // namespace chronoq::it
