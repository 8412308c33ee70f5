// TLS on the real binary (docs/security.md, TLS): a CA, server certificates (subjectAltName
// 127.0.0.1 and localhost) and a client certificate are made at test time with the `openssl`
// command; clients are `curl`, chronoq's own client (client/http_client.h, the CLI's) and gRPC's
// C++ client. Covers the right and a wrong CA, client certificates, plain HTTP sent to the TLS
// port, the SIGHUP reload (the fingerprint a new client sees), refused starts, and keep-alive,
// long polls, max-connections and the timeouts over TLS. Runs once, on memory storage.
#include <fmt/format.h>
#include <grpcpp/grpcpp.h>
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <array>
#include <csignal>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

#include "chronoq/v1/delay_queue.grpc.pb.h"
#include "tests/testutil/server_harness.h"
#include "tests/testutil/temp_dir.h"
#include "tests/testutil/test_certs.h"

namespace chronoq {
namespace {

using namespace std::chrono_literals;
using testutil::ApiClient;
using testutil::ApiResponse;
using testutil::ServerProcess;

struct Shell {
  int exit_code = -1;
  std::string out;  // stdout and stderr
};

// Runs `cmd` with /bin/sh, capturing its output.
Shell Sh(const std::string& cmd) {
  Shell r;
  FILE* p = ::popen((cmd + " 2>&1").c_str(), "r");
  if (p == nullptr) return r;
  std::array<char, 4096> buf;
  size_t n;
  while ((n = std::fread(buf.data(), 1, buf.size(), p)) > 0) r.out.append(buf.data(), n);
  int status = ::pclose(p);
  r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return r;
}

std::string ReadText(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

class TlsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    // Two CAs (the second is the "wrong" one), a server certificate and a client certificate of
    // the first, and a second server certificate (for the reload).
    ASSERT_EQ(Sh("command -v openssl && command -v curl").exit_code, 0) << "openssl and curl";
    MakeCa("ca");
    MakeCa("other-ca");
    MakeCert("server", "ca", "subjectAltName=IP:127.0.0.1,DNS:localhost");
    MakeCert("server2", "ca", "subjectAltName=IP:127.0.0.1,DNS:localhost");
    MakeCert("client", "ca", "extendedKeyUsage=clientAuth");
    MakeCert("stranger", "other-ca", "extendedKeyUsage=clientAuth");
  }

  std::string P(const std::string& name) const { return dir_.path() + "/" + name; }

  void MakeCa(const std::string& name) {
    Status s = testutil::MakeTestCa(dir_.path(), name);
    ASSERT_TRUE(s.ok()) << s.message();
  }
  void MakeCert(const std::string& name, const std::string& ca, const std::string& ext) {
    Status s = testutil::MakeTestCert(dir_.path(), name, ca, ext);
    ASSERT_TRUE(s.ok()) << s.message();
  }
  // The SHA-256 fingerprint of a certificate file, as tls::ClientSession reports it.
  std::string Fingerprint(const std::string& name) {
    Shell s = Sh(fmt::format("openssl x509 -noout -fingerprint -sha256 -in {}.pem", P(name)));
    size_t eq = s.out.find('=');
    return eq == std::string::npos ? s.out : s.out.substr(eq + 1, s.out.find('\n') - eq - 1);
  }

  // Each runs on our own gRPC server, framed by itself (h2, the default) and by nghttp2.
  void GrpcServesTls(const std::string& engine);
  void GrpcClosesAClientThatNeverStartsItsHandshake(const std::string& engine);
  void GrpcNegotiatesH2AndReloadsOnSighup(const std::string& engine);

