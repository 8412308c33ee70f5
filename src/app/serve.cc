#include "app/serve.h"

#include <signal.h>
#include <sys/resource.h>
#include <unistd.h>

#include <cstdio>
#include <functional>
#include <memory>
#include <optional>
#include <vector>

#include "app/backends.h"
#include "app/push_transport.h"
#include "app/start_checks.h"
#include "auth/authenticator.h"
#include "base/clock.h"
#include "base/log.h"
#include "base/scheduler.h"
#include "config/config.h"
#include "core/callback.h"
#include "core/scope.h"
#include "grpc_api/grpc_server.h"
#include "http/dashboard.h"
#include "http/handlers.h"
#include "http/http_metrics.h"
#include "http/router.h"
#include "http/server.h"
#include "http/tls_context.h"
#include "metrics/registry.h"
#include "service/queue_service.h"
#include "tls/identity.h"

namespace chronoq::app {
namespace {

constexpr const char* kLog = "cq.app";

// Blocks the shutdown signals and SIGHUP (reload) in this thread (and so in every thread started
// after), so that sigwait below receives them; ignores SIGPIPE.
sigset_t BlockSignals() {
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGINT);
  sigaddset(&set, SIGTERM);
  sigaddset(&set, SIGHUP);
  pthread_sigmask(SIG_BLOCK, &set, nullptr);
  signal(SIGPIPE, SIG_IGN);
  return set;
}

// File descriptors kept for everything but the HTTP connections: the store's files, Redis
// connections, the listening socket, the event loops, the log.
constexpr int64_t kFdReserve = 256;

// max-connections as the file-descriptor limit allows: the soft limit is raised (toward the hard
// one) when it is too low for `wanted` connections plus kFdReserve; if it stays too low, fewer
// connections are allowed, with a warning. 0 (and *error) when the limit leaves no room at all.
int64_t FitConnectionsToFdLimit(int64_t wanted, std::string* error) {
  rlimit rl{};
  if (::getrlimit(RLIMIT_NOFILE, &rl) != 0) return wanted;
  const rlim_t needed = static_cast<rlim_t>(wanted + kFdReserve);
  if (rl.rlim_cur != RLIM_INFINITY && rl.rlim_cur < needed && rl.rlim_max > rl.rlim_cur) {
    rlimit raised = rl;
    raised.rlim_cur = rl.rlim_max == RLIM_INFINITY ? needed : std::min(rl.rlim_max, needed);
    if (::setrlimit(RLIMIT_NOFILE, &raised) == 0) {
      CQ_LOG_INFO(kLog, "raised the file-descriptor limit from {} to {} for max-connections",
                  rl.rlim_cur, raised.rlim_cur);
      rl = raised;
    }
  }
  if (rl.rlim_cur == RLIM_INFINITY || rl.rlim_cur >= needed) return wanted;
  const int64_t fit = std::max<int64_t>(0, static_cast<int64_t>(rl.rlim_cur) - kFdReserve);
  if (fit == 0) {
    *error = fmt::format(
        "the file-descriptor limit ({}, ulimit -n) leaves no room for connections: {} are kept "
        "for the store and the server itself; raise it",
        rl.rlim_cur, kFdReserve);
  } else {
    CQ_LOG_WARN(kLog,
                "max-connections lowered from {} to {}: the file-descriptor limit is {} (ulimit "
                "-n) and {} are kept for the store and the server itself",
                wanted, fit, rl.rlim_cur, kFdReserve);
  }
  return fit;
}

// One log line per field of a [topics.<name>] table that the topic's stored configuration
// shadows (start_checks.h). Asynchronous: the lines come when the backend answers; a failure to
// read a topic's configuration is logged too, and the start goes on.
void LogShadowedTopicSettings(service::QueueService* service, const config::ServerConfig& cfg) {
  for (const auto& [topic, file] : config::StoreTopicTables(cfg)) {
    service->GetTopicConfig(
        topic, [topic = topic, file = file](Result<service::TopicConfigView> view) {
          if (!view.has_value()) {
            CQ_LOG_WARN(kLog,
                        "cannot read the stored configuration of topic '{}' to compare it "
                        "with the config file's [{}]: {}",
                        core::DisplayTopic(topic), config::TopicTableHeader(topic),
                        view.error().message());
            return;
          }
          for (const std::string& line :
               ShadowedTopicSettings(topic, file, view->config, view->sources)) {
            CQ_LOG_INFO(kLog, "{}", line);
          }
        });
  }
}

tls::TlsFiles TlsFilesOf(const config::ServerConfig& cfg) {
  return tls::TlsFiles{cfg.tls_cert_file, cfg.tls_key_file, cfg.tls_client_ca_file};
}

// What SIGHUP re-reads, in order; each logs what it did (a failure keeps what is in use).
using ReloadList = std::vector<std::function<void()>>;

}  // namespace

