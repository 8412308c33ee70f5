#include "push/testing/http_receiver.h"

#include <fmt/format.h>
#include <pthread.h>
#include <strings.h>

#include <atomic>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/ssl.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <boost/beast/ssl.hpp>
#include <list>
#include <thread>

#include "base/check.h"
#include "base/mutex.h"

namespace chronoq::push::testing {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using tcp = asio::ip::tcp;
using boost::system::error_code;

std::string ReceivedRequest::Header(std::string_view name) const {
  for (const auto& [k, v] : headers) {
    if (k.size() == name.size() && strncasecmp(k.data(), name.data(), k.size()) == 0) return v;
  }
  return "";
}

struct HttpReceiver::Impl {
  explicit Impl(Options o) : options(std::move(o)) {}

  void Accept();
  void Record(const http::request<http::string_body>& req) CQ_EXCLUDES(mu);

  const Options options;
  asio::io_context ioc;
  std::unique_ptr<asio::ssl::context> tls;  // HTTPS when set
  tcp::acceptor acceptor{ioc};
  uint16_t port = 0;
  std::vector<std::thread> threads;
  std::atomic<size_t> connections{0};
  std::atomic<size_t> count{0};

  mutable base::Mutex mu;
  mutable base::CondVar cv;
  std::vector<ReceivedRequest> requests CQ_GUARDED_BY(mu);
};

namespace {

template <typename Stream>
class Session : public std::enable_shared_from_this<Session<Stream>> {
 public:
  template <typename... Args>
  explicit Session(HttpReceiver::Impl* impl, Args&&... args)
      : impl_(impl), stream_(std::forward<Args>(args)...), timer_(impl->ioc) {}

  void Start() {
    if constexpr (std::is_same_v<Stream, beast::tcp_stream>) {
      Read();
    } else {
      stream_.async_handshake(asio::ssl::stream_base::server,
                              [self = this->shared_from_this()](error_code ec) {
                                if (!ec) self->Read();
                              });
    }
  }

  void Read() {
    req_ = {};
    http::async_read(
        stream_, buffer_, req_,
        [self = this->shared_from_this()](error_code ec, size_t) { self->OnRead(ec); });
  }

 private:
  void OnRead(error_code ec) {
    if (ec) return;  // closed or broken: the session ends
    impl_->Record(req_);
    if (impl_->options.mode == HttpReceiver::Mode::kHang) {
      // Never answers; reading on keeps the connection (and this session) until the peer goes.
      return Read();
    }
    if (impl_->options.answer_delay.count() > 0) {
      timer_.expires_after(impl_->options.answer_delay);
      timer_.async_wait([self = this->shared_from_this()](error_code) { self->Answer(); });
      return;
    }
    Answer();
  }

  void Answer() {
    res_ = {};
    res_.version(11);
    res_.result(static_cast<unsigned>(impl_->options.status));
    res_.set(http::field::content_type, "text/plain");
    const int status = impl_->options.status;
    // 1xx, 204 and 304 answers have no body (Beast refuses to frame one).
    if (status >= 200 && status != 204 && status != 304) res_.body() = impl_->options.body;
    res_.keep_alive(req_.keep_alive());
    res_.prepare_payload();
    http::async_write(stream_, res_, [self = this->shared_from_this()](error_code e, size_t) {
      if (e) return;
      if (!self->res_.keep_alive() || self->impl_->options.close_after_answer) {
        error_code ignored;
        beast::get_lowest_layer(self->stream_)
            .socket()
            .shutdown(tcp::socket::shutdown_send, ignored);
        return;
      }
      self->Read();
    });
  }