  Status Start(std::vector<std::string> flags) {
    flags.insert(flags.begin(), {"--storage=memory", "--tls-cert-file=" + P("server.pem"),
                                 "--tls-key-file=" + P("server.key")});
    return server_.Start(flags);
  }
  client::Endpoint Https(const std::string& client_cert = "") const {
    client::Endpoint ep = server_.endpoint();
    ep.tls = true;
    ep.tls_options.ca_file = P("ca.pem");
    if (!client_cert.empty()) {
      ep.tls_options.cert_file = P(client_cert + ".pem");
      ep.tls_options.key_file = P(client_cert + ".key");
    }
    return ep;
  }
  Shell Curl(const std::string& args, const std::string& path = "/camellia/health/check") {
    return Sh(fmt::format("curl -sS --max-time 10 {} https://127.0.0.1:{}{}", args, server_.port(),
                          path));
  }
  // The fingerprint a new TLS client of `port` sees.
  std::string ServedFingerprint(uint16_t port) {
    client::Endpoint ep = Https();
    ep.port = port;
    Result<client::HttpConnection> c = client::HttpConnection::Connect(ep);
    if (!c.has_value()) return c.error().message();
    return c->tls_session()->PeerFingerprint();
  }
  int64_t Metric(std::string_view name) {
    ApiResponse r = ApiClient(Https()).Get("/metrics");
    size_t at = r.http.body.find("\n" + std::string(name) + " ");
    if (at == std::string::npos) return -1;
    return std::stoll(r.http.body.substr(at + name.size() + 2));
  }
  // The metric once it reaches `want` (a failed handshake is counted when the server reads the
  // client's alert, which may come after the client has given up); its last value otherwise.
  int64_t WaitMetric(std::string_view name, int64_t want) {
    int64_t v = Metric(name);
    for (auto end = std::chrono::steady_clock::now() + 5s;
         v < want && std::chrono::steady_clock::now() < end; std::this_thread::sleep_for(10ms)) {
      v = Metric(name);
    }
    return v;
  }
  // Copies the files over the server's tls-cert-file and tls-key-file, in place (as certbot or
  // cert-manager would), then sends SIGHUP.
  void ServeFiles(const std::string& cert, const std::string& key) {
    using std::filesystem::copy_options;
    std::filesystem::copy_file(P(cert), P("server.pem"), copy_options::overwrite_existing);
    std::filesystem::copy_file(P(key), P("server.key"), copy_options::overwrite_existing);
    ASSERT_EQ(::kill(server_.pid(), SIGHUP), 0);
  }
  // Waits for `needle` in the server's log (what a SIGHUP did).
  bool WaitLog(std::string_view needle, size_t count = 1) {
    for (auto end = std::chrono::steady_clock::now() + 5s; std::chrono::steady_clock::now() < end;
         std::this_thread::sleep_for(10ms)) {
      std::string log = server_.Stderr();
      size_t seen = 0;
      for (size_t at = log.find(needle); at != std::string::npos; at = log.find(needle, at + 1)) {
        ++seen;
      }
      if (seen >= count) return true;
    }
    return false;
  }

