// The HTTP transport: a Boost.Beast client (http:// and https://, TLS through OpenSSL) with
// keep-alive connection pools.
// Each of `http_threads` workers runs one single-threaded io_context and owns its pools (one per
// host:port), so a call and its connection live on one thread and need no lock. Callback style
// (no coroutines): one HttpCall object per attempt steps through connect, write and read.

#include <fmt/format.h>

#include <atomic>
#include <boost/asio/connect.hpp>
#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/ssl.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/write.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <boost/beast/ssl.hpp>
#include <optional>
#include <thread>
#include <unordered_map>
#include <vector>

#include "base/log.h"
#include "push/transport.h"

namespace chronoq::push::internal {
namespace {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using tcp = asio::ip::tcp;
using Clock = std::chrono::steady_clock;
using boost::system::error_code;

constexpr size_t kSnippetBytes = 200;

// One kept-alive connection to a host:port, plain or TLS.
struct Conn {
  Conn(asio::io_context& ioc, asio::ssl::context* tls_context) {
    if (tls_context != nullptr) {
      tls.emplace(ioc, *tls_context);
    } else {
      plain.emplace(ioc);
    }
  }
  beast::tcp_stream& tcp() { return tls ? tls->next_layer() : *plain; }
  // Runs f(stream) on the stream in use.
  template <typename F>
  void With(F&& f) {
    if (tls) {
      f(*tls);
    } else {
      f(*plain);
    }
  }
  std::optional<beast::tcp_stream> plain;
  std::optional<beast::ssl_stream<beast::tcp_stream>> tls;
  beast::flat_buffer buffer;
  Clock::time_point idle_since;
};

// One thread, its io_context and its pools. Everything but `ioc`'s own methods is touched only
// on `thread`.
struct Worker {
  asio::io_context ioc{1};
  asio::executor_work_guard<asio::io_context::executor_type> guard{ioc.get_executor()};
  tcp::resolver resolver{ioc};
  asio::steady_timer sweep{ioc};
  bool sweep_armed = false;
  std::unordered_map<std::string, std::vector<std::unique_ptr<Conn>>> idle;  // by host:port
  std::thread thread;
};

// The answer's first bytes as ASCII text fit for a log line and a JSON string.
std::string Snippet(std::string_view body) {
  std::string out;
  for (char c : body.substr(0, kSnippetBytes)) {
    if (c == '\r' || c == '\n' || c == '\t') {
      out.push_back(' ');
    } else if (static_cast<unsigned char>(c) < 0x20 || static_cast<unsigned char>(c) > 0x7e) {
      out.push_back('.');
    } else {
      out.push_back(c);
    }
  }
  while (!out.empty() && out.back() == ' ') out.pop_back();
  return out;
}

bool ClosedByPeer(const error_code& ec) {
  return ec == asio::error::eof || ec == http::error::end_of_stream ||
         ec == asio::ssl::error::stream_truncated || ec == asio::error::connection_reset ||
         ec == asio::error::broken_pipe || ec == asio::error::connection_aborted;
}

// The TLS client context, made on the first https call: loading the system's authorities costs
// about 100 ms of CPU, which a Pusher without https targets should not pay at start.
class TlsSetup {
 public:
  explicit TlsSetup(const PusherOptions& options) : options_(options) {}

  // The context, or null with *error set when it cannot be made. Thread-safe.
  asio::ssl::context* Get(std::string* error) {
    std::call_once(once_, [this] { Make(); });
    if (!context_) *error = error_;
    return context_.get();
  }

 private:
  void Make() {
    // OpenSSL and Asio report setup failures as exceptions; they stop here, and https calls
    // then fail with the reason.
    try {
      auto ctx = std::make_unique<asio::ssl::context>(asio::ssl::context::tls_client);
      ctx->set_default_verify_paths();
      ctx->set_options(asio::ssl::context::no_sslv2 | asio::ssl::context::no_sslv3 |
                       asio::ssl::context::no_tlsv1 | asio::ssl::context::no_tlsv1_1);
      if (!options_.tls_ca_file.empty()) ctx->load_verify_file(options_.tls_ca_file);
      if (!options_.tls_ca_pem.empty()) {
        ctx->add_certificate_authority(asio::buffer(options_.tls_ca_pem));
      }
      context_ = std::move(ctx);
    } catch (const std::exception& e) {
      error_ = fmt::format("TLS is not available: {}", e.what());
      CQ_LOG_ERROR("cq.push", "https pushes fail: {}", error_);
    }
  }

