#include "tests/testutil/server_harness.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <netdb.h>
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>
#include <cerrno>
#include <charconv>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <mutex>
#include <sstream>
#include <thread>

#include "tests/testutil/process_state.h"
#include "tests/testutil/redis_servers.h"
#include "tests/testutil/temp_dir.h"

extern char** environ;

namespace chronoq::testutil {
namespace {

using SteadyClock = std::chrono::steady_clock;

int MillisLeft(SteadyClock::time_point deadline) {
  auto left =
      std::chrono::duration_cast<std::chrono::milliseconds>(deadline - SteadyClock::now()).count();
  return static_cast<int>(std::max<int64_t>(0, left));
}

std::string ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// A temporary file name (the file exists, empty).
std::string TempFile(const char* tag) {
  std::string tmpl = TempTemplate(fmt::format("chronoq_it_{}_", tag));
  int fd = ::mkstemp(tmpl.data());
  if (fd >= 0) ::close(fd);
  return tmpl;
}

// argv and envp arrays for execve, built before fork (no allocation in the child).
struct ExecArgs {
  std::vector<std::string> argv_s;
  std::vector<std::string> env_s;
  std::vector<char*> argv;
  std::vector<char*> envp;

  ExecArgs(const std::vector<std::string>& args, const std::vector<std::string>& extra_env) {
    argv_s.push_back(BinaryPath());
    for (const auto& a : args) argv_s.push_back(a);
    for (char** e = environ; *e != nullptr; ++e) env_s.emplace_back(*e);
    for (const auto& e : extra_env) env_s.push_back(e);
    // No gRPC server unless asked for (server_harness.h): its default port would be shared.
    constexpr std::string_view kGrpcListen = "CHRONOQ_GRPC_LISTEN=";
    if (std::none_of(env_s.begin(), env_s.end(),
                     [&](const std::string& e) { return e.starts_with(kGrpcListen); })) {
      env_s.emplace_back(kGrpcListen);
    }
    for (auto& s : argv_s) argv.push_back(s.data());
    argv.push_back(nullptr);
    for (auto& s : env_s) envp.push_back(s.data());
    envp.push_back(nullptr);
  }
};

// In the child: wires fds, sets the fd limit (soft and hard; 0: inherited) and execs; never
// returns.
// `in_fd` < 0: stdin is /dev/null.
[[noreturn]] void ExecChild(const ExecArgs& a, int out_fd, int err_fd, uint64_t fd_limit = 0,
                            int in_fd = -1) {
  ::prctl(PR_SET_PDEATHSIG, SIGKILL);  // the server dies with the test
  if (fd_limit > 0) {
    rlimit rl{static_cast<rlim_t>(fd_limit), static_cast<rlim_t>(fd_limit)};
    ::setrlimit(RLIMIT_NOFILE, &rl);
  }
  if (in_fd < 0) in_fd = ::open("/dev/null", O_RDONLY);
  if (in_fd >= 0) ::dup2(in_fd, 0);
  ::dup2(out_fd, 1);
  ::dup2(err_fd, 2);
  // The test process blocks no signals we care about, but be explicit: default dispositions.
  sigset_t none;
  sigemptyset(&none);
  ::sigprocmask(SIG_SETMASK, &none, nullptr);
  ::execve(a.argv[0], a.argv.data(), a.envp.data());
  const char msg[] = "exec of the chronoq binary failed\n";
  ssize_t ignored = ::write(2, msg, sizeof(msg) - 1);
  (void)ignored;
  ::_exit(127);
}

// Waits for `pid` to end, up to `timeout`. True when it ended (status in *wstatus).
bool WaitPid(pid_t pid, std::chrono::milliseconds timeout, int* wstatus) {
  auto deadline = SteadyClock::now() + timeout;
  for (;;) {
    pid_t r = ::waitpid(pid, wstatus, WNOHANG);
    if (r == pid) return true;
    if (r < 0 && errno != EINTR) return true;  // not our child any more
    if (SteadyClock::now() >= deadline) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
}

int DecodeWaitStatus(int wstatus) {
  if (WIFEXITED(wstatus)) return WEXITSTATUS(wstatus);
  if (WIFSIGNALED(wstatus)) return -WTERMSIG(wstatus);
  return -999;
}

std::string Shorten(std::string_view s, size_t max = 600) {
  if (s.size() <= max) return std::string(s);
  return fmt::format("{}... ({} bytes)", s.substr(0, max), s.size());
}

}  // namespace

void ExpectNoSanitizerReport(std::string_view who, std::string_view log) {
  static constexpr std::string_view kMarkers[] = {"ERROR: AddressSanitizer", "ERROR: LeakSanitizer",
                                                  "WARNING: ThreadSanitizer", "runtime error:"};
  for (std::string_view marker : kMarkers) {
    size_t at = log.find(marker);
    if (at == std::string_view::npos) continue;
    size_t line = log.rfind('\n', at);
    line = line == std::string_view::npos ? 0 : line + 1;
    ADD_FAILURE() << who << " wrote a sanitizer report:\n" << log.substr(line, 6000);
    return;
  }
}

std::string BinaryPath() {
  if (const char* p = std::getenv("CQ_BINARY"); p != nullptr && *p != '\0') return p;
  return CQ_BINARY_PATH;
}

namespace {

ExitResult Run(const std::vector<std::string>& args, std::chrono::milliseconds timeout,
               const std::vector<std::string>& extra_env, int in_fd) {
  ExitResult res;
  std::string out_path = TempFile("out");
  std::string err_path = TempFile("err");
  int out_fd = ::open(out_path.c_str(), O_WRONLY | O_TRUNC | O_CLOEXEC);
  int err_fd = ::open(err_path.c_str(), O_WRONLY | O_TRUNC | O_CLOEXEC);
  ExecArgs a(args, extra_env);
  pid_t pid = ::fork();
  if (pid == 0) ExecChild(a, out_fd, err_fd, /*fd_limit=*/0, in_fd);
  ::close(out_fd);
  ::close(err_fd);
  int wstatus = 0;
  if (pid < 0) {
    res.err = fmt::format("fork failed: {}", std::strerror(errno));
  } else if (!WaitPid(pid, timeout, &wstatus)) {
    ::kill(pid, SIGKILL);
    ::waitpid(pid, &wstatus, 0);
    res.timed_out = true;
  } else if (WIFEXITED(wstatus)) {
    res.exit_code = WEXITSTATUS(wstatus);
  } else if (WIFSIGNALED(wstatus)) {
    res.term_signal = WTERMSIG(wstatus);
  }
  res.out = ReadFile(out_path);
  res.err += ReadFile(err_path);
  ExpectNoSanitizerReport("chronoq " + (args.empty() ? std::string() : args[0]), res.err);
  ::unlink(out_path.c_str());
  ::unlink(err_path.c_str());
  return res;
}

}  // namespace

ExitResult RunBinary(const std::vector<std::string>& args, std::chrono::milliseconds timeout,
                     const std::vector<std::string>& extra_env) {
  return Run(args, timeout, extra_env, /*in_fd=*/-1);
}

ExitResult RunBinaryWithInput(const std::vector<std::string>& args, std::string_view input,
                              std::chrono::milliseconds timeout) {
  std::string in_path = TempFile("in");
  { std::ofstream(in_path, std::ios::binary) << input; }
  int in_fd = ::open(in_path.c_str(), O_RDONLY | O_CLOEXEC);
  ExitResult res = Run(args, timeout, {}, in_fd);
  if (in_fd >= 0) ::close(in_fd);
  ::unlink(in_path.c_str());
  return res;
}

// ---------------------------------------------------------------------------------------------
// ServerProcess

ServerProcess::~ServerProcess() {
  // A clean stop, not SIGKILL: sanitizer builds then report leaks, and the log is checked.
  if (running()) Stop(SIGTERM, std::chrono::seconds(10));
  Kill();
  if (!stderr_path_.empty()) ::unlink(stderr_path_.c_str());
  if (!data_dir_.empty()) {
    std::error_code ec;
    std::filesystem::remove_all(data_dir_, ec);
  }
}

namespace {

// One redis-server for every server of this test process that uses storage=redis; it lives
// until the process exits, then is killed and its directory removed (a static's destructor).
RedisStandalone* SharedRedisForServers() {
  static std::unique_ptr<RedisStandalone> redis = [] {
    auto r = std::make_unique<RedisStandalone>();
    Status s = r->Start();
    if (!s.ok()) {
      std::fprintf(stderr, "cannot start redis-server: %s\n", s.ToString().c_str());
      r.reset();
    }
    return r;
  }();
  return redis.get();
}

int NextServerNumber() {
  static std::atomic<int> n{0};
  return n.fetch_add(1);
}

}  // namespace

std::string StorageUnderTest() {
  const char* s = std::getenv("CQ_TEST_STORAGE");
  return s != nullptr && *s != '\0' ? std::string(s) : std::string("embedded");
}

namespace {

// Two nodes: the peer's port of each first node's port.
std::mutex peers_mu;
std::map<uint16_t, uint16_t>& Peers() {
  static auto* peers = new std::map<uint16_t, uint16_t>();
  return *peers;
}

uint16_t PeerOf(uint16_t port) {
  std::lock_guard<std::mutex> lock(peers_mu);
  auto it = Peers().find(port);
  return it == Peers().end() ? 0 : it->second;
}

void SetPeer(uint16_t port, uint16_t peer) {
  std::lock_guard<std::mutex> lock(peers_mu);
  if (peer == 0) {
    Peers().erase(port);
  } else {
    Peers()[port] = peer;
  }
}

}  // namespace

std::string ServerProcess::Stderr() const {
  return stderr_path_.empty() ? std::string() : ReadFile(stderr_path_);
}

Status ServerProcess::Start(const std::vector<std::string>& flags,
                            std::chrono::milliseconds timeout,
                            const std::vector<std::string>& extra_env) {
  if (running()) return Internal("ServerProcess::Start called twice");
  line_.clear();
  std::vector<std::string> args = {"serve", "--listen=127.0.0.1:0"};
  // Storage: as the flags say, else CQ_TEST_STORAGE; an embedded store gets a private directory,
  // kept across restarts of this ServerProcess.
  auto has_flag = [&](std::string_view name) {
    return std::any_of(flags.begin(), flags.end(),
                       [&](const std::string& f) { return f.rfind(name, 0) == 0; });
  };
  std::string storage = StorageUnderTest();
  const bool two_nodes = storage == "redis2" && !is_peer_;
  if (storage == "redis2") storage = "redis";
  if (!has_flag("--storage")) args.push_back("--storage=" + storage);
  bool embedded =
      has_flag("--storage=embedded") || (!has_flag("--storage") && storage == "embedded");
  if (embedded && !has_flag("--data-dir")) {
    if (data_dir_.empty()) {
      std::string tmpl = TempTemplate("chronoq-it-");
      if (::mkdtemp(tmpl.data()) == nullptr) {
        return Internal(fmt::format("mkdtemp failed: {}", std::strerror(errno)));
      }
      data_dir_ = tmpl;
    }
    args.push_back("--data-dir=" + data_dir_);
  }
  bool redis = has_flag("--storage=redis") || (!has_flag("--storage") && storage == "redis");
  if (redis && !has_flag("--redis-url")) {
    RedisStandalone* shared = SharedRedisForServers();
    if (shared == nullptr) return Internal("cannot start the redis-server for storage=redis");
    args.push_back("--redis-url=" + shared->url());
    // Its own namespace, kept across restarts of this ServerProcess (like a data dir).
    if (redis_ns_.empty()) redis_ns_ = fmt::format("it-{}-{}", ::getpid(), NextServerNumber());
    if (!has_flag("--namespace")) args.push_back("--namespace=" + redis_ns_);
  }
  args.insert(args.end(), flags.begin(), flags.end());

  int pipe_fds[2];
  if (::pipe2(pipe_fds, O_CLOEXEC) != 0) {
    return Internal(fmt::format("pipe failed: {}", std::strerror(errno)));
  }
  if (stderr_path_.empty()) stderr_path_ = TempFile("stderr");
  int err_fd = ::open(stderr_path_.c_str(), O_WRONLY | O_TRUNC | O_CLOEXEC);
  ExecArgs a(args, extra_env);
  pid_t pid = ::fork();
  if (pid == 0) ExecChild(a, pipe_fds[1], err_fd, fd_limit_);
  ::close(pipe_fds[1]);
  ::close(err_fd);
  if (pid < 0) {
    ::close(pipe_fds[0]);
    return Internal(fmt::format("fork failed: {}", std::strerror(errno)));
  }
  pid_ = pid;
  stdout_fd_ = pipe_fds[0];

  std::string cmdline = BinaryPath();
  for (const auto& s : args) cmdline += " " + s;
  auto fail = [&](std::string why) {
    Kill();
    return Internal(
        fmt::format("server did not start: {}\n  command: {}\n  stdout: {}\n  stderr:\n{}", why,
                    cmdline, Shorten(line_), Shorten(Stderr(), 4000)));
  };

  // With a gRPC server, its line follows the HTTP one.
  const bool grpc = std::any_of(flags.begin(), flags.end(), [](const std::string& f) {
    return f.starts_with("--grpc-listen=") && f.size() > std::string_view("--grpc-listen=").size();
  });
  auto lines_read = [&] {
    size_t first = line_.find('\n');
    return first != std::string::npos &&
           (!grpc || line_.find('\n', first + 1) != std::string::npos);
  };
  auto deadline = SteadyClock::now() + timeout;
  while (!lines_read()) {
    pollfd p{stdout_fd_, POLLIN, 0};
    int r = ::poll(&p, 1, std::min(MillisLeft(deadline), 50));
    if (r > 0) {
      char buf[512];
      ssize_t n = ::read(stdout_fd_, buf, sizeof(buf));
      if (n > 0) {
        line_.append(buf, static_cast<size_t>(n));
        continue;
      }
      if (n == 0) {
        int wstatus = 0;
        bool ended = WaitPid(pid_, std::chrono::seconds(2), &wstatus);
        if (ended) pid_ = -1;
        return fail(ended ? fmt::format("it exited with status {} before listening",
                                        DecodeWaitStatus(wstatus))
                          : std::string("it closed stdout before listening"));
      }
    }
    if (SteadyClock::now() >= deadline) {
      // Where it was (the store's open, a lock, the port?): its threads, before it is killed.
      return fail(fmt::format("no 'chronoq listening on' line within {} ms; where it was:\n{}",
                              timeout.count(), DescribeProcess(pid_)));
    }
  }
  grpc_port_ = 0;
  if (grpc) {
    const size_t first = line_.find('\n');
    std::string grpc_line = line_.substr(first + 1, line_.find('\n', first + 1) - first - 1);
    constexpr std::string_view kGrpcPrefix = "chronoq gRPC listening on ";
    unsigned v = 0;
    std::string_view p = std::string_view(grpc_line).substr(grpc_line.rfind(':') + 1);
    auto [ptr, ec] = std::from_chars(p.data(), p.data() + p.size(), v);
    if (!grpc_line.starts_with(kGrpcPrefix) || ec != std::errc() || v == 0 || v > 65535) {
      return fail(fmt::format("unexpected second stdout line '{}'", grpc_line));
    }
    grpc_port_ = static_cast<uint16_t>(v);
  }
  line_ = line_.substr(0, line_.find('\n'));
  constexpr std::string_view kPrefix = "chronoq listening on ";
  size_t colon = line_.rfind(':');
  if (line_.rfind(kPrefix, 0) != 0 || colon == std::string::npos) {
    return fail(fmt::format("unexpected first stdout line '{}'", line_));
  }
  unsigned v = 0;
  std::string_view p = std::string_view(line_).substr(colon + 1);
  auto [ptr, ec] = std::from_chars(p.data(), p.data() + p.size(), v);
  if (ec != std::errc() || ptr != p.data() + p.size() || v == 0 || v > 65535) {
    return fail(fmt::format("no port in '{}'", line_));
  }
  port_ = static_cast<uint16_t>(v);
  if (two_nodes && redis && !has_flag("--redis-url") && !has_flag("--namespace")) {
    return StartPeer(flags, timeout, extra_env);
  }
  return Status::Ok();
}

Status ServerProcess::StartPeer(const std::vector<std::string>& flags,
                                std::chrono::milliseconds timeout,
                                const std::vector<std::string>& extra_env) {
  if (peer_ == nullptr) {
    peer_ = std::make_unique<ServerProcess>();
    peer_->is_peer_ = true;
  }
  std::vector<std::string> peer_flags = flags;
  peer_flags.push_back("--namespace=" + redis_ns_);
  Status s = peer_->Start(peer_flags, timeout, extra_env);
  if (!s.ok()) {
    Kill();
    return Internal(fmt::format("the second node did not start: {}", s.message()));
  }
  // Test mode: both clocks start at their process's start; move the earlier one to the later.
  if (std::find(flags.begin(), flags.end(), "--test-clock") != flags.end()) {
    ApiClient a(endpoint());
    ApiClient b(peer_->endpoint());
    int64_t now_a = a.Now();
    int64_t now_b = b.Now();
    if (now_a < 0 || now_b < 0) {
      Kill();
      return Internal("cannot read the two nodes' test clocks");
    }
    if (now_a < now_b) a.AdvanceClock(now_b - now_a);
    if (now_b < now_a) b.AdvanceClock(now_a - now_b);
  }
  SetPeer(port_, peer_->port_);
  return Status::Ok();
}

int ServerProcess::Stop(int sig, std::chrono::milliseconds timeout) {
  if (peer_ != nullptr && peer_->running()) {
    SetPeer(port_, 0);
    peer_->Stop(sig, timeout);
  }
  if (!running()) return kStillRunning;
  ::kill(pid_, sig);
  int wstatus = 0;
  if (!WaitPid(pid_, timeout, &wstatus)) {
    Kill();
    return kStillRunning;
  }
  pid_ = -1;
  if (stdout_fd_ >= 0) ::close(stdout_fd_);
  stdout_fd_ = -1;
  ExpectNoSanitizerReport(fmt::format("the server on port {}", port_), Stderr());
  return DecodeWaitStatus(wstatus);
}

void ServerProcess::Kill() {
  if (peer_ != nullptr) {
    SetPeer(port_, 0);
    peer_->Kill();
  }
  if (pid_ > 0) {
    ::kill(pid_, SIGKILL);
    int wstatus = 0;
    ::waitpid(pid_, &wstatus, 0);
    pid_ = -1;
    ExpectNoSanitizerReport(fmt::format("the server on port {}", port_), Stderr());
  }
  if (stdout_fd_ >= 0) ::close(stdout_fd_);
  stdout_fd_ = -1;
}

// ---------------------------------------------------------------------------------------------
// ApiResponse

ApiResponse ToApiResponse(client::Response r) {
  ApiResponse a;
  a.status = r.status;
  a.http = std::move(r);
  if (!a.http.body.empty()) {
    boost::system::error_code ec;
    boost::json::value v = boost::json::parse(a.http.body, ec);
    if (!ec) {
      a.json = std::move(v);
      a.json_ok = true;
    }
  }
  return a;
}

int64_t ApiResponse::code() const {
  const boost::json::value& c = at("code");
  return c.is_int64() ? c.as_int64() : -1;
}

std::string ApiResponse::msg() const {
  const boost::json::value& m = at("msg");
  return m.is_string() ? std::string(m.as_string()) : std::string();
}

const boost::json::value& ApiResponse::at(std::string_view key) const {
  static const boost::json::value kNull;
  if (!json.is_object()) return kNull;
  const boost::json::value* v = json.as_object().if_contains(key);
  return v != nullptr ? *v : kNull;
}

std::string ApiResponse::Describe() const {
  if (status == 0) return fmt::format("(no HTTP answer: {})", transport_error);
  return fmt::format("HTTP {} {}", status, Shorten(http.body));
}

// ---------------------------------------------------------------------------------------------
// ApiClient

ApiClient::ApiClient(client::Endpoint ep) : ep_(std::move(ep)), peer_port_(PeerOf(ep_.port)) {}

bool ApiClient::OnPeer(std::string_view target) const {
  if (peer_port_ == 0 || one_node_) return false;
  if (target.rfind("/chronoq/test/longPolls", 0) == 0) return true;
  if (target.rfind(kQueuePath, 0) != 0) return false;
  std::string_view op = target.substr(kQueuePath.size());
  op = op.substr(0, op.find('?'));
  return op != "sendMsg" && op != "getMonitorData";
}

client::HttpConnection& ApiClient::Connection(bool peer) {
  client::HttpConnection& conn = peer ? peer_conn_ : conn_;
  if (!conn.connected()) {
    client::Endpoint ep = ep_;
    if (peer) ep.port = peer_port_;
    Result<client::HttpConnection> c = client::HttpConnection::Connect(ep);
    if (c.has_value()) conn = std::move(c).value();
  }
  return conn;
}

ApiResponse ApiClient::Request(std::string_view method, std::string_view target,
                               std::string_view body, std::string_view content_type,
                               std::chrono::milliseconds timeout) {
  // Two nodes: the peer's clock moves too (first, so that the answer is the first node's).
  if (peer_port_ != 0 && target.rfind("/chronoq/test/advanceClock", 0) == 0) {
    Status s = BeginOn(true, method, target, body, content_type);
    ApiResponse a = Finish(timeout);
    if (!s.ok() || a.status != 200) return a;
  }
  Status s = Begin(method, target, body, content_type);
  if (!s.ok()) {
    ApiResponse a;
    a.transport_error = s.message();
    return a;
  }
  return Finish(timeout);
}

Status ApiClient::Begin(std::string_view method, std::string_view target, std::string_view body,
                        std::string_view content_type) {
  return BeginOn(OnPeer(target), method, target, body, content_type);
}

Status ApiClient::BeginOn(bool peer, std::string_view method, std::string_view target,
                          std::string_view body, std::string_view content_type) {
  last_on_peer_ = peer;
  const uint16_t port = peer ? peer_port_ : ep_.port;
  client::HttpConnection& c = Connection(peer);
  if (!c.connected()) return Unavailable(fmt::format("cannot connect to port {}", port));
  c.set_token(token_);
  Status s = c.SendRaw(c.Format(method, target, body, content_type));
  if (!s.ok()) {
    // The server may have closed an idle keep-alive connection: retry once on a new one.
    c.Close();
    client::HttpConnection& c2 = Connection(peer);
    if (!c2.connected()) return Unavailable(fmt::format("cannot connect to port {}", port));
    s = c2.SendRaw(c2.Format(method, target, body, content_type));
  }
  return s;
}

ApiResponse ApiClient::Finish(std::chrono::milliseconds timeout) {
  client::HttpConnection& conn = last_on_peer_ ? peer_conn_ : conn_;
  Result<client::Response> r = conn.ReadResponse(timeout);
  if (!r.has_value()) {
    ApiResponse a;
    a.transport_error = r.error().message();
    conn.Close();
    return a;
  }
  ApiResponse a = ToApiResponse(std::move(r).value());
  std::string connection = a.http.Header("Connection");
  if (connection == "close") conn.Close();
  return a;
}

ApiResponse ApiClient::Post(std::string_view path, const Form& form, std::string_view raw_query) {
  std::string target(path);
  if (!raw_query.empty()) target += "?" + std::string(raw_query);
  return Request("POST", target, client::FormEncode(form));
}

ApiResponse ApiClient::PostJson(std::string_view path, std::string_view json,
                                std::string_view raw_query) {
  std::string target(path);
  if (!raw_query.empty()) target += "?" + std::string(raw_query);
  return Request("POST", target, json, "application/json");
}

ApiResponse ApiClient::Get(std::string_view path, const Form& query) {
  std::string target(path);
  if (!query.empty()) target += "?" + client::FormEncode(query);
  return Request("GET", target);
}

int64_t ApiClient::AdvanceClock(int64_t millis) {
  ApiResponse r = Request("POST", fmt::format("/chronoq/test/advanceClock?millis={}", millis));
  const boost::json::value& now = r.at("now");
  if (r.status != 200 || !now.is_int64()) {
    ADD_FAILURE() << "advanceClock failed (is the server started with --test-clock?): "
                  << r.Describe();
    return -1;
  }
  return now.as_int64();
}

int64_t ApiClient::ParkedLongPolls(bool* draining) {
  ApiResponse r = Request("GET", "/chronoq/test/longPolls");
  const boost::json::value& n = r.at("parked");
  if (r.status != 200 || !n.is_int64()) {
    ADD_FAILURE() << "GET /chronoq/test/longPolls failed: " << r.Describe();
    return -1;
  }
  if (draining != nullptr)
    *draining = r.at("draining").is_int64() && r.at("draining").as_int64() > 0;
  return n.as_int64();
}

bool ApiClient::WaitParked(int64_t n, std::chrono::milliseconds timeout) {
  auto deadline = SteadyClock::now() + timeout;
  for (;;) {
    bool draining = false;
    int64_t parked = ParkedLongPolls(&draining);
    if (parked == n && !draining) return true;
    if (parked < 0 || SteadyClock::now() >= deadline) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
}

// ---------------------------------------------------------------------------------------------
// RawConnection

RawConnection::~RawConnection() { Close(); }

void RawConnection::Close() {
  if (fd_ >= 0) ::close(fd_);
  fd_ = -1;
}

Status RawConnection::Connect(const client::Endpoint& ep) {
  Close();
  addrinfo hints{};
  hints.ai_family = AF_INET;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* res = nullptr;
  if (::getaddrinfo(ep.host.c_str(), std::to_string(ep.port).c_str(), &hints, &res) != 0) {
    return Unavailable("cannot resolve " + ep.host);
  }
  int fd = ::socket(res->ai_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
  int rc = fd >= 0 ? ::connect(fd, res->ai_addr, res->ai_addrlen) : -1;
  ::freeaddrinfo(res);
  if (rc != 0) {
    if (fd >= 0) ::close(fd);
    return Unavailable(fmt::format("connect failed: {}", std::strerror(errno)));
  }
  fd_ = fd;
  return Status::Ok();
}

Status RawConnection::Send(std::string_view bytes) {
  size_t sent = 0;
  while (sent < bytes.size()) {
    ssize_t n = ::send(fd_, bytes.data() + sent, bytes.size() - sent, MSG_NOSIGNAL);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return Unavailable(fmt::format("send failed: {}", std::strerror(errno)));
    sent += static_cast<size_t>(n);
  }
  return Status::Ok();
}

Status RawConnection::ShutdownWrite() {
  if (fd_ < 0 || ::shutdown(fd_, SHUT_WR) != 0) {
    return Unavailable(fmt::format("shutdown failed: {}", std::strerror(errno)));
  }
  return Status::Ok();
}

int RawConnection::ReadOnce(std::chrono::milliseconds timeout) {
  if (fd_ < 0) return 0;
  pollfd p{fd_, POLLIN, 0};
  int r = ::poll(&p, 1, static_cast<int>(timeout.count()));
  if (r <= 0) return -1;
  char buf[64 * 1024];
  ssize_t n = ::recv(fd_, buf, sizeof(buf), 0);
  if (n > 0) {
    received_.append(buf, static_cast<size_t>(n));
    return 1;
  }
  if (n == 0 || (errno != EINTR && errno != EAGAIN)) return 0;  // closed or reset
  return -1;
}

bool RawConnection::ReadUntil(std::string_view needle, std::chrono::milliseconds timeout) {
  auto deadline = SteadyClock::now() + timeout;
  while (received_.find(needle) == std::string::npos) {
    int left = MillisLeft(deadline);
    if (left <= 0) return false;
    if (ReadOnce(std::chrono::milliseconds(left)) == 0) {
      return received_.find(needle) != std::string::npos;
    }
  }
  return true;
}

void RawConnection::ReadFor(std::chrono::milliseconds timeout) {
  auto deadline = SteadyClock::now() + timeout;
  for (;;) {
    int left = MillisLeft(deadline);
    if (left <= 0) return;
    if (ReadOnce(std::chrono::milliseconds(left)) == 0) return;
  }
}

bool RawConnection::WaitClosed(std::chrono::milliseconds timeout) {
  auto deadline = SteadyClock::now() + timeout;
  for (;;) {
    int left = MillisLeft(deadline);
    if (left <= 0) return false;
    if (ReadOnce(std::chrono::milliseconds(left)) == 0) return true;
  }
}

}  // namespace chronoq::testutil