  testutil::TempDir dir_;
  ServerProcess server_;
};

TEST_F(TlsTest, CurlWithTheRightCaGetsAnswersAndAWrongCaIsRefused) {
  ASSERT_TRUE(Start({}).ok()) << server_.Stderr();
  Shell ok = Curl("--cacert " + P("ca.pem"));
  EXPECT_EQ(ok.exit_code, 0) << ok.out;
  EXPECT_EQ(ok.out, R"({"code":200})");
  // By name too (subjectAltName DNS:localhost), and a queue operation.
  ok =
      Sh(fmt::format("curl -sS --cacert {} https://localhost:{}/camellia/delayQueue/sendMsg -d "
                     "'topic=t&msg=over-tls&delayMillis=0'",
                     P("ca.pem"), server_.port()));
  EXPECT_EQ(ok.exit_code, 0) << ok.out;
  EXPECT_NE(ok.out.find(R"("msg":"over-tls")"), std::string::npos) << ok.out;

  Shell wrong = Curl("--cacert " + P("other-ca.pem"));
  EXPECT_EQ(wrong.exit_code, 60) << wrong.out;  // curl: peer certificate cannot be verified
  Result<client::HttpConnection> c = [&] {
    client::Endpoint ep = Https();
    ep.tls_options.ca_file = P("other-ca.pem");
    return client::HttpConnection::Connect(ep);
  }();
  ASSERT_FALSE(c.has_value());
  EXPECT_NE(c.error().message().find("certificate verify failed"), std::string::npos)
      << c.error().message();
  EXPECT_EQ(WaitMetric("cq_http_tls_handshake_failures_total", 2), 2);
}

TEST_F(TlsTest, PlainHttpToTheTlsPortIsClosedWithoutAnAnswerAndCounted) {
  ASSERT_TRUE(Start({"--log-level=debug"}).ok()) << server_.Stderr();
  client::Endpoint plain = server_.endpoint();
  for (int i = 0; i < 3; ++i) {
    Result<client::HttpConnection> c = client::HttpConnection::Connect(plain);
    ASSERT_TRUE(c.has_value()) << c.error().message();
    Result<client::Response> r = c->Request("GET", "/camellia/health/check", {}, {}, 5s);
    ASSERT_FALSE(r.has_value()) << "an answer in plain HTTP: " << r->status;
    EXPECT_EQ(r.error().code(), Errc::kUnavailable) << r.error().message();  // closed, no hang
  }
  Shell curl = Sh(fmt::format("curl -sS --max-time 5 http://127.0.0.1:{}/camellia/health/check",
                              server_.port()));
  EXPECT_EQ(curl.exit_code, 52) << curl.out;  // empty reply from server
  EXPECT_TRUE(server_.running());
  EXPECT_EQ(ApiClient(Https()).Get("/camellia/health/check").code(), 200);
  EXPECT_EQ(WaitMetric("cq_http_tls_handshake_failures_total", 4), 4);
  EXPECT_TRUE(WaitLog("failed: http request", 4)) << server_.Stderr();  // debug level
}

TEST_F(TlsTest, AClientCertificateIsRequiredWhenAClientCaIsSet) {
  ASSERT_TRUE(Start({"--tls-client-ca-file=" + P("ca.pem")}).ok()) << server_.Stderr();
  Shell none = Curl("--cacert " + P("ca.pem"));
  EXPECT_NE(none.exit_code, 0) << none.out;
  EXPECT_EQ(none.out.find(R"({"code":200})"), std::string::npos) << none.out;
  Shell stranger = Curl(fmt::format("--cacert {} --cert {} --key {}", P("ca.pem"),
                                    P("stranger.pem"), P("stranger.key")));
  EXPECT_NE(stranger.exit_code, 0) << stranger.out;
  Shell ok = Curl(
      fmt::format("--cacert {} --cert {} --key {}", P("ca.pem"), P("client.pem"), P("client.key")));
  EXPECT_EQ(ok.exit_code, 0) << ok.out;
  EXPECT_EQ(ok.out, R"({"code":200})");
  // The CLI, with --cert-file and --key-file.
  testutil::ExitResult cli =
      testutil::RunBinary({"send", fmt::format("--server=https://localhost:{}", server_.port()),
                           "--ca-file=" + P("ca.pem"), "--cert-file=" + P("client.pem"),
                           "--key-file=" + P("client.key"), "--topic=t", "--msg=m"});
  EXPECT_EQ(cli.exit_code, 0) << cli.out << cli.err;
  cli = testutil::RunBinary({"send", fmt::format("--server=https://localhost:{}", server_.port()),
                             "--ca-file=" + P("ca.pem"), "--topic=t", "--msg=m"});
  EXPECT_EQ(cli.exit_code, 3) << cli.out << cli.err;  // unreachable: no answer without a cert
}

TEST_F(TlsTest, SighupServesTheNewCertificateToNewConnectionsAndKeepsOpenOnes) {
  ASSERT_TRUE(Start({"--grpc-listen=127.0.0.1:0"}).ok()) << server_.Stderr();
  const std::string first = Fingerprint("server");
  const std::string second = Fingerprint("server2");
  ASSERT_NE(first, second);
  EXPECT_EQ(ServedFingerprint(server_.port()), first);
  EXPECT_EQ(ServedFingerprint(server_.grpc_port()), first);
  // A keep-alive connection made before the reload.
  Result<client::HttpConnection> open = client::HttpConnection::Connect(Https());
  ASSERT_TRUE(open.has_value()) << open.error().message();
  ASSERT_TRUE(open->Request("GET", "/camellia/health/check").has_value());

  // The files of another certificate.
  ServeFiles("server2.pem", "server2.key");
  ASSERT_TRUE(WaitLog("SIGHUP: TLS certificate reloaded")) << server_.Stderr();
  EXPECT_EQ(ServedFingerprint(server_.port()), second);
  // gRPC reads its (in-memory) copies once a second.
  std::string grpc_seen;
  for (auto end = std::chrono::steady_clock::now() + 5s;
       (grpc_seen = ServedFingerprint(server_.grpc_port())) != second &&
       std::chrono::steady_clock::now() < end;
       std::this_thread::sleep_for(50ms)) {
  }
  EXPECT_EQ(grpc_seen, second);
  // The connection made before goes on, with the certificate it began with.
  Result<client::Response> still = open->Request("GET", "/camellia/health/check");
  ASSERT_TRUE(still.has_value()) << still.error().message();
  EXPECT_EQ(still->status, 200);
  EXPECT_EQ(open->tls_session()->PeerFingerprint(), first);

  // A broken file: logged, and the certificate in use stays.
  std::ofstream(P("server.pem"), std::ios::trunc) << "not a certificate\n";
  ASSERT_EQ(::kill(server_.pid(), SIGHUP), 0);
  ASSERT_TRUE(
      WaitLog("SIGHUP: TLS certificate not reloaded, the one in use stays: "
              "tls-cert-file: '" +
              P("server.pem") + "' holds no PEM certificate"))
      << server_.Stderr();
  EXPECT_EQ(ServedFingerprint(server_.port()), second);
  EXPECT_EQ(ServedFingerprint(server_.grpc_port()), second);
  // A key that does not match: the same.
  ServeFiles("server2.pem", "client.key");
  ASSERT_TRUE(WaitLog("does not match the certificate")) << server_.Stderr();
  EXPECT_EQ(ServedFingerprint(server_.port()), second);
  EXPECT_TRUE(server_.running());
  // The key never reaches the log.
  std::string key_line = ReadText(P("server2.key")).substr(30, 40);
  EXPECT_EQ(server_.Stderr().find(key_line), std::string::npos);
}

TEST_F(TlsTest, StartIsRefusedWithASentenceNamingTheProblem) {
  struct Case {
    std::vector<std::string> flags;
    std::string sentence;
  };
  const std::vector<Case> cases = {
      {{"--tls-cert-file=" + P("server.pem")},
       "tls-cert-file is set but tls-key-file is not: TLS needs both"},
      {{"--tls-cert-file=" + P("server.pem"), "--tls-key-file=" + P("missing.key")},
       "tls-key-file: cannot read '" + P("missing.key") + "': No such file or directory"},
      {{"--tls-cert-file=" + P("server.pem"), "--tls-key-file=" + P("client.key")},
       "tls-key-file: the key in '" + P("client.key") + "' does not match the certificate in '" +
           P("server.pem") + "' (tls-cert-file)"},
      {{"--tls-cert-file=" + P("server.key"), "--tls-key-file=" + P("server.key")},
       "tls-cert-file: '" + P("server.key") + "' holds no PEM certificate"},
      {{"--tls-cert-file=" + P("server.pem"), "--tls-key-file=" + P("server.key"),
        "--tls-client-ca-file=" + P("missing.pem")},
       "tls-client-ca-file: cannot read '" + P("missing.pem") + "'"},
  };
  for (const Case& c : cases) {
    std::vector<std::string> args = {"serve", "--listen=127.0.0.1:0", "--storage=memory"};
    args.insert(args.end(), c.flags.begin(), c.flags.end());
    testutil::ExitResult r = testutil::RunBinary(args);
    EXPECT_EQ(r.exit_code, 2) << r.err;
    EXPECT_NE(r.err.find(c.sentence), std::string::npos) << "want: " << c.sentence << "\n" << r.err;
    EXPECT_EQ(r.err.find("PRIVATE KEY"), std::string::npos) << r.err;
  }
  // --print-config names the files, never their content.
  testutil::ExitResult r =
      testutil::RunBinary({"serve", "--print-config", "--tls-cert-file=" + P("server.pem"),
                           "--tls-key-file=" + P("server.key")});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("tls-key-file = \"" + P("server.key") + "\""), std::string::npos);
  EXPECT_EQ(r.out.find("PRIVATE KEY"), std::string::npos);
}