  const PusherOptions& options_;  // the transport's
  std::once_flag once_;
  std::unique_ptr<asio::ssl::context> context_;  // set once by Make, then read-only
  std::string error_;                            // why context_ is null
};

class HttpCall : public std::enable_shared_from_this<HttpCall> {
 public:
  HttpCall(Worker* worker, const PusherOptions& options, TlsSetup* tls, PushCall call,
           UniqueFunction<void(PushOutcome)> done, Clock::time_point deadline)
      : worker_(worker),
        options_(options),
        tls_(tls),
        call_(std::move(call)),
        done_(std::move(done)),
        deadline_(deadline) {}

  void Run() {
    if (Status st = ParseHttpUrl(call_.url, &url_); !st.ok()) return Fail(st.message());
    key_ = TargetKey(call_);
    if (url_.tls) {
      std::string error;
      tls_context_ = tls_->Get(&error);
      if (tls_context_ == nullptr) return Fail(fmt::format("https to {}: {}", key_, error));
    }
    pool_key_ = url_.tls ? "https://" + key_ : key_;
    BuildRequest();
    Acquire();
  }

 private:
  // The request's bytes, written by hand: Beast's serializer walks a buffer per header field,
  // which cost more than the rest of a push's user-space work (docs/benchmarks.md). Every
  // value was checked by ValidatePushCall (no CR, LF or NUL).
  void BuildRequest() {
    const bool v6 = url_.host.find(':') != std::string::npos;
    std::string& r = request_;
    r.reserve(256 + call_.body.size());
    r.append(call_.method).append(" ").append(url_.target).append(" HTTP/1.1\r\nHost: ");
    if (v6) {
      r.append("[").append(url_.host).append("]");
    } else {
      r.append(url_.host);
    }
    if (url_.port != (url_.tls ? 443 : 80)) r.append(":").append(std::to_string(url_.port));
    auto given = [&](std::string_view name) {
      for (const auto& h : call_.headers) {
        if (beast::iequals(h.first, name)) return true;
      }
      return false;
    };
    r.append("\r\nX-Chronoq-Msg-Id: ").append(call_.msg_id);
    r.append("\r\nX-Chronoq-Topic: ").append(call_.topic);
    r.append("\r\nX-Chronoq-Attempt: ").append(std::to_string(call_.attempt));
    if (!given("user-agent")) r.append("\r\nUser-Agent: chronoq");
    if (!call_.content_type.empty() && !given("content-type")) {
      r.append("\r\nContent-Type: ").append(call_.content_type);
    }
    for (const auto& [name, value] : call_.headers) {
      // Framing and the idempotency headers stay ours: a call's own Content-Length,
      // Transfer-Encoding, Connection, Host or X-Chronoq-* would contradict them.
      if (beast::iequals(name, "content-length") || beast::iequals(name, "transfer-encoding") ||
          beast::iequals(name, "connection") || beast::iequals(name, "host") ||
          (name.size() >= 10 &&
           beast::iequals(std::string_view(name).substr(0, 10), "x-chronoq-"))) {
        continue;
      }
      r.append("\r\n").append(name).append(": ").append(value);
    }
    r.append("\r\nContent-Length: ").append(std::to_string(call_.body.size()));
    r.append("\r\n\r\n").append(call_.body);
  }

  // Takes a pooled connection (dropping those idle too long), else connects.
  void Acquire() {
    auto it = worker_->idle.find(pool_key_);
    const auto now = Clock::now();
    while (it != worker_->idle.end() && !it->second.empty()) {
      std::unique_ptr<Conn> c = std::move(it->second.back());
      it->second.pop_back();
      if (now - c->idle_since < options_.http_idle_timeout) {
        conn_ = std::move(c);
        reused_ = true;
        return Send();
      }
    }
    Connect();
  }

  void Connect() {
    conn_ = std::make_unique<Conn>(worker_->ioc, url_.tls ? tls_context_ : nullptr);
    reused_ = false;
    error_code ec;
    const auto addr = asio::ip::make_address(url_.host, ec);
    if (!ec) {
      ConnectTo({tcp::endpoint(addr, url_.port)});
      return;
    }
    worker_->resolver.async_resolve(
        url_.host, std::to_string(url_.port),
        [self = shared_from_this()](const error_code& e, tcp::resolver::results_type results) {
          if (e) {
            return self->Fail(
                fmt::format("cannot resolve host '{}': {}", self->url_.host, e.message()));
          }
          self->ConnectTo(std::vector<tcp::endpoint>(results.begin(), results.end()));
        });
  }

