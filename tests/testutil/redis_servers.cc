#include "tests/testutil/redis_servers.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <hiredis/hiredis.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <set>
#include <sstream>
#include <thread>

extern char** environ;

namespace chronoq::testutil {
namespace {

using SteadyClock = std::chrono::steady_clock;
using std::chrono::milliseconds;

std::string ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::string Tail(const std::string& text, size_t lines) {
  size_t pos = text.size();
  if (pos > 0 && text[pos - 1] == '\n') --pos;
  for (size_t n = 0; n < lines && pos > 0; ++n) {
    size_t nl = text.rfind('\n', pos - 1);
    if (nl == std::string::npos) return text;
    pos = nl;
  }
  return pos == 0 ? text : text.substr(pos + 1);
}

std::string FindOnPath(const char* env_var, const char* name) {
  if (const char* p = std::getenv(env_var); p != nullptr && *p != '\0') return p;
  std::string path = std::getenv("PATH") != nullptr ? std::getenv("PATH") : "";
  path += ":/usr/bin:/usr/local/bin";
  std::stringstream ss(path);
  std::string dir;
  while (std::getline(ss, dir, ':')) {
    if (dir.empty()) continue;
    std::string candidate = dir + "/" + name;
    if (::access(candidate.c_str(), X_OK) == 0) return candidate;
  }
  return {};
}

// argv array for execve, built before fork (no allocation in the child).
struct Argv {
  std::vector<std::string> strings;
  std::vector<char*> ptrs;
  explicit Argv(std::vector<std::string> args) : strings(std::move(args)) {
    for (auto& s : strings) ptrs.push_back(s.data());
    ptrs.push_back(nullptr);
  }
};

// Forks and execs argv[0] with stdin /dev/null, stdout to out_fd and stderr to err_fd. The child
// dies with the test. Returns the pid, or -1.
pid_t Spawn(const Argv& a, int out_fd, int err_fd) {
  pid_t pid = ::fork();
  if (pid != 0) return pid;
  ::prctl(PR_SET_PDEATHSIG, SIGKILL);
  int null_fd = ::open("/dev/null", O_RDONLY);
  if (null_fd >= 0) ::dup2(null_fd, 0);
  ::dup2(out_fd, 1);
  ::dup2(err_fd, 2);
  ::close_range(3, ~0U, 0);  // no test sockets or files leak into redis
  sigset_t none;
  sigemptyset(&none);
  ::sigprocmask(SIG_SETMASK, &none, nullptr);
  ::execve(a.ptrs[0], a.ptrs.data(), environ);
  const char msg[] = "exec failed\n";
  ssize_t ignored = ::write(2, msg, sizeof(msg) - 1);
  (void)ignored;
  ::_exit(127);
}

// Waits for `pid` to end, up to `timeout`. True when it ended (status in *wstatus).
bool WaitPid(pid_t pid, milliseconds timeout, int* wstatus) {
  auto deadline = SteadyClock::now() + timeout;
  for (;;) {
    pid_t r = ::waitpid(pid, wstatus, WNOHANG);
    if (r == pid) return true;
    if (r < 0 && errno != EINTR) return true;  // not our child any more
    if (SteadyClock::now() >= deadline) return false;
    std::this_thread::sleep_for(milliseconds(2));
  }
}

std::string DescribeWaitStatus(int wstatus) {
  if (WIFEXITED(wstatus)) return fmt::format("exited with status {}", WEXITSTATUS(wstatus));
  if (WIFSIGNALED(wstatus)) return fmt::format("was killed by signal {}", WTERMSIG(wstatus));
  return "ended";
}

bool CanBind(uint16_t port, uint16_t* bound) {
  int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return false;
  int one = 1;
  ::setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));  // as redis does
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = htons(port);
  bool ok = ::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) == 0;
  if (ok && bound != nullptr) {
    socklen_t len = sizeof(addr);
    ok = ::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) == 0;
    *bound = ntohs(addr.sin_port);
  }
  ::close(fd);
  return ok;
}

