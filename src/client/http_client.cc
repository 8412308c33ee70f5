#include "client/http_client.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <fmt/format.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cstdlib>
#include <cstring>

namespace chronoq::client {
namespace {

using Clock = std::chrono::steady_clock;

bool IEquals(std::string_view a, std::string_view b) {
  return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) {
           return std::tolower(static_cast<unsigned char>(x)) ==
                  std::tolower(static_cast<unsigned char>(y));
         });
}

int MillisLeft(Clock::time_point deadline) {
  auto left =
      std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
  return static_cast<int>(std::clamp<int64_t>(left, 0, INT32_MAX));
}

}  // namespace

std::string Response::Header(std::string_view name) const {
  for (const auto& [k, v] : headers) {
    if (IEquals(k, name)) return v;
  }
  return "";
}

std::string ChooseServerUrl(std::string_view flag) {
  if (!flag.empty()) return std::string(flag);
  if (const char* env = std::getenv("CHRONOQ_SERVER"); env != nullptr && *env != '\0') return env;
  return std::string(kDefaultServerUrl);
}

Result<Endpoint> ParseServerUrl(std::string_view url) {
  Endpoint ep;
  if (url.rfind("http://", 0) == 0) {
    url.remove_prefix(7);
  } else if (url.rfind("https://", 0) == 0) {
    url.remove_prefix(8);
    ep.tls = true;
  }
  url = url.substr(0, url.find('/'));
  size_t colon = url.rfind(':');
  if (colon != std::string_view::npos && url.find(']', colon) != std::string_view::npos) {
    colon = std::string_view::npos;  // "[::1]": the colon is the address's
  }
  if (colon == std::string_view::npos) {
    ep.host = std::string(url);
    ep.port = ep.tls ? 443 : 80;
  } else {
    ep.host = std::string(url.substr(0, colon));
    std::string_view p = url.substr(colon + 1);
    unsigned v = 0;
    auto [ptr, ec] = std::from_chars(p.data(), p.data() + p.size(), v);
    if (ec != std::errc() || ptr != p.data() + p.size() || v == 0 || v > 65535) {
      return InvalidArgument(fmt::format("'{}' is not a valid port", p));
    }
    ep.port = static_cast<uint16_t>(v);
  }
  if (ep.host.size() > 2 && ep.host.front() == '[') ep.host = ep.host.substr(1, ep.host.size() - 2);
  if (ep.host.empty()) return InvalidArgument("server URL has no host");
  return ep;
}

HttpConnection::~HttpConnection() { Close(); }

HttpConnection::HttpConnection(HttpConnection&& o) noexcept
    : fd_(o.fd_),
      ep_(std::move(o.ep_)),
      buf_(std::move(o.buf_)),
      tls_(std::move(o.tls_)),
      token_(std::move(o.token_)) {
  o.fd_ = -1;
}

HttpConnection& HttpConnection::operator=(HttpConnection&& o) noexcept {
  if (this != &o) {
    Close();
    fd_ = o.fd_;
    ep_ = std::move(o.ep_);
    buf_ = std::move(o.buf_);
    tls_ = std::move(o.tls_);
    token_ = std::move(o.token_);
    o.fd_ = -1;
  }
  return *this;
}

void HttpConnection::Close() {
  tls_.reset();
  if (fd_ >= 0) ::close(fd_);
  fd_ = -1;
  buf_.clear();
}

Result<HttpConnection> HttpConnection::Connect(const Endpoint& ep,
                                               std::chrono::milliseconds timeout) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* res = nullptr;
  std::string port = std::to_string(ep.port);
  int rc = ::getaddrinfo(ep.host.c_str(), port.c_str(), &hints, &res);
  if (rc != 0) {
    return Unavailable(fmt::format("cannot resolve '{}': {}", ep.host, gai_strerror(rc)));
  }
  std::string last_error = "no address";
  for (addrinfo* ai = res; ai != nullptr; ai = ai->ai_next) {
    int fd =
        ::socket(ai->ai_family, ai->ai_socktype | SOCK_CLOEXEC | SOCK_NONBLOCK, ai->ai_protocol);
    if (fd < 0) {
      last_error = std::strerror(errno);
      continue;
    }
    int r = ::connect(fd, ai->ai_addr, ai->ai_addrlen);
    if (r != 0 && errno == EINPROGRESS) {
      pollfd p{fd, POLLOUT, 0};
      r = ::poll(&p, 1, static_cast<int>(timeout.count()));
      if (r == 1) {
        int err = 0;
        socklen_t len = sizeof(err);
        ::getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len);
        r = err == 0 ? 0 : -1;
        errno = err;
      } else {
        if (r == 0) errno = ETIMEDOUT;
        r = -1;
      }
    }
    if (r == 0) {
      int one = 1;
      ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
      ::freeaddrinfo(res);
      HttpConnection c;
      c.fd_ = fd;
      c.ep_ = ep;
      if (ep.tls) {
        CQ_ASSIGN_OR_RETURN(c.tls_, tls::ClientSession::Handshake(fd, ep.host, ep.tls_options,
                                                                  Clock::now() + timeout));
      }
      return c;
    }
    last_error = std::strerror(errno);
    ::close(fd);
  }
  ::freeaddrinfo(res);
  return Unavailable(fmt::format("cannot connect to {}:{}: {}", ep.host, ep.port, last_error));
}