  HttpReceiver::Impl* const impl_;  // outlives every session (stopped before it goes)
  Stream stream_;
  asio::steady_timer timer_;  // answer_delay
  beast::flat_buffer buffer_;
  http::request<http::string_body> req_;
  http::response<http::string_body> res_;
};

}  // namespace

void HttpReceiver::Impl::Accept() {
  acceptor.async_accept([this](error_code ec, tcp::socket socket) {
    if (ec == asio::error::operation_aborted) return;
    if (!ec) {
      connections.fetch_add(1);
      if (options.mode == Mode::kClose) {
        error_code ignored;
        socket.close(ignored);
      } else {
        error_code ignored;
        socket.set_option(tcp::no_delay(true), ignored);
        if (tls) {
          std::make_shared<Session<beast::ssl_stream<beast::tcp_stream>>>(this, std::move(socket),
                                                                          *tls)
              ->Start();
        } else {
          std::make_shared<Session<beast::tcp_stream>>(this, std::move(socket))->Start();
        }
      }
    }
    Accept();
  });
}

void HttpReceiver::Impl::Record(const http::request<http::string_body>& req) {
  if (!options.record) {
    count.fetch_add(1);
    return;
  }
  ReceivedRequest r;
  r.method = std::string(req.method_string());
  r.target = std::string(req.target());
  for (const auto& f : req) r.headers.emplace_back(f.name_string(), f.value());
  r.body = req.body();
  r.at = std::chrono::steady_clock::now();
  base::MutexLock lock(mu);
  requests.push_back(std::move(r));
  count.fetch_add(1);
  cv.SignalAll();
}

HttpReceiver::HttpReceiver(Options options) : impl_(std::make_unique<Impl>(std::move(options))) {
  Impl& im = *impl_;
  if (!im.options.tls_cert_pem.empty()) {
    im.tls = std::make_unique<asio::ssl::context>(asio::ssl::context::tls_server);
    im.tls->use_certificate_chain(asio::buffer(im.options.tls_cert_pem));
    im.tls->use_private_key(asio::buffer(im.options.tls_key_pem), asio::ssl::context::pem);
  }
  tcp::endpoint ep(asio::ip::make_address("127.0.0.1"), 0);
  im.acceptor.open(ep.protocol());
  im.acceptor.set_option(asio::socket_base::reuse_address(true));
  im.acceptor.bind(ep);
  im.acceptor.listen(im.options.mode == Mode::kNoAccept ? 1 : 1024);
  im.port = im.acceptor.local_endpoint().port();
  if (im.options.mode != Mode::kNoAccept) im.Accept();
  const int n = std::max(1, im.options.threads);
  for (int i = 0; i < n; ++i) {
    im.threads.emplace_back([&im] {
      pthread_setname_np(pthread_self(), "cq-test-recv");
      auto guard = asio::make_work_guard(im.ioc);
      im.ioc.run();
    });
  }
}

HttpReceiver::~HttpReceiver() {
  impl_->ioc.stop();
  for (auto& t : impl_->threads) t.join();
}

uint16_t HttpReceiver::port() const { return impl_->port; }

std::string HttpReceiver::Url(std::string_view path) const {
  return fmt::format("{}://127.0.0.1:{}{}", impl_->tls ? "https" : "http", impl_->port, path);
}

std::string HttpReceiver::HostPort() const { return fmt::format("127.0.0.1:{}", impl_->port); }

std::vector<ReceivedRequest> HttpReceiver::Requests() const {
  base::MutexLock lock(impl_->mu);
  return impl_->requests;
}

size_t HttpReceiver::RequestCount() const { return impl_->count.load(); }

size_t HttpReceiver::Connections() const { return impl_->connections.load(); }

bool HttpReceiver::WaitForRequests(size_t n, std::chrono::milliseconds bound) const {
  const auto deadline = std::chrono::steady_clock::now() + bound;
  base::MutexLock lock(impl_->mu);
  while (impl_->count.load() < n) {
    if (!impl_->cv.WaitUntil(impl_->mu, deadline)) return impl_->count.load() >= n;
  }
  return true;
}

}  // namespace chronoq::push::testing