// Percent-encodes a URL's user-info part.
std::string UrlEncode(std::string_view s) {
  std::string out;
  for (unsigned char c : s) {
    if (std::isalnum(c) != 0 || c == '-' || c == '.' || c == '_' || c == '~') {
      out += static_cast<char>(c);
    } else {
      out += fmt::format("%{:02X}", c);
    }
  }
  return out;
}

std::string UserInfo(const std::string& password) {
  return password.empty() ? std::string() : ":" + UrlEncode(password) + "@";
}

// The value of `field` in an INFO-style "k:v\r\n" text; empty when absent.
std::string InfoField(const std::string& info, std::string_view field) {
  std::string key = std::string(field) + ":";
  size_t pos = 0;
  while ((pos = info.find(key, pos)) != std::string::npos) {
    if (pos == 0 || info[pos - 1] == '\n') {
      size_t end = info.find_first_of("\r\n", pos);
      return info.substr(pos + key.size(), end == std::string::npos ? end : end - pos - key.size());
    }
    pos += key.size();
  }
  return {};
}

// Runs one command expecting a bulk-string answer (INFO, CLUSTER INFO).
Result<std::string> TextCommand(uint16_t port, const std::vector<std::string>& args,
                                std::string_view password) {
  Result<RedisReply> r = RedisCommandOnce(port, args, password);
  if (!r.has_value()) return r.error();
  if (r->type != RedisReply::Type::kString && r->type != RedisReply::Type::kStatus) {
    return Internal(fmt::format("{} on port {} answered {}", args[0], port, r->ToString()));
  }
  return r->str;
}

// Polls `check` (every 50 ms) until it returns OK or `timeout` passes; then returns its last error.
template <typename F>
Status PollUntil(milliseconds timeout, F check) {
  auto deadline = SteadyClock::now() + timeout;
  for (;;) {
    Status s = check();
    if (s.ok() || SteadyClock::now() >= deadline) return s;
    std::this_thread::sleep_for(milliseconds(50));
  }
}

std::vector<std::string> DataNodeConfig(const RedisOptions& o) {
  // No snapshots; a replica's full sync starts at once (the default waits 5 s for more replicas).
  std::vector<std::string> lines = {"save \"\"", "repl-diskless-sync-delay 0"};
  if (!o.password.empty()) {
    lines.push_back("requirepass " + o.password);
    lines.push_back("masterauth " + o.password);
  }
  lines.push_back(o.appendonly ? "appendonly yes" : "appendonly no");
  if (o.appendonly && !o.appendfsync.empty()) lines.push_back("appendfsync " + o.appendfsync);
  lines.insert(lines.end(), o.extra_config.begin(), o.extra_config.end());
  return lines;
}

}  // namespace

std::string RedisServerPath() { return FindOnPath("CQ_REDIS_SERVER", "redis-server"); }
std::string RedisCliPath() { return FindOnPath("CQ_REDIS_CLI", "redis-cli"); }

uint16_t PickFreeRedisPort() {
  static std::mutex mu;
  static std::set<uint16_t> given;
  std::lock_guard<std::mutex> lock(mu);
  for (int attempt = 0; attempt < 500; ++attempt) {
    uint16_t port = 0;
    if (!CanBind(0, &port)) continue;
    if (port == 0 || port >= 55000 || given.count(port) != 0) continue;
    if (!CanBind(static_cast<uint16_t>(port + 10000), nullptr)) continue;
    given.insert(port);
    return port;
  }
  return 0;
}

// ---------------------------------------------------------------------------------------------
// RedisReply, RedisConn

std::string RedisReply::ToString() const {
  switch (type) {
    case Type::kNil:
      return "(nil)";
    case Type::kString:
      return fmt::format("\"{}\"", str);
    case Type::kStatus:
      return str;
    case Type::kError:
      return "(error) " + str;
    case Type::kInteger:
      return fmt::format("(integer) {}", integer);
    case Type::kArray: {
      std::string out = "[";
      for (size_t i = 0; i < elements.size(); ++i) {
        if (i > 0) out += ", ";
        out += elements[i].ToString();
      }
      return out + "]";
    }
  }
  return "?";
}

