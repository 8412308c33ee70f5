// Smoke runs of `chronoq bench <workload> --json` against a real server on a real clock (the
// benchmark measures real time, so no test clock here). Small counts keep each run to a second
// or two; the assertions check completeness and that the report has its figures, not speed.
#include <gtest/gtest.h>
#include <signal.h>
#include <unistd.h>

#include <boost/json.hpp>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "tests/testutil/server_harness.h"
#include "tests/testutil/temp_dir.h"
#include "tests/testutil/test_certs.h"

namespace chronoq::testutil {
namespace {

namespace json = boost::json;

class BenchSmokeTest : public ::testing::Test {
 protected:
  void SetUp() override {
    Status s = server_.Start({});
    ASSERT_TRUE(s.ok()) << s.message();
  }

  // Runs `chronoq bench --json <args>` against `server` (default: server_; `scheme` https: a
  // TLS server, the options naming the files in `args`) and returns the parsed report.
  json::object Bench(std::vector<std::string> args, const ServerProcess* server = nullptr,
                     const std::string& scheme = "http") {
    if (server == nullptr) server = &server_;
    std::vector<std::string> full = {
        "bench", "--no-progress", "--json",
        "--server=" + scheme + "://127.0.0.1:" + std::to_string(server->port())};
    full.insert(full.end(), args.begin(), args.end());
    ExitResult r = RunBinary(full, std::chrono::seconds(60));
    EXPECT_EQ(r.exit_code, 0) << r.err;
    boost::system::error_code ec;
    json::value v = json::parse(r.out, ec);
    EXPECT_FALSE(ec) << "not JSON: " << r.out << "\n" << r.err;
    if (ec || !v.is_object()) return {};
    return v.as_object();
  }

  static int64_t Int(const json::object& o, std::string_view key) {
    const json::value* v = o.if_contains(key);
    return v != nullptr && v->is_int64() ? v->as_int64() : -1;
  }

  // An e2e report where each of the n messages was delivered once and acked.
  static void ExpectEachDeliveredAndAckedOnce(json::object& r, int64_t n) {
    EXPECT_EQ(Int(r, "delivered"), n);
    EXPECT_EQ(Int(r, "missing"), 0);
    EXPECT_EQ(Int(r, "duplicates"), 0);
    EXPECT_EQ(Int(r, "acked"), n);
    ASSERT_TRUE(r.contains("lateness"));
    EXPECT_EQ(r["lateness"].as_object()["count"].as_int64(), n);
  }