  void ConnectTo(std::vector<tcp::endpoint> endpoints) {
    const auto remaining = deadline_ - Clock::now();
    if (remaining <= Clock::duration::zero()) return TimedOut();
    connect_bounded_ = options_.http_connect_timeout < remaining;
    conn_->tcp().expires_after(connect_bounded_ ? Clock::duration(options_.http_connect_timeout)
                                                : remaining);
    conn_->tcp().async_connect(
        endpoints, [self = shared_from_this()](const error_code& ec, const tcp::endpoint&) {
          self->OnConnect(ec);
        });
  }

  void OnConnect(const error_code& ec) {
    if (ec == beast::error::timeout && connect_bounded_) {
      return Fail(fmt::format("connect to {} timed out after {} ms", key_,
                              options_.http_connect_timeout.count()));
    }
    if (ec) return Fail(ErrorSentence(ec));
    error_code ignored;
    conn_->tcp().socket().set_option(tcp::no_delay(true), ignored);
    if (conn_->tls) return Handshake();
    Send();
  }

  void Handshake() {
    auto& tls = *conn_->tls;
    error_code ec;
    asio::ip::make_address(url_.host, ec);
    if (ec) {  // a name, not an address literal: SNI takes names only
      SSL_set_tlsext_host_name(tls.native_handle(), url_.host.c_str());
    }
    tls.set_verify_mode(asio::ssl::verify_peer);
    tls.set_verify_callback(asio::ssl::host_name_verification(url_.host));
    conn_->tcp().expires_at(deadline_);
    tls.async_handshake(asio::ssl::stream_base::client, [self = shared_from_this()](
                                                            const error_code& e) {
      if (e == beast::error::timeout) return self->TimedOut();
      if (e) {
        return self->Fail(fmt::format("TLS handshake with {} failed: {}", self->key_, e.message()));
      }
      self->Send();
    });
  }

  void Send() {
    conn_->tcp().expires_at(deadline_);
    conn_->With([&](auto& stream) {
      asio::async_write(
          stream, asio::buffer(request_),
          [self = shared_from_this()](const error_code& ec, size_t) { self->OnWrite(ec); });
    });
  }

  void OnWrite(const error_code& ec) {
    if (ec) {
      if (reused_ && ClosedByPeer(ec)) return Retry();
      return Fail(ErrorSentence(ec));
    }
    parser_.emplace();
    parser_->body_limit(options_.http_max_answer_bytes);
    if (call_.method == "HEAD") parser_->skip(true);
    conn_->With([&](auto& stream) {
      http::async_read(
          stream, conn_->buffer, *parser_,
          [self = shared_from_this()](const error_code& e, size_t) { self->OnRead(e); });
    });
  }

  void OnRead(const error_code& ec) {
    if (ec == http::error::body_limit && parser_->is_header_done()) {
      keep_ = false;
      return Answered();
    }
    if (ec) {
      if (reused_ && ClosedByPeer(ec) && !parser_->got_some()) return Retry();
      if (ClosedByPeer(ec) || ec == http::error::partial_message) {
        return Fail(parser_->got_some() ? "connection closed in the middle of the answer"
                                        : "connection closed before the answer");
      }
      if (ec == beast::error::timeout) return TimedOut();
      if (ec.category() == http::make_error_code(http::error::end_of_stream).category()) {
        return Fail(fmt::format("bad HTTP answer from {}: {}", key_, ec.message()));
      }
      return Fail(ErrorSentence(ec));
    }
    keep_ = parser_->keep_alive();
    Answered();
  }

  void Answered() {
    const auto& res = parser_->get();
    PushOutcome out;
    out.code = static_cast<int>(res.result_int());
    if (out.code >= 200 && out.code < 300) {
      out.ok = true;
    } else {
      std::string_view reason = res.reason();
      if (reason.empty()) reason = http::obsolete_reason(res.result());
      std::string snippet = Snippet(res.body());
      out.error = snippet.empty() ? fmt::format("HTTP {} {}", out.code, reason)
                                  : fmt::format("HTTP {} {}: {}", out.code, reason, snippet);
    }
    if (keep_) Release();
    Complete(std::move(out));
  }

  // A pooled connection the server had closed meanwhile: once more on a fresh one.
  void Retry() {
    if (retried_) return Fail("connection closed before the answer");
    retried_ = true;
    conn_.reset();
    Connect();
  }

  void Release() {
    conn_->idle_since = Clock::now();
    conn_->tcp().expires_never();
    worker_->idle[pool_key_].push_back(std::move(conn_));
    ArmSweep(worker_, options_.http_idle_timeout);
  }