struct RedisConn::Impl {
  redisContext* ctx = nullptr;
  ~Impl() {
    if (ctx != nullptr) redisFree(ctx);
  }
};

namespace {

RedisReply Convert(const redisReply* r) {
  RedisReply out;
  switch (r->type) {
    case REDIS_REPLY_STRING:
      out.type = RedisReply::Type::kString;
      out.str.assign(r->str, r->len);
      break;
    case REDIS_REPLY_STATUS:
      out.type = RedisReply::Type::kStatus;
      out.str.assign(r->str, r->len);
      break;
    case REDIS_REPLY_ERROR:
      out.type = RedisReply::Type::kError;
      out.str.assign(r->str, r->len);
      break;
    case REDIS_REPLY_INTEGER:
      out.type = RedisReply::Type::kInteger;
      out.integer = r->integer;
      break;
    case REDIS_REPLY_ARRAY:
      out.type = RedisReply::Type::kArray;
      for (size_t i = 0; i < r->elements; ++i) out.elements.push_back(Convert(r->element[i]));
      break;
    default:
      out.type = RedisReply::Type::kNil;
  }
  return out;
}

timeval ToTimeval(milliseconds t) {
  timeval tv{};
  tv.tv_sec = static_cast<time_t>(t.count() / 1000);
  tv.tv_usec = static_cast<suseconds_t>((t.count() % 1000) * 1000);
  return tv;
}

}  // namespace

RedisConn::RedisConn() : impl_(std::make_unique<Impl>()) {}
RedisConn::~RedisConn() = default;
RedisConn::RedisConn(RedisConn&&) noexcept = default;
RedisConn& RedisConn::operator=(RedisConn&&) noexcept = default;

Result<RedisConn> RedisConn::Connect(uint16_t port, std::string_view password,
                                     milliseconds timeout) {
  redisContext* ctx = redisConnectWithTimeout("127.0.0.1", port, ToTimeval(timeout));
  if (ctx == nullptr) return Internal("hiredis could not allocate a context");
  if (ctx->err != 0) {
    std::string why = ctx->errstr;
    redisFree(ctx);
    return Unavailable(fmt::format("connect to 127.0.0.1:{}: {}", port, why));
  }
  redisSetTimeout(ctx, ToTimeval(timeout));
  RedisConn conn;
  conn.impl_->ctx = ctx;
  if (!password.empty()) {
    Result<RedisReply> r = conn.Command({"AUTH", std::string(password)});
    if (!r.has_value()) return r.error();
    if (r->is_error()) {
      return Unavailable(fmt::format("AUTH on 127.0.0.1:{} refused: {}", port, r->str));
    }
  }
  return conn;
}

Result<RedisReply> RedisConn::Command(const std::vector<std::string>& args) {
  redisContext* ctx = impl_ ? impl_->ctx : nullptr;
  if (ctx == nullptr) return InvalidState("RedisConn is not connected");
  if (ctx->err != 0) return Unavailable(fmt::format("connection broken: {}", ctx->errstr));
  std::vector<const char*> argv;
  std::vector<size_t> lens;
  for (const auto& a : args) {
    argv.push_back(a.data());
    lens.push_back(a.size());
  }
  auto* reply = static_cast<redisReply*>(
      redisCommandArgv(ctx, static_cast<int>(args.size()), argv.data(), lens.data()));
  if (reply == nullptr) {
    return Unavailable(fmt::format("{} failed: {}", args.empty() ? "" : args[0], ctx->errstr));
  }
  RedisReply out = Convert(reply);
  freeReplyObject(reply);
  return out;
}

Result<RedisReply> RedisCommandOnce(uint16_t port, const std::vector<std::string>& args,
                                    std::string_view password) {
  Result<RedisConn> c = RedisConn::Connect(port, password);
  if (!c.has_value()) return c.error();
  return c->Command(args);
}