  ServerProcess server_;
};

TEST_F(BenchSmokeTest, ProduceSendsEverything) {
  json::object r = Bench({"produce", "--count=3000", "--connections=8"});
  EXPECT_EQ(Int(r, "sent_ok"), 3000);
  EXPECT_EQ(Int(r, "failed"), 0);
  ASSERT_TRUE(r.contains("send_latency"));
  EXPECT_EQ(r["send_latency"].as_object()["count"].as_int64(), 3000);
  EXPECT_GT(r["throughput"].to_number<double>(), 0);
}

// A count of getTopicInfo about `topic` on `server` ("waitingQueueSize": the messages waiting;
// "ackQueueSize": delivered, not acked); -1 when it cannot be read.
int64_t TopicSize(const ServerProcess& server, const std::string& topic, std::string_view key,
                  const std::string& token = "") {
  ApiClient api(server.endpoint());
  api.set_token(token);
  ApiResponse info = api.Monitor("getTopicInfo", {{"topic", topic}});
  const json::value& data = info.at("data");
  EXPECT_TRUE(data.is_object()) << info.Describe();
  if (!data.is_object()) return -1;
  const json::value* n = data.as_object().if_contains(key);
  return n != nullptr && n->is_int64() ? n->as_int64() : -1;
}

// Every gRPC engine of the server, with both of the bench's gRPC clients: its own HTTP/2 client
// (the default) and gRPC's C++ client.
TEST_F(BenchSmokeTest, ProduceOverGrpcSendsEverything) {
  for (const char* engine : {"h2", "nghttp2", "grpc++"}) {
    SCOPED_TRACE(engine);
    ServerProcess server;
    ASSERT_TRUE(
        server.Start({"--grpc-listen=127.0.0.1:0", std::string("--grpc-engine=") + engine}).ok());
    const std::string grpc = "--grpc=127.0.0.1:" + std::to_string(server.grpc_port());
    for (const char* client : {"--grpc-client=h2", "--grpc-client=grpcpp"}) {
      // One call in flight per connection, batches, and several calls in flight per connection.
      for (const char* mode : {"--batch=1", "--batch=100", "--calls-per-connection=4"}) {
        SCOPED_TRACE(std::string(client) + " " + mode);
        json::object r =
            Bench({"produce", "--count=3000", "--connections=8", mode, client, grpc}, &server);
        EXPECT_EQ(Int(r, "sent_ok"), 3000);
        EXPECT_EQ(Int(r, "failed"), 0);
        ASSERT_TRUE(r.contains("send_latency"));
        EXPECT_GT(r["throughput"].to_number<double>(), 0);
        // Every message is stored: the topic holds them, waiting.
        EXPECT_EQ(TopicSize(server, std::string(r["topic"].as_string()), "waitingQueueSize"), 3000);
      }
    }
  }
}

// gRPC over TLS (an https --server; certificates as the TLS tests make them), client
// certificates required: the h2 client (TLS with ALPN h2) and gRPC's C++ client, on every engine;
// and the h2 client's Consume streams over TLS.
TEST_F(BenchSmokeTest, GrpcOverTlsSendsAndConsumesEverything) {
  TempDir certs;
  for (Status s : {MakeTestCa(certs.path(), "ca"),
                   MakeTestCert(certs.path(), "server", "ca", "subjectAltName=IP:127.0.0.1"),
                   MakeTestCert(certs.path(), "client", "ca", "extendedKeyUsage=clientAuth")}) {
    ASSERT_TRUE(s.ok()) << s.message();
  }
  const std::vector<std::string> files = {"--ca-file=" + certs.Sub("ca.pem"),
                                          "--cert-file=" + certs.Sub("client.pem"),
                                          "--key-file=" + certs.Sub("client.key")};
  for (const char* engine : {"h2", "nghttp2", "grpc++"}) {
    SCOPED_TRACE(engine);
    ServerProcess server;
    ASSERT_TRUE(server
                    .Start({"--grpc-listen=127.0.0.1:0", std::string("--grpc-engine=") + engine,
                            "--tls-cert-file=" + certs.Sub("server.pem"),
                            "--tls-key-file=" + certs.Sub("server.key"),
                            "--tls-client-ca-file=" + certs.Sub("ca.pem")})
                    .ok());
    const std::string grpc = "--grpc=127.0.0.1:" + std::to_string(server.grpc_port());
    for (const char* client : {"--grpc-client=h2", "--grpc-client=grpcpp"}) {
      SCOPED_TRACE(client);
      std::vector<std::string> args = files;
      args.insert(args.end(), {"produce", "--count=1000", "--connections=4",
                               "--calls-per-connection=2", client, grpc});
      json::object r = Bench(args, &server, "https");
      EXPECT_EQ(Int(r, "sent_ok"), 1000);
      EXPECT_EQ(Int(r, "failed"), 0);
      EXPECT_EQ(Int(r, "connection_errors"), -1);  // none (the key is absent)
      ASSERT_TRUE(r.contains("protocol"));
      EXPECT_EQ(r["protocol"].as_string().starts_with("grpc over tls "), true)
          << json::serialize(r["protocol"]);
    }
    std::vector<std::string> args = files;
    args.insert(args.end(),
                {"e2e", "--count=500", "--delay-min-ms=50", "--delay-max-ms=300", "--rate=5000",
                 "--grace-ms=5000", "--consumers=2", "--batch=10", "--grpc-client=h2", grpc});
    json::object r = Bench(args, &server, "https");
    ExpectEachDeliveredAndAckedOnce(r, 500);
    EXPECT_EQ(Int(r, "pull_failures"), 0);
  }
}

// --token: the h2 client's calls carry it; without it the server refuses every one.
TEST_F(BenchSmokeTest, ProduceOverGrpcCarriesTheToken) {
  const std::string token = "benchA-0123456789abcdef";
  const std::string tokens = (std::filesystem::temp_directory_path() /
                              ("chronoq-bench-tokens-" + std::to_string(::getpid())))
                                 .string();
  std::ofstream(tokens, std::ios::trunc) << token << " * admin\n";
  for (const char* engine : {"h2", "nghttp2", "grpc++"}) {
    SCOPED_TRACE(engine);
    ServerProcess server;
    ASSERT_TRUE(server
                    .Start({"--grpc-listen=127.0.0.1:0", std::string("--grpc-engine=") + engine,
                            "--auth-tokens-file=" + tokens})
                    .ok());
    const std::string grpc = "--grpc=127.0.0.1:" + std::to_string(server.grpc_port());
    json::object r =
        Bench({"--token=" + token, "produce", "--count=500", "--connections=2", grpc}, &server);
    EXPECT_EQ(Int(r, "sent_ok"), 500);
    EXPECT_EQ(TopicSize(server, std::string(r["topic"].as_string()), "waitingQueueSize", token),
              500);

    json::object refused = Bench({"produce", "--count=50", "--connections=2", grpc}, &server);
    EXPECT_EQ(Int(refused, "sent_ok"), 0);
    EXPECT_EQ(Int(refused, "failed"), 50);
    ASSERT_TRUE(refused.contains("warnings")) << json::serialize(refused);
    EXPECT_NE(json::serialize(refused["warnings"]).find("first failure: 16 "), std::string::npos)
        << json::serialize(refused["warnings"]);  // UNAUTHENTICATED
  }
  std::filesystem::remove(tokens);
}

TEST_F(BenchSmokeTest, E2eDeliversEveryMessageOnce) {
  json::object r = Bench({"e2e", "--count=1000", "--delay-min-ms=50", "--delay-max-ms=400",
                          "--rate=5000", "--grace-ms=5000"});
  ExpectEachDeliveredAndAckedOnce(r, 1000);
}

// Consume streams with both gRPC clients, on the default engine (h2) and on nghttp2.
TEST_F(BenchSmokeTest, E2eOverConsumeStreamsDeliversEveryMessageOnce) {
  for (const char* engine : {"h2", "nghttp2"}) {
    ASSERT_EQ(server_.Stop(SIGTERM), 0);
    Status s = server_.Start({"--grpc-listen=127.0.0.1:0", std::string("--grpc-engine=") + engine});
    ASSERT_TRUE(s.ok()) << s.message();
    for (const char* client : {"--grpc-client=h2", "--grpc-client=grpcpp"}) {
      SCOPED_TRACE(std::string(engine) + " " + client);
      json::object r = Bench({"e2e", "--count=1000", "--delay-min-ms=50", "--delay-max-ms=400",
                              "--rate=5000", "--grace-ms=5000", "--consumers=4", "--batch=10",
                              client, "--grpc=127.0.0.1:" + std::to_string(server_.grpc_port())});
      ExpectEachDeliveredAndAckedOnce(r, 1000);
      EXPECT_EQ(Int(r, "pull_failures"), 0);
      // Acked on the streams: nothing of the run is left waiting, ready or unacked.
      const std::string topic(r["topic"].as_string());
      for (const char* key : {"waitingQueueSize", "readyQueueSize", "ackQueueSize"}) {
        EXPECT_EQ(TopicSize(server_, topic, key), 0) << key;
      }
    }
  }
}

// Two nodes sharing one Redis: sends through one, consumers and ackers on the other.

TEST_F(BenchSmokeTest, E2eAcrossTwoNodesOnRedis) {
  ServerProcess a, b;
  const std::string ns = "--namespace=bench-two-" + std::to_string(::getpid());
  ASSERT_TRUE(a.Start({"--storage=redis", ns}).ok());
  ASSERT_TRUE(b.Start({"--storage=redis", ns}).ok());
  ExitResult r = RunBinary(
      {"bench", "--no-progress", "--json", "--server=http://127.0.0.1:" + std::to_string(a.port()),
       "e2e", "--count=500", "--delay-min-ms=50", "--delay-max-ms=300", "--rate=2000",
       "--grace-ms=5000", "--consume-server=http://127.0.0.1:" + std::to_string(b.port())},
      std::chrono::seconds(60));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  json::object o = json::parse(r.out).as_object();
  EXPECT_EQ(Int(o, "delivered"), 500);
  EXPECT_EQ(Int(o, "duplicates"), 0);
  EXPECT_EQ(Int(o, "acked"), 500);
  EXPECT_EQ(o["consume_server"], json::value("http://127.0.0.1:" + std::to_string(b.port())));
}

TEST_F(BenchSmokeTest, BurstDrainsEverything) {
  json::object r =
      Bench({"burst", "--count=5000", "--slots=50", "--lead-ms=1500", "--grace-ms=5000"});
  EXPECT_EQ(Int(r, "delivered"), 5000);
  EXPECT_EQ(Int(r, "missing"), 0);
  EXPECT_EQ(Int(r, "duplicates"), 0);
  EXPECT_EQ(Int(r, "sends_after_due_time"), 0);
  EXPECT_GT(r["drain_rate"].to_number<double>(), 0);
}

TEST_F(BenchSmokeTest, BacklogReportsMemoryPerMessage) {
  json::object r =
      Bench({"--server-pid=" + std::to_string(server_.pid()), "backlog", "--count=5000"});
  EXPECT_EQ(Int(r, "sent_ok"), 5000);
  EXPECT_GT(Int(r, "server_rss_after"), 0);
  EXPECT_TRUE(r.contains("rss_bytes_per_message"));
}

TEST_F(BenchSmokeTest, LongPollComparesBothPhases) {
  json::object r = Bench({"longpoll", "--parked=100", "--seconds=0.5", "--connections=8"});
  EXPECT_GT(r["baseline_throughput"].to_number<double>(), 0);
  EXPECT_GT(r["throughput_with_parked"].to_number<double>(), 0);
  EXPECT_EQ(Int(r, "long_poll_errors"), 0);
  EXPECT_EQ(Int(r, "send_failures"), 0);
  EXPECT_EQ(Int(r, "parked_at_server"), 100);  // the server's cq_http_long_polls_parked
  EXPECT_EQ(Int(r, "long_polls_answered_early"), 0);
  EXPECT_EQ(Int(r, "connections_refused"), 0);
}

// Push delivery: the server calls the benchmark's own receiver (it must allow 127.0.0.1), paced
// with a delay, then all due at once.
TEST_F(BenchSmokeTest, PushDeliversEveryMessageToTheBenchReceiver) {
  ServerProcess pushing;
  ASSERT_TRUE(pushing.Start({"--push-allowed-targets=127.0.0.1"}).ok());
  json::object paced = Bench(
      {"push", "--count=2000", "--rate=4000", "--delay-ms=200", "--grace-ms=10000"}, &pushing);
  EXPECT_EQ(Int(paced, "sent_ok"), 2000);
  EXPECT_EQ(Int(paced, "pushed"), 2000);
  EXPECT_EQ(Int(paced, "missing"), 0);
  EXPECT_EQ(Int(paced, "duplicates"), 0);
  ASSERT_TRUE(paced.contains("lateness"));
  EXPECT_EQ(paced["lateness"].as_object()["count"].as_int64(), 2000);

  json::object at_once =
      Bench({"push", "--count=3000", "--lead-ms=1500", "--grace-ms=10000"}, &pushing);
  EXPECT_EQ(Int(at_once, "pushed"), 3000);
  EXPECT_EQ(Int(at_once, "duplicates"), 0);
  EXPECT_EQ(Int(at_once, "sends_after_due_time"), 0);
  ASSERT_TRUE(at_once.contains("push_rate"));
  EXPECT_GT(at_once["push_rate"].to_number<double>(), 0);
}

TEST_F(BenchSmokeTest, RefusesAnUnreachableServer) {
  ExitResult r = RunBinary({"bench", "--server=http://127.0.0.1:1", "produce", "--count=1"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("not answering"), std::string::npos) << r.err;
}

// Like the client commands: the server is --server, else $CHRONOQ_SERVER, else the default.
TEST_F(BenchSmokeTest, TheServerIsTheFlagElseChronoqServer) {
  const std::string url = "http://127.0.0.1:" + std::to_string(server_.port());
  const std::string unreachable = "http://127.0.0.1:1";
  const std::vector<std::string> produce = {"produce", "--count=200", "--connections=2"};
  auto bench = [&](std::vector<std::string> flags, const std::string& env) {
    std::vector<std::string> args = {"bench", "--no-progress", "--json"};
    args.insert(args.end(), flags.begin(), flags.end());
    args.insert(args.end(), produce.begin(), produce.end());
    return RunBinary(args, std::chrono::seconds(60), {"CHRONOQ_SERVER=" + env});
  };

  ExitResult from_env = bench({}, url);
  ASSERT_EQ(from_env.exit_code, 0) << from_env.err;
  EXPECT_EQ(Int(json::parse(from_env.out).as_object(), "sent_ok"), 200) << from_env.out;

  ExitResult flag_wins = bench({"--server=" + url}, unreachable);
  EXPECT_EQ(flag_wins.exit_code, 0) << flag_wins.err;

  ExitResult flag_wins_too = bench({"--server=" + unreachable}, url);
  EXPECT_EQ(flag_wins_too.exit_code, 1);
  EXPECT_NE(flag_wins_too.err.find("server " + unreachable + " is not answering"),
            std::string::npos)
      << flag_wins_too.err;
}

TEST_F(BenchSmokeTest, UsageErrorsExitTwo) {
  ExitResult r = RunBinary({"bench", "nosuchworkload"});
  EXPECT_EQ(r.exit_code, 2) << r.err;

  ExitResult client = RunBinary({"bench", "produce", "--grpc=127.0.0.1:1", "--grpc-client=h3"});
  EXPECT_EQ(client.exit_code, 2) << client.err;
  EXPECT_NE(client.err.find("--grpc-client"), std::string::npos) << client.err;
}

}  // namespace
}  // namespace chronoq::testutil