  static void ArmSweep(Worker* w, std::chrono::milliseconds idle_timeout) {
    if (w->sweep_armed) return;
    auto oldest = Clock::time_point::max();
    for (const auto& [key, conns] : w->idle) {
      for (const auto& c : conns) oldest = std::min(oldest, c->idle_since);
    }
    if (oldest == Clock::time_point::max()) return;
    w->sweep_armed = true;
    w->sweep.expires_at(oldest + idle_timeout);
    w->sweep.async_wait([w, idle_timeout](const error_code& ec) {
      w->sweep_armed = false;
      if (ec) return;
      const auto now = Clock::now();
      for (auto it = w->idle.begin(); it != w->idle.end();) {
        auto& conns = it->second;
        std::erase_if(conns, [&](const std::unique_ptr<Conn>& c) {
          return now - c->idle_since >= idle_timeout;
        });
        it = conns.empty() ? w->idle.erase(it) : std::next(it);
      }
      ArmSweep(w, idle_timeout);
    });
  }

  std::string ErrorSentence(const error_code& ec) {
    if (ec == asio::error::connection_refused) return fmt::format("connection refused to {}", key_);
    if (ec == beast::error::timeout) return TimedOutSentence();
    if (ClosedByPeer(ec)) return "connection closed before the answer";
    if (ec == asio::error::network_unreachable || ec == asio::error::host_unreachable) {
      return fmt::format("{} unreachable: {}", key_, ec.message());
    }
    return fmt::format("push to {} failed: {}", key_, ec.message());
  }

  std::string TimedOutSentence() const {
    return fmt::format("timed out after {} ms", call_.timeout.count());
  }
  void TimedOut() { Fail(TimedOutSentence()); }

  void Fail(std::string error) {
    conn_.reset();
    PushOutcome out;
    out.error = std::move(error);
    if (parser_ && parser_->is_header_done()) out.code = parser_->get().result_int();
    Complete(std::move(out));
  }

  void Complete(PushOutcome out) {
    if (done_) {
      auto done = std::move(done_);
      done(std::move(out));
    }
  }

  Worker* const worker_;  // outlives this (destroyed with the transport, after its io_context)
  const PusherOptions& options_;               // the transport's
  TlsSetup* const tls_;                        // the transport's
  asio::ssl::context* tls_context_ = nullptr;  // tls_'s, for an https call
  PushCall call_;
  UniqueFunction<void(PushOutcome)> done_;
  const Clock::time_point deadline_;
  HttpUrl url_;
  std::string key_;
  std::string pool_key_;  // key_, prefixed with "https://" for TLS connections
  std::string request_;   // the request's bytes
  std::optional<http::response_parser<http::string_body>> parser_;
  std::unique_ptr<Conn> conn_;
  bool reused_ = false;           // conn_ came from the pool
  bool retried_ = false;          // Retry() ran once
  bool connect_bounded_ = false;  // the connect timeout, not the call's, bounds the connect
  bool keep_ = false;             // the answer allows reusing the connection
};

class HttpTransport final : public Transport {
 public:
  explicit HttpTransport(const PusherOptions& options) : options_(options) {
    const int n = std::max(1, options_.http_threads);
    for (int i = 0; i < n; ++i) {
      auto w = std::make_unique<Worker>();
      Worker* raw = w.get();
      w->thread = std::thread([raw] {
        pthread_setname_np(pthread_self(), "cq-push-http");
        try {
          raw->ioc.run();
        } catch (const std::exception& e) {
          CQ_LOG_ERROR("cq.push", "HTTP push thread failed: {}", e.what());
        }
      });
      workers_.push_back(std::move(w));
    }
  }

  ~HttpTransport() override { Stop(); }

  void Start(PushCall call, UniqueFunction<void(PushOutcome)> done) override {
    if (stopped_.load()) return;  // dropped: the Pusher answers it
    const auto deadline = Clock::now() + call.timeout;
    Worker* w = workers_[next_.fetch_add(1, std::memory_order_relaxed) % workers_.size()].get();
    auto c =
        std::make_shared<HttpCall>(w, options_, &tls_, std::move(call), std::move(done), deadline);
    asio::post(w->ioc, [c] { c->Run(); });
  }

  void Stop() override {
    if (stopped_.exchange(true)) return;
    for (auto& w : workers_) {
      w->ioc.stop();
      if (w->thread.joinable()) w->thread.join();
    }
  }

 private:
  const PusherOptions options_;
  TlsSetup tls_{options_};
  std::vector<std::unique_ptr<Worker>> workers_;
  std::atomic<size_t> next_{0};
  std::atomic<bool> stopped_{false};
};

}  // namespace

std::unique_ptr<Transport> NewHttpTransport(const PusherOptions& options) {
  return std::make_unique<HttpTransport>(options);
}

}  // namespace chronoq::push::internal
