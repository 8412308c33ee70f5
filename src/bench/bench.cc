#include "bench/bench.h"

#include <CLI/CLI.hpp>
#include <cstdio>

#include "bench/workloads.h"

namespace chronoq::bench {

int RunBench(const std::vector<std::string>& args) {
  CLI::App app{"Benchmarks a running chronoq server over HTTP/1.1 keep-alive.", "chronoq bench"};
  app.require_subcommand(1, 1);
  CommonOptions common;
  app.add_option("--server", common.server,
                 "Server URL (default $CHRONOQ_SERVER, else http://127.0.0.1:8080)");
  tls::ClientOptions tls_options;
  app.add_option("--ca-file", tls_options.ca_file,
                 "https: PEM CA certificates the server's must chain to (default: the system's)");
  app.add_option("--cert-file", tls_options.cert_file,
                 "https: PEM client certificate, for a server with tls-client-ca-file");
  app.add_option("--key-file", tls_options.key_file, "https: the client certificate's PEM key");
  app.add_option("--topic", common.topic, "Topic to use (default: a fresh one per run)");
  app.add_flag("--json", common.json, "Print the result as JSON on stdout (summary on stderr)");
  app.add_option("--server-pid", common.server_pid,
                 "PID of a local server, for RSS (and burst: CPU) figures");
  app.add_option("--token", common.token,
                 "With --grpc (h2 client): every call carries `authorization: Bearer <token>`");
  bool no_progress = false;
  app.add_flag("--no-progress", no_progress, "Do not show the live progress line");

  ProduceOptions po;
  auto* produce = app.add_subcommand("produce", "N sends as fast as possible (or at --rate)");
  produce->add_option("--count", po.count, "Messages to send")->capture_default_str();
  produce->add_option("--connections", po.connections, "Keep-alive connections")
      ->capture_default_str();
  produce->add_option("--payload-bytes", po.payload_bytes, "Payload size")->capture_default_str();
  produce->add_option("--delay-min-ms", po.delay_min_ms, "Smallest delay")->capture_default_str();
  produce->add_option("--delay-max-ms", po.delay_max_ms, "Largest delay")->capture_default_str();
  produce->add_option("--rate", po.rate, "Sends per second (0: unlimited)")->capture_default_str();
  produce
      ->add_option("--batch", po.batch,
                   "Messages per request: > 1 sends them with sendMsgBatch (at most 1000)")
      ->check(CLI::Range(1, 1000))
      ->capture_default_str();
  produce->add_option("--grpc", po.grpc,
                      "Send over the gRPC API at HOST:PORT (Send, or SendBatch with --batch), "
                      "one channel per connection; over TLS when --server is https://");
  produce
      ->add_option("--calls-per-connection", po.calls_per_connection,
                   "With --grpc: calls in flight on each connection (HTTP/2 streams; HTTP/1.1 has "
                   "one request in flight per connection)")
      ->check(CLI::Range(1, 100))
      ->capture_default_str();
  const auto grpc_clients = CLI::IsMember({"h2", "grpcpp"});
  const char* grpc_client_help =
      "With --grpc: the client, h2 (the bench's own HTTP/2 client on nghttp2: one thread; h2c, or "
      "TLS with ALPN h2 for an https --server) or grpcpp (gRPC's C++ client); default h2";
  produce->add_option("--grpc-client", po.grpc_client, grpc_client_help)->check(grpc_clients);
  produce->add_option("--beanstalkd", po.beanstalkd,
                      "Put to a beanstalkd at HOST:PORT instead (its text protocol; delays in "
                      "whole seconds), for side-by-side figures");

  E2eOptions eo;
  auto* e2e =
      app.add_subcommand("e2e", "Send with delays, consume with long polls, measure lateness");
  e2e->add_option("--count", eo.count, "Messages")->capture_default_str();
  e2e->add_option("--delay-min-ms", eo.delay_min_ms, "Smallest delay")->capture_default_str();
  e2e->add_option("--delay-max-ms", eo.delay_max_ms, "Largest delay")->capture_default_str();
  e2e->add_option("--producers", eo.producers, "Producer connections")->capture_default_str();
  e2e->add_option("--consumers", eo.consumers, "Long-polling consumers")->capture_default_str();
  e2e->add_option("--ackers", eo.ackers, "Connections sending acks")->capture_default_str();
  e2e->add_option("--batch", eo.batch, "Pull batch")->capture_default_str();
  e2e->add_option("--consume-server", eo.consume_server,
                  "Consumers and ackers use this server (another node sharing the storage)");
  e2e->add_option("--rate", eo.rate, "Sends per second (0: unlimited)")->capture_default_str();
  e2e->add_option("--grpc", eo.grpc,
                  "Consume with gRPC Consume streams at HOST:PORT (credit --batch, acks on the "
                  "stream) instead of long polls");
  e2e->add_option("--grpc-client", eo.grpc_client, grpc_client_help)->check(grpc_clients);
  e2e->add_option("--beanstalkd", eo.beanstalkd,
                  "Run against a beanstalkd at HOST:PORT instead: put, then reserve-with-timeout "
                  "and delete on --consumers + --ackers connections; delays in whole seconds");
  e2e->add_option("--payload-bytes", eo.payload_bytes, "Payload size")->capture_default_str();
  e2e->add_option("--ack", eo.ack, "Ack every delivered message")->capture_default_str();
  e2e->add_option("--grace-ms", eo.grace_ms, "Wait after the last trigger time")
      ->capture_default_str();

  BurstOptions bo;
  auto* burst = app.add_subcommand("burst", "M messages all due in the same second");
  burst->add_option("--count", bo.count, "Messages")->capture_default_str();
  burst->add_option("--slots", bo.slots, "Distinct trigger times in the second")
      ->capture_default_str();
  burst->add_option("--producers", bo.producers, "Producer connections")->capture_default_str();
  burst->add_option("--consumers", bo.consumers, "Long-polling consumers")->capture_default_str();
  burst->add_option("--ackers", bo.ackers, "Connections sending acks")->capture_default_str();
  burst->add_option("--batch", bo.batch, "Pull batch")->capture_default_str();
  burst->add_option("--payload-bytes", bo.payload_bytes, "Payload size")->capture_default_str();
  burst->add_option("--lead-ms", bo.lead_ms, "Due time after the start (0: 5 s + count/25k s)")
      ->capture_default_str();
  burst->add_option("--ack", bo.ack, "Ack every delivered message")->capture_default_str();
  burst
      ->add_option("--ack-batch", bo.ack_batch,
                   "Ack with ackMsgBatch, up to this many ids per request (1: one ackMsg each)")
      ->check(CLI::Range(1, 1000))
      ->capture_default_str();
  burst->add_option("--grace-ms", bo.grace_ms, "Wait after the due second")->capture_default_str();

  BacklogOptions ko;
  auto* backlog =
      app.add_subcommand("backlog", "Load M far-future messages; memory, disk, restart");
  backlog->add_option("--count", ko.count, "Messages")->capture_default_str();
  backlog->add_option("--connections", ko.connections, "Connections")->capture_default_str();
  backlog->add_option("--payload-bytes", ko.payload_bytes, "Payload size")->capture_default_str();
  backlog->add_option("--delay-ms", ko.delay_ms, "Delay of every message")->capture_default_str();
  backlog
      ->add_option("--delay-max-ms", ko.delay_max_ms,
                   "Above --delay-ms: each message's delay at random in [delay-ms, this]")
      ->capture_default_str();
  backlog
      ->add_option("--topics", ko.topics,
                   "Topics the messages are spread over (round robin; --topic names the first)")
      ->check(CLI::Range(1, 10000))
      ->capture_default_str();
  backlog->add_option("--data-dir", ko.data_dir, "Server data directory, for disk bytes");
  backlog->add_option("--restart-cmd", ko.restart_cmd,
                      "Shell command restarting the server; measures time to serving");

  LongPollOptions lo;
  auto* longpoll = app.add_subcommand("longpoll", "Produce throughput with K parked long polls");
  longpoll->add_option("--parked", lo.parked, "Parked long polls")->capture_default_str();
  longpoll->add_option("--connections", lo.connections, "Producer connections")
      ->capture_default_str();
  longpoll->add_option("--seconds", lo.seconds, "Length of each phase")->capture_default_str();
  longpoll->add_option("--payload-bytes", lo.payload_bytes, "Payload size")->capture_default_str();

  PushBenchOptions pu;
  auto* push = app.add_subcommand(
      "push", "Messages with an HTTP callback to a receiver of its own: pushes/s and lateness");
  push->add_option("--count", pu.count, "Messages")->capture_default_str();
  push->add_option("--rate", pu.rate,
                   "Sends per second; 0: send all first, all due at once after --lead-ms")
      ->capture_default_str();
  push->add_option("--delay-ms", pu.delay_ms, "With --rate: each message's delay")
      ->capture_default_str();
  push->add_option("--lead-ms", pu.lead_ms,
                   "Without --rate: the due time after the start (0: 3 s + count/20k s)")
      ->capture_default_str();
  push->add_option("--connections", pu.connections, "Producer connections")->capture_default_str();
  push->add_option("--payload-bytes", pu.payload_bytes, "Payload size")->capture_default_str();
  push->add_option("--timeout-ms", pu.timeout_ms, "The callback's timeoutMillis")
      ->capture_default_str();
  push->add_option("--receiver-threads", pu.receiver_threads, "Threads of the receiver")
      ->check(CLI::Range(1, 64))
      ->capture_default_str();
  push->add_option("--grace-ms", pu.grace_ms, "Wait after the last due time")
      ->capture_default_str();

  std::vector<const char*> argv{"chronoq bench"};
  for (const std::string& a : args) argv.push_back(a.c_str());
  try {
    app.parse(static_cast<int>(argv.size()), argv.data());
  } catch (const CLI::ParseError& e) {
    int rc = app.exit(e);
    return rc == 0 ? 0 : 2;
  }
  common.progress = !no_progress;
  common.server = client::ChooseServerUrl(common.server);  // --server > $CHRONOQ_SERVER > default
  Result<client::Endpoint> ep = client::ParseServerUrl(common.server);
  if (!ep.has_value()) {
    std::fprintf(stderr, "chronoq bench: --server: %s\n", ep.error().message().c_str());
    return 2;
  }
  common.endpoint = *ep;
  common.endpoint.tls_options = tls_options;
  // The gRPC client: h2 (plain h2c, or TLS with ALPN h2) unless asked for grpcpp.
  const bool grpcpp = (produce->parsed() ? po.grpc_client : eo.grpc_client) == "grpcpp";
  const bool beanstalkd =
      (produce->parsed() && !po.beanstalkd.empty()) || (e2e->parsed() && !eo.beanstalkd.empty());
  if (Status s = beanstalkd ? Status::Ok() : CheckServer(common.endpoint); !s.ok()) {
    std::fprintf(stderr, "chronoq bench: server %s is not answering: %s\n", common.server.c_str(),
                 s.message().c_str());
    return 1;
  }

  Result<Report> report = Status(Errc::kInternal, "no workload");
  if (produce->parsed()) {
    report = !po.beanstalkd.empty() ? RunProduceBeanstalkd(common, po)
             : po.grpc.empty()      ? RunProduce(common, po)
             : grpcpp               ? RunProduceGrpc(common, po)
                                    : RunProduceGrpcH2(common, po);
  }
  if (e2e->parsed()) {
    report = !eo.beanstalkd.empty() ? RunE2eBeanstalkd(common, eo)
             : eo.grpc.empty()      ? RunE2e(common, eo)
             : grpcpp               ? RunE2eGrpc(common, eo)
                                    : RunE2eGrpcH2(common, eo);
  }
  if (burst->parsed()) report = RunBurst(common, bo);
  if (backlog->parsed()) report = RunBacklog(common, ko);
  if (longpoll->parsed()) report = RunLongPoll(common, lo);
  if (push->parsed()) report = RunPush(common, pu);
  if (!report.has_value()) {
    std::fprintf(stderr, "chronoq bench: %s\n", report.error().message().c_str());
    return 1;
  }
  if (common.json) {
    std::fputs(report->Human().c_str(), stderr);
    std::printf("%s\n", report->Json().c_str());
  } else {
    std::fputs(report->Human().c_str(), stdout);
  }
  return 0;
}

}  // namespace chronoq::bench