Result<std::string> RunRedisCli(const std::vector<std::string>& args, milliseconds timeout) {
  std::string cli = RedisCliPath();
  if (cli.empty()) return Unavailable("redis-cli not found (set CQ_REDIS_CLI or PATH)");
  std::string out_tmpl = TempTemplate("chronoq_rcli_out_");
  std::string err_tmpl = TempTemplate("chronoq_rcli_err_");
  int out_fd = ::mkstemp(out_tmpl.data());
  int err_fd = ::mkstemp(err_tmpl.data());
  std::vector<std::string> argv = {cli};
  argv.insert(argv.end(), args.begin(), args.end());
  Argv a(argv);
  pid_t pid = (out_fd >= 0 && err_fd >= 0) ? Spawn(a, out_fd, err_fd) : -1;
  if (out_fd >= 0) ::close(out_fd);
  if (err_fd >= 0) ::close(err_fd);
  int wstatus = 0;
  bool ended = pid > 0 && WaitPid(pid, timeout, &wstatus);
  if (pid > 0 && !ended) {
    ::kill(pid, SIGKILL);
    ::waitpid(pid, &wstatus, 0);
  }
  std::string out = ReadFile(out_tmpl);
  std::string err = ReadFile(err_tmpl);
  ::unlink(out_tmpl.c_str());
  ::unlink(err_tmpl.c_str());
  std::string cmdline = fmt::format("{}", fmt::join(argv, " "));
  if (pid <= 0) return Internal(fmt::format("could not run {}: {}", cmdline, std::strerror(errno)));
  if (!ended) {
    return Internal(fmt::format("{} did not finish within {} ms\nstdout:\n{}\nstderr:\n{}", cmdline,
                                timeout.count(), out, err));
  }
  if (!WIFEXITED(wstatus) || WEXITSTATUS(wstatus) != 0) {
    return Internal(fmt::format("{} {}\nstdout:\n{}\nstderr:\n{}", cmdline,
                                DescribeWaitStatus(wstatus), out, err));
  }
  return out;
}

// ---------------------------------------------------------------------------------------------
// RedisNode

RedisNode::~RedisNode() { Kill(); }

std::string RedisNode::LogTail(size_t lines) const {
  std::string log = Tail(ReadFile(dir_ + "/redis.log"), lines);
  std::string out = ReadFile(dir_ + "/stdout.log");
  if (!out.empty())
    log += (log.empty() ? "" : "\n") + std::string("(stdout/stderr):\n") + Tail(out, lines);
  return log.empty() ? "(empty)" : log;
}

Status RedisNode::WriteConfig() const {
  std::ofstream f(dir_ + "/redis.conf", std::ios::trunc);
  f << "bind 127.0.0.1\n"
    << "port " << port_ << "\n"
    << "protected-mode no\n"
    << "daemonize no\n"
    << "dir " << dir_ << "\n"
    << "logfile " << dir_ << "/redis.log\n";
  for (const auto& l : config_lines_) f << l << "\n";
  f.close();
  if (!f) return IOError(fmt::format("cannot write {}/redis.conf", dir_));
  return Status::Ok();
}

Status RedisNode::Start(const std::string& dir, const std::vector<std::string>& config_lines,
                        const std::string& password, bool sentinel, milliseconds timeout) {
  if (running()) return InvalidState("RedisNode::Start on a running node");
  dir_ = dir;
  config_lines_ = config_lines;
  password_ = password;
  sentinel_ = sentinel;
  std::error_code ec;
  std::filesystem::create_directories(dir_, ec);
  if (ec) return IOError(fmt::format("cannot create {}: {}", dir_, ec.message()));
  auto deadline = SteadyClock::now() + timeout;
  Status last;
  for (int attempt = 0; attempt < 5; ++attempt) {
    port_ = PickFreeRedisPort();
    if (port_ == 0) return Unavailable("no free port below 55000 on 127.0.0.1");
    if (Status s = WriteConfig(); !s.ok()) return s;
    bool bind_failed = false;
    auto left = std::chrono::duration_cast<milliseconds>(deadline - SteadyClock::now());
    last = Launch(std::max(left, milliseconds(1000)), &bind_failed);
    if (last.ok() || !bind_failed) return last;
  }
  return last;
}