TEST_F(TlsTest, KeepAliveLongPollsAndMaxConnectionsWorkOverTls) {
  ASSERT_TRUE(Start({"--test-clock", "--max-connections=3"}).ok()) << server_.Stderr();
  ApiClient api(Https());
  // Keep-alive: several requests on one TLS connection.
  for (int i = 0; i < 3; ++i) {
    ApiResponse r = api.Queue("sendMsg", {{"topic", "t"}, {"msg", "m"}, {"delayMillis", "0"}});
    ASSERT_EQ(r.code(), 200) << r.Describe();
    EXPECT_EQ(r.header("Connection"), "");
  }
  // A long poll parks over TLS and wakes on a send.
  ApiClient poller(Https());
  ASSERT_TRUE(
      poller.BeginQueue("longPollingMsg", {{"topic", "lp"}, {"longPollingTimeoutMillis", "60000"}})
          .ok());
  ASSERT_TRUE(api.WaitParked(1));
  ASSERT_EQ(api.Queue("sendMsg", {{"topic", "lp"}, {"msg", "woken"}, {"delayMillis", "0"}}).code(),
            200);
  ApiResponse woke = poller.Finish();
  EXPECT_EQ(woke.code(), 200) << woke.Describe();
  EXPECT_NE(woke.http.body.find("woken"), std::string::npos) << woke.Describe();
  // A client that leaves during its long poll (closes its TLS connection) is forgotten.
  {
    Result<client::HttpConnection> leaving = client::HttpConnection::Connect(Https());
    ASSERT_TRUE(leaving.has_value()) << leaving.error().message();
    ASSERT_TRUE(leaving
                    ->SendRaw(leaving->Format("POST", "/camellia/delayQueue/longPollingMsg",
                                              "topic=gone&longPollingTimeoutMillis=60000"))
                    .ok());
    ASSERT_TRUE(api.WaitParked(1));
  }
  EXPECT_TRUE(api.WaitParked(0));
  // Three connections are open (api, poller, and a third): the fourth is answered 503 over TLS.
  ApiClient third(Https());
  ASSERT_EQ(third.Get("/camellia/health/check").code(), 200);
  Result<client::HttpConnection> fourth = client::HttpConnection::Connect(Https());
  ASSERT_TRUE(fourth.has_value()) << fourth.error().message();
  Result<client::Response> refused = fourth->ReadResponse(5s);
  ASSERT_TRUE(refused.has_value()) << refused.error().message();
  EXPECT_EQ(refused->status, 503);
  EXPECT_EQ(refused->Header("Retry-After"), "1");
}