std::string HttpConnection::Format(std::string_view method, std::string_view target,
                                   std::string_view body, std::string_view content_type) const {
  std::string out;
  out.reserve(128 + body.size());
  out += method;
  out += ' ';
  out += target;
  out += " HTTP/1.1\r\nHost: ";
  out += ep_.host;
  out += ':';
  out += std::to_string(ep_.port);
  out += "\r\n";
  if (!token_.empty()) {
    out += "Authorization: Bearer ";
    out += token_;
    out += "\r\n";
  }
  if (!body.empty() || method == "POST") {
    out += "Content-Type: ";
    out += content_type;
    out += "\r\nContent-Length: ";
    out += std::to_string(body.size());
    out += "\r\n";
  }
  out += "\r\n";
  out += body;
  return out;
}

Status HttpConnection::SendRaw(std::string_view bytes) {
  if (fd_ < 0) return Unavailable("not connected");
  size_t sent = 0;
  while (sent < bytes.size()) {
    if (tls_ != nullptr) {
      long n = tls_->Write(bytes.data() + sent, bytes.size() - sent);
      if (n > 0) {
        sent += static_cast<size_t>(n);
        continue;
      }
      if (n == tls::ClientSession::kWantRead || n == tls::ClientSession::kWantWrite) {
        pollfd p{fd_, static_cast<short>(n == tls::ClientSession::kWantRead ? POLLIN : POLLOUT), 0};
        ::poll(&p, 1, 30'000);
        continue;
      }
      return Unavailable(n == 0 ? "the server closed the connection" : tls_->error());
    }
    ssize_t n = ::send(fd_, bytes.data() + sent, bytes.size() - sent, MSG_NOSIGNAL);
    if (n > 0) {
      sent += static_cast<size_t>(n);
      continue;
    }
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
      pollfd p{fd_, POLLOUT, 0};
      ::poll(&p, 1, 30'000);
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    return Unavailable(fmt::format("send failed: {}", std::strerror(errno)));
  }
  return Status::Ok();
}

Status HttpConnection::Fill(Clock::time_point deadline) {
  if (fd_ < 0) return Unavailable("not connected");
  char tmp[64 * 1024];
  for (;;) {
    if (tls_ != nullptr) {
      long n = tls_->Read(tmp, sizeof(tmp));
      if (n > 0) {
        buf_.append(tmp, static_cast<size_t>(n));
        return Status::Ok();
      }
      if (n == 0) return Unavailable("the server closed the connection");
      if (n == tls::ClientSession::kFailed) return Unavailable(tls_->error());
      pollfd p{fd_, static_cast<short>(n == tls::ClientSession::kWantRead ? POLLIN : POLLOUT), 0};
      int r = ::poll(&p, 1, MillisLeft(deadline));
      if (r == 0) return Status(Errc::kTimeout, "no response from the server in time");
      continue;
    }
    ssize_t n = ::recv(fd_, tmp, sizeof(tmp), 0);
    if (n > 0) {
      buf_.append(tmp, static_cast<size_t>(n));
      return Status::Ok();
    }
    if (n == 0) return Unavailable("the server closed the connection");
    if (errno == EINTR) continue;
    if (errno != EAGAIN && errno != EWOULDBLOCK) {
      return Unavailable(fmt::format("receive failed: {}", std::strerror(errno)));
    }
    pollfd p{fd_, POLLIN, 0};
    int r = ::poll(&p, 1, MillisLeft(deadline));
    if (r == 0) return Status(Errc::kTimeout, "no response from the server in time");
    if (r < 0 && errno != EINTR) return Unavailable(std::strerror(errno));
  }
}

Result<Response> HttpConnection::ReadResponse(std::chrono::milliseconds timeout) {
  Clock::time_point deadline = Clock::now() + timeout;
  for (;;) {
    size_t end;
    while ((end = buf_.find("\r\n\r\n")) == std::string::npos) CQ_RETURN_IF_ERROR(Fill(deadline));
    Response r;
    std::string_view head(buf_.data(), end);
    size_t line_end = head.find("\r\n");
    std::string_view status_line = head.substr(0, line_end);
    size_t sp = status_line.find(' ');
    if (sp == std::string_view::npos || status_line.size() < sp + 4) {
      return Status(Errc::kCorruption, fmt::format("bad status line '{}'", status_line));
    }
    r.version = std::string(status_line.substr(0, sp));
    std::from_chars(status_line.data() + sp + 1, status_line.data() + sp + 4, r.status);
    std::string_view rest = line_end == std::string_view::npos ? "" : head.substr(line_end + 2);
    while (!rest.empty()) {
      size_t e = rest.find("\r\n");
      std::string_view line = rest.substr(0, e);
      rest = e == std::string_view::npos ? "" : rest.substr(e + 2);
      size_t colon = line.find(':');
      if (colon == std::string_view::npos) continue;
      std::string_view v = line.substr(colon + 1);
      while (!v.empty() && v.front() == ' ') v.remove_prefix(1);
      r.headers.emplace_back(std::string(line.substr(0, colon)), std::string(v));
    }
    buf_.erase(0, end + 4);
    if (r.status == 100) continue;  // interim response

    if (IEquals(r.Header("Transfer-Encoding"), "chunked")) {
      for (;;) {
        size_t le;
        while ((le = buf_.find("\r\n")) == std::string::npos) CQ_RETURN_IF_ERROR(Fill(deadline));
        size_t size = std::stoul(buf_.substr(0, le), nullptr, 16);
        while (buf_.size() < le + 2 + size + 2) CQ_RETURN_IF_ERROR(Fill(deadline));
        r.body.append(buf_, le + 2, size);
        buf_.erase(0, le + 2 + size + 2);
        if (size == 0) break;
      }
      return r;
    }
    std::string cl = r.Header("Content-Length");
    if (!cl.empty()) {
      size_t len = std::stoul(cl);
      while (buf_.size() < len) CQ_RETURN_IF_ERROR(Fill(deadline));
      r.body = buf_.substr(0, len);
      buf_.erase(0, len);
      return r;
    }
    // No length: the body runs to the end of the connection.
    for (;;) {
      Status s = Fill(deadline);
      if (s.code() == Errc::kUnavailable) break;
      CQ_RETURN_IF_ERROR(s);
    }
    r.body = std::move(buf_);
    buf_.clear();
    return r;
  }
}

Result<Response> HttpConnection::Request(std::string_view method, std::string_view target,
                                         std::string_view body, std::string_view content_type,
                                         std::chrono::milliseconds timeout) {
  CQ_RETURN_IF_ERROR(SendRaw(Format(method, target, body, content_type)));
  return ReadResponse(timeout);
}

bool HttpConnection::WaitClosed(std::chrono::milliseconds timeout) {
  Clock::time_point deadline = Clock::now() + timeout;
  for (;;) {
    Status s = Fill(deadline);
    if (s.code() == Errc::kUnavailable) return true;
    if (!s.ok()) return false;  // timeout
  }
}

std::string UrlEncode(std::string_view s) {
  static constexpr char kHex[] = "0123456789ABCDEF";
  std::string out;
  out.reserve(s.size() * 3);
  for (unsigned char c : s) {
    if (std::isalnum(c) || c == '-' || c == '_' || c == '.' || c == '~') {
      out.push_back(static_cast<char>(c));
    } else {
      out.push_back('%');
      out.push_back(kHex[c >> 4]);
      out.push_back(kHex[c & 0xf]);
    }
  }
  return out;
}

std::string FormEncode(const std::vector<std::pair<std::string, std::string>>& params) {
  std::string out;
  for (const auto& [k, v] : params) {
    if (!out.empty()) out.push_back('&');
    out += UrlEncode(k);
    out.push_back('=');
    out += UrlEncode(v);
  }
  return out;
}

}  // namespace chronoq::client