Status RedisNode::Restart(milliseconds timeout) {
  if (running()) return InvalidState("RedisNode::Restart on a running node");
  if (port_ == 0) return InvalidState("RedisNode::Restart before Start");
  auto deadline = SteadyClock::now() + timeout;
  for (;;) {
    bool bind_failed = false;
    auto left = std::chrono::duration_cast<milliseconds>(deadline - SteadyClock::now());
    Status s = Launch(std::max(left, milliseconds(1000)), &bind_failed);
    // The port may be held for a moment (a connection's local port): try again until the deadline.
    if (s.ok() || !bind_failed || SteadyClock::now() >= deadline) return s;
    std::this_thread::sleep_for(milliseconds(200));
  }
}

Status RedisNode::Launch(milliseconds timeout, bool* bind_failed) {
  *bind_failed = false;
  std::string server = RedisServerPath();
  if (server.empty()) return Unavailable("redis-server not found (set CQ_REDIS_SERVER or PATH)");
  std::string log_path = dir_ + "/redis.log";
  std::string out_path = dir_ + "/stdout.log";
  auto log_size = [&](const std::string& p) {
    std::error_code ec;
    auto n = std::filesystem::file_size(p, ec);
    return ec ? 0 : static_cast<size_t>(n);
  };
  size_t log_from = log_size(log_path);
  size_t out_from = log_size(out_path);
  std::vector<std::string> args = {server, dir_ + "/redis.conf"};
  if (sentinel_) args.push_back("--sentinel");
  Argv a(args);
  int out_fd = ::open(out_path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  if (out_fd < 0) return IOError(fmt::format("cannot open {}: {}", out_path, std::strerror(errno)));
  pid_t pid = Spawn(a, out_fd, out_fd);
  ::close(out_fd);
  if (pid < 0) return Internal(fmt::format("fork failed: {}", std::strerror(errno)));
  pid_ = pid;

  auto fail = [&](const std::string& why) {
    return Unavailable(fmt::format("{} on 127.0.0.1:{} (dir {}) did not start: {}\nlog tail:\n{}",
                                   sentinel_ ? "redis sentinel" : "redis-server", port_, dir_, why,
                                   LogTail()));
  };
  auto deadline = SteadyClock::now() + timeout;
  std::string last_error = "no answer yet";
  for (;;) {
    int wstatus = 0;
    if (::waitpid(pid_, &wstatus, WNOHANG) == pid_) {
      pid_ = -1;
      std::string fresh = ReadFile(log_path).substr(std::min(log_from, log_size(log_path))) +
                          ReadFile(out_path).substr(std::min(out_from, log_size(out_path)));
      *bind_failed = fresh.find("Address already in use") != std::string::npos;
      return fail(fmt::format("it {}", DescribeWaitStatus(wstatus)));
    }
    // Answers PING, and is our process (not another one that won the port).
    Result<RedisConn> c = RedisConn::Connect(port_, password_, milliseconds(500));
    if (c.has_value()) {
      Result<RedisReply> ping = c->Command({"PING"});
      Result<RedisReply> info = c->Command({"INFO", "server"});
      if (!ping.has_value()) {
        last_error = ping.error().message();
      } else if (ping->str != "PONG") {
        last_error = "PING answered " + ping->ToString();
      } else if (!info.has_value() || info->type != RedisReply::Type::kString) {
        last_error = "INFO server failed";
      } else if (InfoField(info->str, "process_id") != std::to_string(pid_)) {
        last_error = fmt::format("port {} is served by process {}, not ours ({})", port_,
                                 InfoField(info->str, "process_id"), pid_);
      } else {
        return Status::Ok();
      }
    } else {
      last_error = c.error().message();
    }
    if (SteadyClock::now() >= deadline) {
      Status s = fail(fmt::format("no PONG within {} ms (last: {})", timeout.count(), last_error));
      Kill();
      return s;
    }
    std::this_thread::sleep_for(milliseconds(20));
  }
}

Status RedisNode::Stop(milliseconds timeout) {
  if (!running()) return InvalidState("RedisNode::Stop: not running");
  ::kill(pid_, SIGTERM);
  int wstatus = 0;
  if (!WaitPid(pid_, timeout, &wstatus)) {
    Kill();
    return Internal(fmt::format("redis on port {} did not exit within {} ms of SIGTERM", port_,
                                timeout.count()));
  }
  pid_ = -1;
  if (!WIFEXITED(wstatus) || WEXITSTATUS(wstatus) != 0) {
    return Internal(fmt::format("redis on port {} {} after SIGTERM\nlog tail:\n{}", port_,
                                DescribeWaitStatus(wstatus), LogTail()));
  }
  return Status::Ok();
}

void RedisNode::Kill() {
  if (pid_ <= 0) return;
  ::kill(pid_, SIGKILL);
  int wstatus = 0;
  ::waitpid(pid_, &wstatus, 0);
  pid_ = -1;
}

// ---------------------------------------------------------------------------------------------
// RedisStandalone

Status RedisStandalone::Start(const RedisOptions& options) {
  if (node_.running()) return InvalidState("RedisStandalone::Start called twice");
  options_ = options;
  return node_.Start(dir_.Sub("redis"), DataNodeConfig(options_), options_.password, false,
                     options_.timeout);
}

std::string RedisStandalone::url() const {
  return fmt::format("redis://{}127.0.0.1:{}", UserInfo(options_.password), port());
}

// ---------------------------------------------------------------------------------------------
// RedisCluster

Status RedisCluster::Start(const RedisOptions& options) {
  if (nodes_[0].running()) return InvalidState("RedisCluster::Start called twice");
  options_ = options;
  auto deadline = SteadyClock::now() + options_.timeout;
  std::vector<std::string> lines = {"cluster-enabled yes", "cluster-config-file nodes.conf",
                                    "cluster-node-timeout 3000"};
  std::vector<std::string> data = DataNodeConfig(options_);
  lines.insert(lines.begin(), data.begin(), data.end());
  for (int i = 0; i < kNodes; ++i) {
    Status s = nodes_[i].Start(dir_.Sub(fmt::format("node{}", i)), lines, options_.password, false,
                               options_.timeout);
    if (!s.ok()) return s;
  }
  std::vector<std::string> args = {"--cluster", "create"};
  for (uint16_t p : ports()) args.push_back(fmt::format("127.0.0.1:{}", p));
  args.push_back("--cluster-yes");
  if (!options_.password.empty()) {
    args.insert(args.end(), {"-a", options_.password, "--no-auth-warning"});
  }
  auto left = [&] {
    return std::max(milliseconds(1000),
                    std::chrono::duration_cast<milliseconds>(deadline - SteadyClock::now()));
  };
  Result<std::string> created = RunRedisCli(args, left());
  if (!created.has_value()) {
    return Unavailable("redis-cli --cluster create failed: " + created.error().message());
  }
  for (int i = 0; i < kNodes; ++i) {
    Status s = PollUntil(left(), [&]() -> Status {
      Result<std::string> info = TextCommand(port(i), {"CLUSTER", "INFO"}, options_.password);
      if (!info.has_value()) return info.error();
      if (InfoField(*info, "cluster_state") != "ok" ||
          InfoField(*info, "cluster_known_nodes") != std::to_string(kNodes)) {
        return Unavailable(fmt::format("CLUSTER INFO on port {}:\n{}", port(i), *info));
      }
      return Status::Ok();
    });
    if (!s.ok()) {
      return Unavailable(fmt::format("cluster not ok: {}\nlog tail of node {}:\n{}", s.message(), i,
                                     nodes_[i].LogTail()));
    }
  }
  return Status::Ok();
}

std::vector<uint16_t> RedisCluster::ports() const {
  std::vector<uint16_t> out;
  for (const auto& n : nodes_) out.push_back(n.port());
  return out;
}

std::string RedisCluster::url() const {
  std::vector<std::string> hosts;
  for (uint16_t p : ports()) hosts.push_back(fmt::format("127.0.0.1:{}", p));
  return fmt::format("redis-cluster://{}{}", UserInfo(options_.password), fmt::join(hosts, ","));
}

Result<RedisReply> RedisCluster::Command(const std::vector<std::string>& args, int first) {
  if (first < 0) {
    for (int i = 0; i < kNodes && first < 0; ++i) {
      if (nodes_[i].running()) first = i;
    }
    if (first < 0) return Unavailable("no cluster node is running");
  }
  uint16_t port = nodes_[first].port();
  bool asking = false;
  for (int hop = 0; hop < 5; ++hop) {
    Result<RedisConn> c = RedisConn::Connect(port, options_.password);
    if (!c.has_value()) return c.error();
    if (asking) {
      Result<RedisReply> a = c->Command({"ASKING"});
      if (!a.has_value()) return a.error();
    }
    Result<RedisReply> r = c->Command(args);
    if (!r.has_value() || !r->is_error()) return r;
    // "MOVED <slot> <host>:<port>" or "ASK <slot> <host>:<port>".
    bool moved = r->str.rfind("MOVED ", 0) == 0;
    asking = r->str.rfind("ASK ", 0) == 0;
    if (!moved && !asking) return r;
    size_t colon = r->str.rfind(':');
    port = static_cast<uint16_t>(std::atoi(r->str.c_str() + colon + 1));
  }
  return Unavailable("too many cluster redirections");
}

// ---------------------------------------------------------------------------------------------
// RedisSentinelSet

Status RedisSentinelSet::Start(const RedisOptions& options) {
  if (master_.running()) return InvalidState("RedisSentinelSet::Start called twice");
  options_ = options;
  auto deadline = SteadyClock::now() + options_.timeout;
  auto left = [&] {
    return std::max(milliseconds(1000),
                    std::chrono::duration_cast<milliseconds>(deadline - SteadyClock::now()));
  };
  const std::string& pw = options_.password;
  std::vector<std::string> data = DataNodeConfig(options_);
  if (Status s = master_.Start(dir_.Sub("master"), data, pw, false, left()); !s.ok()) return s;
  master_port_ = master_.port();
  data.push_back(fmt::format("replicaof 127.0.0.1 {}", master_port_));
  if (Status s = replica_.Start(dir_.Sub("replica"), data, pw, false, left()); !s.ok()) return s;
  Status linked = PollUntil(left(), [&]() -> Status {
    Result<std::string> info = TextCommand(replica_.port(), {"INFO", "replication"}, pw);
    if (!info.has_value()) return info.error();
    if (InfoField(*info, "master_link_status") != "up") {
      return Unavailable("replica's INFO replication:\n" + *info);
    }
    return Status::Ok();
  });
  if (!linked.ok()) {
    return Unavailable(fmt::format("replica did not sync: {}\nreplica log tail:\n{}",
                                   linked.message(), replica_.LogTail()));
  }

  std::string name(kMasterName);
  std::vector<std::string> lines = {
      fmt::format("sentinel monitor {} 127.0.0.1 {} 2", name, master_port_),
      fmt::format("sentinel down-after-milliseconds {} 1000", name),
      fmt::format("sentinel failover-timeout {} 3000", name),
      fmt::format("sentinel parallel-syncs {} 1", name),
  };
  if (!pw.empty()) lines.push_back(fmt::format("sentinel auth-pass {} {}", name, pw));
  for (int i = 0; i < kSentinels; ++i) {
    Status s = sentinels_[i].Start(dir_.Sub(fmt::format("sentinel{}", i)), lines, "", true, left());
    if (!s.ok()) return s;
  }
  for (int i = 0; i < kSentinels; ++i) {
    Status s = PollUntil(left(), [&]() -> Status {
      Result<uint16_t> m = SentinelMasterPort(i);
      if (!m.has_value()) return m.error();
      if (*m != master_port_) return Unavailable(fmt::format("master reported on port {}", *m));
      uint16_t sp = sentinels_[i].port();
      Result<RedisReply> replicas = RedisCommandOnce(sp, {"SENTINEL", "REPLICAS", name});
      if (!replicas.has_value()) return replicas.error();
      if (replicas->elements.size() != 1) {
        return Unavailable("replicas known: " + replicas->ToString());
      }
      Result<RedisReply> others = RedisCommandOnce(sp, {"SENTINEL", "SENTINELS", name});
      if (!others.has_value()) return others.error();
      if (others->elements.size() != kSentinels - 1) {
        return Unavailable("other sentinels known: " + others->ToString());
      }
      return Status::Ok();
    });
    if (!s.ok()) {
      return Unavailable(fmt::format("sentinel {} (port {}) not ready: {}\nlog tail:\n{}", i,
                                     sentinels_[i].port(), s.message(), sentinels_[i].LogTail()));
    }
  }
  return Status::Ok();
}

std::vector<uint16_t> RedisSentinelSet::sentinel_ports() const {
  std::vector<uint16_t> out;
  for (const auto& s : sentinels_) out.push_back(s.port());
  return out;
}

std::string RedisSentinelSet::url() const {
  std::vector<std::string> hosts;
  for (uint16_t p : sentinel_ports()) hosts.push_back(fmt::format("127.0.0.1:{}", p));
  return fmt::format("redis-sentinel://{}{}/{}", UserInfo(options_.password), fmt::join(hosts, ","),
                     kMasterName);
}

void RedisSentinelSet::KillMaster() { NodeOnPort(master_port_).Kill(); }

Result<uint16_t> RedisSentinelSet::SentinelMasterPort(int i) {
  Result<RedisReply> r = RedisCommandOnce(
      sentinels_[i].port(), {"SENTINEL", "GET-MASTER-ADDR-BY-NAME", std::string(kMasterName)});
  if (!r.has_value()) return r.error();
  if (r->elements.size() != 2) {
    return Unavailable(fmt::format("sentinel {} answered {}", i, r->ToString()));
  }
  int port = std::atoi(r->elements[1].str.c_str());
  if (port <= 0 || port > 65535) {
    return Unavailable(fmt::format("sentinel {} answered {}", i, r->ToString()));
  }
  return static_cast<uint16_t>(port);
}

Result<uint16_t> RedisSentinelSet::WaitForFailover(milliseconds timeout) {
  uint16_t old_port = master_port_;
  uint16_t promoted = 0;
  Status s = PollUntil(timeout, [&]() -> Status {
    std::vector<std::string> seen;
    std::set<uint16_t> ports;
    for (int i = 0; i < kSentinels; ++i) {
      if (!sentinels_[i].running()) continue;
      Result<uint16_t> p = SentinelMasterPort(i);
      seen.push_back(p.has_value() ? std::to_string(*p) : p.error().message());
      ports.insert(p.has_value() ? *p : 0);
    }
    std::string views = fmt::format("sentinels report [{}]", fmt::join(seen, ", "));
    if (ports.size() != 1 || *ports.begin() == old_port || *ports.begin() == 0) {
      return Unavailable(views);
    }
    uint16_t candidate = *ports.begin();
    Result<RedisReply> role = RedisCommandOnce(candidate, {"ROLE"}, options_.password);
    if (!role.has_value()) return role.error();
    if (role->elements.empty() || role->elements[0].str != "master") {
      return Unavailable(
          fmt::format("{}; ROLE on {} answers {}", views, candidate, role->ToString()));
    }
    promoted = candidate;
    return Status::Ok();
  });
  if (!s.ok()) {
    return Unavailable(fmt::format("no failover from port {} within {} ms: {}\nsentinel 0 log:\n{}",
                                   old_port, timeout.count(), s.message(),
                                   sentinels_[0].LogTail()));
  }
  master_port_ = promoted;
  return promoted;
}

}  // namespace chronoq::testutil