TEST_F(TlsTest, IdleRequestAndHandshakeTimeoutsCloseTlsConnections) {
  ASSERT_TRUE(Start({"--idle-timeout-millis=300", "--request-timeout-millis=300",
                     "--tls-handshake-timeout-millis=300"})
                  .ok())
      << server_.Stderr();
  // Idle after a request.
  Result<client::HttpConnection> idle = client::HttpConnection::Connect(Https());
  ASSERT_TRUE(idle.has_value()) << idle.error().message();
  ASSERT_TRUE(idle->Request("GET", "/camellia/health/check").has_value());
  EXPECT_TRUE(idle->WaitClosed(5s));
  // A request that never ends (slow-loris over TLS).
  Result<client::HttpConnection> slow = client::HttpConnection::Connect(Https());
  ASSERT_TRUE(slow.has_value()) << slow.error().message();
  ASSERT_TRUE(slow->SendRaw("POST /camellia/delayQueue/sendMsg HTTP/1.1\r\nHost: x\r\n").ok());
  EXPECT_TRUE(slow->WaitClosed(5s));
  // A client that connects and never starts the handshake.
  testutil::RawConnection silent;
  ASSERT_TRUE(silent.Connect(server_.endpoint()).ok());
  EXPECT_TRUE(silent.WaitClosed(5s));
  EXPECT_EQ(silent.received(), "");
  EXPECT_EQ(WaitMetric("cq_http_tls_handshake_failures_total", 1), 1);
}