int RunServe(const std::vector<std::string>& args) {
  sigset_t signals = BlockSignals();

  // Defaults < --config file < environment < flags; every problem of every source is reported.
  config::LoadResult loaded = config::Load(args, environ);
  if (loaded.help) {
    std::fputs(config::HelpText().c_str(), stdout);
    return 0;
  }
  if (!loaded.errors.empty()) {
    for (const std::string& e : loaded.errors) std::fprintf(stderr, "chronoq: %s\n", e.c_str());
    std::fprintf(stderr, "Run 'chronoq serve --help' for the list of settings.\n");
    return 2;
  }
  const config::ServerConfig& cfg = loaded.config;
  if (loaded.print_config) {
    std::fputs(config::PrintToml(cfg).c_str(), stdout);
    return 0;
  }
  base::LogLevel level = base::LogLevel::kInfo;
  base::ParseLogLevel(cfg.log_level, &level);
  base::InitLogging(level, cfg.log_format == "json");
  WarnIfOpenToTheNetwork(cfg);

  // What SIGHUP reloads (the tokens, the TLS certificate), in order, on this thread.
  ReloadList reloads;
  // Authentication (docs/security.md): a tokens file that does not read is refused at start.
  auth::Authenticator authenticator;
  if (!cfg.auth_tokens_file.empty()) {
    if (Status s = authenticator.Load(cfg.auth_tokens_file); !s.ok()) {
      CQ_LOG_ERROR(kLog, "{}", s.message());
      std::fprintf(stderr, "chronoq: %s\n", s.message().c_str());
      return kExitConfigRefused;
    }
    CQ_LOG_INFO(kLog, "authentication on: {} tokens from {}", authenticator.token_count(),
                cfg.auth_tokens_file);
    reloads.push_back([&authenticator] { authenticator.Reload().IgnoreError(); });
  }

  std::string host;
  uint16_t port = 0;
  config::ParseListen(cfg.listen, &host, &port).IgnoreError();  // validated above
  std::string msg;
  const int64_t max_connections = FitConnectionsToFdLimit(cfg.max_connections, &msg);
  if (max_connections == 0) {
    CQ_LOG_ERROR(kLog, "{}", msg);
    std::fprintf(stderr, "chronoq: %s\n", msg.c_str());
    return 2;
  }

  // TLS (docs/security.md): the files are read and checked now, before the store is opened; a
  // problem stops the start.
  std::unique_ptr<http::TlsContext> tls_context;
  std::optional<tls::TlsIdentity> tls_identity;
  if (TlsFilesOf(cfg).enabled()) {
    Result<tls::TlsIdentity> id = tls::LoadIdentity(TlsFilesOf(cfg));
    Result<std::unique_ptr<http::TlsContext>> ctx =
        id.has_value() ? http::TlsContext::Create(*id)
                       : Result<std::unique_ptr<http::TlsContext>>(id.error());
    if (!ctx.has_value()) {
      CQ_LOG_ERROR(kLog, "{}", ctx.error().message());
      std::fprintf(stderr, "chronoq: %s\n", ctx.error().message().c_str());
      return 2;
    }
    tls_context = std::move(*ctx);
    tls_identity = std::move(*id);
    CQ_LOG_INFO(kLog, "TLS on HTTP{}: {}{}", cfg.grpc_listen.empty() ? "" : " and gRPC",
                tls_identity->Describe(),
                cfg.tls_client_ca_file.empty() ? "" : "; client certificates required");
  }

  // Time: the real clock, or in test mode a manual one that tests move over HTTP.
  std::unique_ptr<base::ManualClock> manual_clock;
  std::unique_ptr<base::ManualScheduler> manual_scheduler;
  std::unique_ptr<base::ThreadScheduler> thread_scheduler;
  const base::Clock* clock = base::SystemClock::Get();
  base::Scheduler* scheduler = nullptr;
  if (cfg.test_clock) {
    manual_clock = std::make_unique<base::ManualClock>(base::SystemClock::Get()->Now());
    manual_scheduler = std::make_unique<base::ManualScheduler>(manual_clock.get());
    clock = manual_clock.get();
    scheduler = manual_scheduler.get();
    CQ_LOG_WARN(kLog, "test clock enabled: time moves only through /chronoq/test/advanceClock");
  } else {
    thread_scheduler = std::make_unique<base::ThreadScheduler>(clock);
    scheduler = thread_scheduler.get();
  }

  metrics::Registry registry;  // GET /metrics; every collector's source outlives the scrapes
  OpenedBackend opened = OpenBackend(cfg, clock, scheduler);
  if (!opened.serving) {
    CQ_LOG_ERROR(kLog, "{}", opened.error);
    std::fprintf(stderr, "chronoq: %s\n", opened.error.c_str());
    return opened.exit_code;
  }

  // Push delivery: the transports run whether or not push-allowed-targets names any target, so
  // that push-lane messages stored while it did are still delivered (docs/push.md).
  push::PusherOptions push_options;
  push_options.shutdown_grace = std::chrono::milliseconds(500);  // after the service's 3 s
  push_options.clock = clock;                                    // leases are on the store's clock
  push::Pusher pusher(push_options);
  PusherTransport push_transport(&pusher);
  service::ServiceOptions so;
  so.limits = config::ToLimits(cfg);
  so.defaults = config::ToDefaults(cfg);
  so.monitor_interval = std::chrono::seconds(cfg.monitor_interval_seconds);
  so.metrics_max_topics = static_cast<size_t>(cfg.metrics_max_topics);
  so.topic_files = config::StoreTopicTables(cfg);
  // Checked when the configuration was loaded.
  so.push_allowed = core::TargetAllowlist::Parse(cfg.push_allowed_targets).value();
  so.push_transport = &push_transport;
  auto service =
      std::make_unique<service::QueueService>(opened.serving->backend(), clock, scheduler, so);
  // However this function returns, the pusher stops (its last outcomes reach the scheduler)
  // before the service that owns the scheduler is destroyed.
  struct StopPusher {
    push::Pusher* pusher;
    ~StopPusher() { pusher->Shutdown(); }
  } stop_pusher{&pusher};
  // However this function returns, the timer thread stops before the service (whose long polls
  // it times out) and the backend its callbacks use are destroyed (a callback still running then
  // would use freed memory).
  struct StopTimers {
    base::ThreadScheduler* scheduler;
    ~StopTimers() {
      if (scheduler != nullptr) scheduler->Stop();
    }
  } stop_timers{thread_scheduler.get()};
  LogShadowedTopicSettings(service.get(), cfg);
  http::HandlerContext ctx;
  ctx.service = service.get();
  ctx.registry = &registry;
  http::Router router;
  router.SetAuthenticator(&authenticator);
  http::RegisterRoutes(router, &ctx);
  // The web dashboard (docs/dashboard.md) and its history, sampled on the scheduler; not on the
  // test clock, where one advance of a year would run a sample for every 5 s of it.
  http::Dashboard dashboard(service.get(), clock, scheduler);
  http::RegisterDashboardRoutes(router, &dashboard);
  if (!cfg.test_clock) dashboard.Start();
  if (manual_scheduler) {
    http::RegisterTestRoutes(router, manual_scheduler.get(), clock, service.get());
  }

  http::ServerOptions sopts;
  sopts.host = host;
  sopts.port = port;
  sopts.threads = static_cast<int>(cfg.http_threads);
  sopts.max_header_bytes = static_cast<size_t>(cfg.max_header_bytes);
  sopts.max_body_bytes = static_cast<size_t>(cfg.max_body_bytes);
  sopts.max_connections = max_connections;
  sopts.idle_timeout = std::chrono::milliseconds(cfg.idle_timeout_millis);
  sopts.request_timeout = std::chrono::milliseconds(cfg.request_timeout_millis);
  sopts.tls = tls_context.get();
  sopts.handshake_timeout = std::chrono::milliseconds(cfg.tls_handshake_timeout_millis);
  http::HttpServer server(sopts, &router);
  http::RegisterMetrics(&router, &server, max_connections, registry);
  opened.serving->RegisterMetrics(registry);
  registry.Add(metrics::RenderProcess);
  registry.Add([&authenticator](metrics::TextWriter& w) { authenticator.RenderMetrics(w); });
  registry.Add([&pusher](metrics::TextWriter& w) { RenderPusherTargets(pusher, w); });
  if (Status s = server.Start(); !s.ok()) {
    CQ_LOG_ERROR(kLog, "{}", s.message());
    std::fprintf(stderr, "chronoq: %s\n", s.message().c_str());
    return 1;
  }
  // The gRPC API (grpc-listen; empty: none), over the same service.
  std::unique_ptr<grpc_api::GrpcServer> grpc;
  std::string grpc_host;
  if (!cfg.grpc_listen.empty()) {
    grpc_api::GrpcOptions gopts;
    config::ParseListen(cfg.grpc_listen, &gopts.host, &gopts.port).IgnoreError();  // validated
    gopts.max_msg_bytes = cfg.max_msg_bytes;
    gopts.tls = tls_identity ? &*tls_identity : nullptr;
    gopts.authenticator = &authenticator;
    gopts.engine = cfg.grpc_engine;
    gopts.threads = static_cast<int>(cfg.http_threads);
    gopts.max_connections = max_connections;
    gopts.idle_timeout = std::chrono::milliseconds(cfg.idle_timeout_millis);
    gopts.handshake_timeout = std::chrono::milliseconds(cfg.tls_handshake_timeout_millis);
    grpc_host = gopts.host;
    auto started = grpc_api::StartGrpcServer(gopts, service.get(), clock, scheduler, &registry);
    if (!started.has_value()) {
      CQ_LOG_ERROR(kLog, "{}", started.error().message());
      std::fprintf(stderr, "chronoq: %s\n", started.error().message().c_str());
      service->Shutdown();
      server.Stop(std::chrono::milliseconds(0));
      return 1;
    }
    grpc = std::move(*started);
  }
  tls_identity.reset();  // the key's text: the servers hold their own copies

  if (tls_context) {
    // New connections get the new certificate; open ones keep theirs. A file that fails the
    // checks keeps the certificate in use.
    reloads.push_back([&cfg, &tls_context, &grpc] {
      Result<tls::TlsIdentity> id = tls::LoadIdentity(TlsFilesOf(cfg));
      Status s = id.has_value() ? tls_context->Reload(*id) : id.error();
      if (s.ok() && grpc) s = grpc->ReloadTls(*id);
      if (!s.ok()) {
        CQ_LOG_ERROR(kLog, "SIGHUP: TLS certificate not reloaded, the one in use stays: {}",
                     s.message());
        return;
      }
      CQ_LOG_INFO(kLog, "SIGHUP: TLS certificate reloaded: {}", id->Describe());
    });
  }
  // The log line first: once the listening line is out, the start is complete. Each setting is
  // named once, in the fields; the message says only what they do not (version, bound ports).
  CQ_LOG_FIELDS(base::LogLevel::kInfo, kLog, config::Summary(cfg), "chronoq {} started on {}:{}{}",
                CQ_VERSION, host, server.port(),
                grpc ? fmt::format(", gRPC on {}:{}", grpc_host, grpc->port()) : std::string());
  // The HTTP line first (tests and scripts read the port from the first line), then gRPC's.
  std::printf("chronoq listening on %s:%u\n", host.c_str(), server.port());
  if (grpc) std::printf("chronoq gRPC listening on %s:%u\n", grpc_host.c_str(), grpc->port());
  std::fflush(stdout);

  int sig = 0;
  for (;;) {
    sigwait(&signals, &sig);
    if (sig != SIGHUP) break;
    if (reloads.empty()) CQ_LOG_INFO(kLog, "SIGHUP: nothing to reload");
    for (const auto& reload : reloads) reload();
  }
  CQ_LOG_INFO(kLog, "received {}, shutting down", sig == SIGTERM ? "SIGTERM" : "SIGINT");

  if (grpc) grpc->EndStreams();  // Consume streams end with OK (before they could park again)
  // Parked long polls (HTTP and gRPC Pull) answer an empty list now; pushes in flight get a few
  // seconds to end (what is still in flight then is pushed again when its lease ends, here or on
  // another node).
  service->Shutdown(Millis(3000));
  pusher.Shutdown();
  if (grpc) grpc->Shutdown(std::chrono::milliseconds(700));
  server.Stop(std::chrono::milliseconds(700));
  if (thread_scheduler) thread_scheduler->Stop();
  dashboard.Stop();  // before the service: a sample still on its way is dropped
  service.reset();   // no longer the backend's listener and event sink
  // Close the storage now, while the HTTP server's executors still exist: it finishes what is
  // still queued and runs those answers' callbacks (they post to the executors).
  opened.serving->Close();
  CQ_LOG_INFO(kLog, "stopped");
  return 0;
}

}  // namespace chronoq::app