// Our own gRPC server's connection timer: a client that never starts its TLS handshake is closed
// at the handshake timeout (the idle timeout: h2_limits_test).
void TlsTest::GrpcClosesAClientThatNeverStartsItsHandshake(const std::string& engine) {
  ASSERT_TRUE(Start({"--grpc-listen=127.0.0.1:0", "--grpc-engine=" + engine,
                     "--tls-handshake-timeout-millis=300"})
                  .ok())
      << server_.Stderr();
  client::Endpoint grpc_ep = server_.endpoint();
  grpc_ep.port = server_.grpc_port();
  testutil::RawConnection silent;
  ASSERT_TRUE(silent.Connect(grpc_ep).ok());
  EXPECT_TRUE(silent.WaitClosed(5s));
  EXPECT_EQ(silent.received(), "");
}

TEST_F(TlsTest, GrpcClosesAClientThatNeverStartsItsHandshakeOnH2) {
  GrpcClosesAClientThatNeverStartsItsHandshake("h2");
}

TEST_F(TlsTest, GrpcClosesAClientThatNeverStartsItsHandshakeOnNghttp2) {
  GrpcClosesAClientThatNeverStartsItsHandshake("nghttp2");
}

// A client that asks for ALPN h2 (the bench's HTTP/2 gRPC client) gets it from the default gRPC
// engine, and a precise refusal from a server that does not select it (the HTTP port).
TEST_F(TlsTest, ClientAlpnH2IsNegotiatedOrTheHandshakeFails) {
  ASSERT_TRUE(Start({"--grpc-listen=127.0.0.1:0"}).ok()) << server_.Stderr();
  client::Endpoint ep = Https();
  ep.tls_options.alpn = "h2";
  ep.port = server_.grpc_port();
  Result<client::HttpConnection> h2 = client::HttpConnection::Connect(ep);
  EXPECT_TRUE(h2.has_value()) << h2.error().message();
  ep.port = server_.port();
  Result<client::HttpConnection> http = client::HttpConnection::Connect(ep);
  ASSERT_FALSE(http.has_value());
  EXPECT_EQ(http.error().message(),
            "TLS handshake with 127.0.0.1: the server did not select h2 (ALPN)");
}

// gRPC over TLS with the same files: gRPC's C++ client, on either gRPC engine.
void TlsTest::GrpcServesTls(const std::string& engine) {
  ASSERT_TRUE(Start({"--grpc-listen=127.0.0.1:0", "--tls-client-ca-file=" + P("ca.pem"),
                     "--grpc-engine=" + engine})
                  .ok())
      << server_.Stderr();
  auto call = [&](const std::string& ca, const std::string& cert) {
    grpc::SslCredentialsOptions o;
    o.pem_root_certs = ReadText(P(ca + ".pem"));
    if (!cert.empty()) {
      o.pem_cert_chain = ReadText(P(cert + ".pem"));
      o.pem_private_key = ReadText(P(cert + ".key"));
    }
    // By address (the certificate names IP:127.0.0.1): a name would go through gRPC's c-ares
    // resolver, whose allocations LeakSanitizer reports at exit.
    auto channel = grpc::CreateChannel(fmt::format("127.0.0.1:{}", server_.grpc_port()),
                                       grpc::SslCredentials(o));
    auto stub = chronoq::v1::DelayQueue::NewStub(channel);
    grpc::ClientContext ctx;
    ctx.set_deadline(std::chrono::system_clock::now() + 5s);
    chronoq::v1::SendRequest req;
    req.set_topic("grpc-tls");
    req.set_msg("m");
    req.set_delay_millis(0);
    chronoq::v1::SendResponse resp;
    return stub->Send(&ctx, req, &resp);
  };
  grpc::Status ok = call("ca", "client");
  EXPECT_TRUE(ok.ok()) << ok.error_message();
  EXPECT_EQ(call("ca", "").error_code(), grpc::StatusCode::UNAVAILABLE);  // no client cert
  EXPECT_EQ(call("ca", "stranger").error_code(), grpc::StatusCode::UNAVAILABLE);
  EXPECT_EQ(call("other-ca", "client").error_code(), grpc::StatusCode::UNAVAILABLE);
  // A plaintext client gets nothing either.
  auto plain = chronoq::v1::DelayQueue::NewStub(grpc::CreateChannel(
      fmt::format("127.0.0.1:{}", server_.grpc_port()), grpc::InsecureChannelCredentials()));
  grpc::ClientContext ctx;
  ctx.set_deadline(std::chrono::system_clock::now() + 3s);
  chronoq::v1::SendRequest req;
  chronoq::v1::SendResponse resp;
  EXPECT_FALSE(plain->Send(&ctx, req, &resp).ok());
  // gRPC's lines about the failed handshakes are debug lines, not in this info-level log.
  EXPECT_EQ(server_.Stderr().find("Handshake failed"), std::string::npos) << server_.Stderr();
  EXPECT_EQ(server_.Stderr().find("handshake failed"), std::string::npos) << server_.Stderr();
}

TEST_F(TlsTest, GrpcServesTlsAndRequiresClientCertificatesWhenConfigured) {
  GrpcServesTls("grpc++");
}

TEST_F(TlsTest, GrpcServesTlsAndRequiresClientCertificatesWhenConfiguredOnNghttp2) {
  GrpcServesTls("nghttp2");
}

// The default engine, which frames HTTP/2 itself (docs/grpc.md), over the same connections as
// nghttp2's.
TEST_F(TlsTest, GrpcServesTlsAndRequiresClientCertificatesWhenConfiguredOnH2) {
  GrpcServesTls("h2");
}

// Our own server: ALPN chooses h2 and refuses a client that offers only other protocols; a SIGHUP
// reaches new gRPC connections at once (no certificate watcher to wait for) and open ones keep
// theirs.
void TlsTest::GrpcNegotiatesH2AndReloadsOnSighup(const std::string& engine) {
  ASSERT_TRUE(Start({"--grpc-listen=127.0.0.1:0", "--grpc-engine=" + engine}).ok())
      << server_.Stderr();
  auto s_client = [&](const std::string& alpn) {
    return Sh(fmt::format("echo | openssl s_client -connect 127.0.0.1:{} -CAfile {} -alpn {}",
                          server_.grpc_port(), P("ca.pem"), alpn));
  };
  EXPECT_NE(s_client("h2").out.find("ALPN protocol: h2"), std::string::npos);
  EXPECT_NE(s_client("h2,http/1.1").out.find("ALPN protocol: h2"), std::string::npos);
  Shell refused = s_client("http/1.1");
  EXPECT_NE(refused.exit_code, 0) << refused.out;
  EXPECT_NE(refused.out.find("no application protocol"), std::string::npos) << refused.out;

  auto channel = [&] {
    grpc::SslCredentialsOptions o;
    o.pem_root_certs = ReadText(P("ca.pem"));
    return grpc::CreateChannel(fmt::format("127.0.0.1:{}", server_.grpc_port()),
                               grpc::SslCredentials(o));
  };
  auto call = [](const std::shared_ptr<grpc::Channel>& ch) {
    grpc::ClientContext ctx;
    ctx.set_deadline(std::chrono::system_clock::now() + 5s);
    chronoq::v1::ListTopicsRequest req;
    chronoq::v1::ListTopicsResponse resp;
    return chronoq::v1::DelayQueue::NewStub(ch)->ListTopics(&ctx, req, &resp);
  };
  auto before = channel();
  grpc::Status first = call(before);
  ASSERT_TRUE(first.ok()) << first.error_code() << " " << first.error_message();
  EXPECT_EQ(ServedFingerprint(server_.grpc_port()), Fingerprint("server"));
  ServeFiles("server2.pem", "server2.key");
  ASSERT_TRUE(WaitLog("SIGHUP: TLS certificate reloaded")) << server_.Stderr();
  EXPECT_EQ(ServedFingerprint(server_.grpc_port()), Fingerprint("server2"));
  EXPECT_TRUE(call(channel()).ok());
  EXPECT_TRUE(call(before).ok());  // the open connection goes on
}

TEST_F(TlsTest, GrpcNegotiatesH2AndReloadsOnSighupOnH2) {
  GrpcNegotiatesH2AndReloadsOnSighup("h2");
}

TEST_F(TlsTest, GrpcNegotiatesH2AndReloadsOnSighupOnNghttp2) {
  GrpcNegotiatesH2AndReloadsOnSighup("nghttp2");
}

}  // namespace
}  // namespace chronoq
