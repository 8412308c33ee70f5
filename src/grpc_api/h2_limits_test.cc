// Our own gRPC server's connection limits, framed by itself (h2) or by nghttp2 (grpc_server.h
// GrpcOptions, h2_limits.h), in process over the embedded engine: a raw HTTP/2 client written here
// frame by frame (HPACK literals, no Huffman) drives what a gRPC client never does on purpose: idle
// connections, one connection too many, streams reset as fast as they are opened, PINGs sent
// without ever reading the answers, requests that are malformed or not gRPC's (the engine's own
// checks, h2_wire.h GrpcRequestCheck; the answers decoded with nghttp2's HPACK inflater). gRPC's
// C++ client checks that a well-behaved client is served meanwhile.
#include <grpcpp/grpcpp.h>
#include <gtest/gtest.h>
#include <nghttp2/nghttp2.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "base/clock.h"
#include "base/scheduler.h"
#include "chronoq/v1/delay_queue.grpc.pb.h"
#include "engine/engine.h"
#include "grpc_api/grpc_server.h"
#include "metrics/exposition.h"
#include "metrics/registry.h"
#include "service/queue_service.h"
#include "storage/memory/mem_kv.h"
#include "storage/message_store.h"
#include "tests/testutil/h2_raw_client.h"
#include "tests/testutil/server_harness.h"

namespace chronoq::grpc_api {
namespace {

using namespace h2test;  // NOLINT(google-build-using-namespace): the raw client's names

class H2LimitsTest : public H2ServerTest {};

INSTANTIATE_TEST_SUITE_P(Engines, H2LimitsTest, ::testing::Values("h2", "nghttp2"),
                         [](const ::testing::TestParamInfo<const char*>& info) {
                           return std::string(info.param);
                         });

TEST_P(H2LimitsTest, AConnectionWithNoCallOpenGetsGoawayAfterTheIdleTimeout) {
  GrpcOptions g;
  g.idle_timeout = milliseconds(200);
  Start(g);
  testutil::RawConnection idle;
  Open(&idle);
  EXPECT_TRUE(idle.WaitClosed(seconds(5)));
  const Received r = Parse(idle.received());
  EXPECT_TRUE(Has(r, kGoaway));
  EXPECT_EQ(r.goaway_error, 0u);  // NO_ERROR: the client reconnects for its next call

  // A call open (health Watch, a stream that stays open) keeps its connection.
  // (The call goes with the preface: on a busy host, reading the server's SETTINGS first took
  // longer than the idle timeout.)
  testutil::RawConnection watching;
  ASSERT_TRUE(watching.Connect(Endpoint()).ok());
  ASSERT_TRUE(
      watching
          .Send(Preface() +
                Frame(kHeaders, kEndHeaders, 1, RequestHeaders("/grpc.health.v1.Health/Watch")) +
                Frame(kData, kEndStream, 1, std::string(5, '\0')))
          .ok());
  EXPECT_FALSE(watching.WaitClosed(seconds(1)));        // five idle timeouts
  EXPECT_TRUE(Has(Parse(watching.received()), kData));  // SERVING
  EXPECT_FALSE(Has(Parse(watching.received()), kGoaway));
  EXPECT_TRUE(Call().ok());
}

TEST_P(H2LimitsTest, AConnectionBeyondMaxConnectionsIsClosedAtOnce) {
  GrpcOptions g;
  g.max_connections = 2;
  Start(g);
  testutil::RawConnection a, b, c;
  Open(&a);
  Open(&b);
  ASSERT_TRUE(c.Connect(Endpoint()).ok());
  c.Send(Preface()).IgnoreError();  // may fail: the server may have closed it already
  EXPECT_TRUE(c.WaitClosed(seconds(5)));
  EXPECT_EQ(c.received(), "");
  metrics::TextWriter w;
  registry_.Render(w);
  EXPECT_NE(w.Take().find("\ncq_grpc_connections_refused_total 1\n"), std::string::npos);
  // One closes: a new connection is served (once the server has seen the close).
  a.Close();
  grpc::Status s = Call();
  for (auto end = std::chrono::steady_clock::now() + seconds(5);
       !s.ok() && std::chrono::steady_clock::now() < end;) {
    s = Call();
  }
  EXPECT_TRUE(s.ok()) << s.error_message();
}

// A request over max-msg-bytes + 64 KiB is refused as it arrives, before its end and before it is
// held whole (issue 17): a unary call's body once its DATA passes the limit, a Consume stream's
// message at its length prefix. RESOURCE_EXHAUSTED, then RST_STREAM(NO_ERROR) so that the client
// stops sending; the connection serves on.
TEST_P(H2LimitsTest, ARequestOverTheLimitIsRefusedBeforeItEndsAndTheConnectionServesOn) {
  GrpcOptions g;
  g.max_msg_bytes = 1024;  // the limit: 1024 + 64 KiB = 66,560 bytes
  Start(g);
  testutil::RawConnection c;
  Open(&c);
  // Send: one message of 81,915 bytes in five full DATA frames (within the 1 MiB stream window),
  // no END_STREAM.
  std::string bytes =
      Frame(kHeaders, kEndHeaders, 1, Block(GrpcFields("/chronoq.v1.DelayQueue/Send")));
  std::string body = {'\0', '\0', '\x01', '\x3f', '\xfb'};
  body.resize(5 * 16384, 'x');
  for (size_t at = 0; at < body.size(); at += 16384) {
    bytes += Frame(kData, 0, 1, std::string_view(body).substr(at, 16384));
  }
  // Consume: a message whose length prefix says 1,000,000 bytes, and only its prefix.
  bytes += Frame(kHeaders, kEndHeaders, 3, Block(GrpcFields("/chronoq.v1.DelayQueue/Consume")));
  bytes += Frame(kData, 0, 3, std::string{'\0', '\0', '\x0f', '\x42', '\x40'});
  ASSERT_TRUE(c.Send(bytes).ok());
  std::map<uint32_t, StreamEnd> got = AwaitEnds(&c, {1, 3});
  for (uint32_t id : {1u, 3u}) {
    EXPECT_EQ(got[id].fields["grpc-status"], "8") << "stream " << id;  // RESOURCE_EXHAUSTED
    EXPECT_TRUE(got[id].ended) << "stream " << id;
  }
  // The reset that tells the client to stop follows each answer.
  c.ReadFor(milliseconds(100));
  got = Streams(c.received());
  EXPECT_EQ(got[1].reset, 0u);
  EXPECT_EQ(got[3].reset, 0u);
  EXPECT_FALSE(Has(Parse(c.received()), kGoaway));
  EXPECT_TRUE(Call().ok());
}

TEST_P(H2LimitsTest, AClientThatResetsStreamsFasterThanTheBudgetGetsGoaway) {
  GrpcOptions g;
  g.rst_stream_burst = 20;
  g.rst_stream_per_second = 1;
  Start(g);
  auto open_and_reset = [](uint32_t id) {
    return Frame(kHeaders, kEndHeaders, id, RequestHeaders("/chronoq.v1.DelayQueue/Send")) +
           Frame(kRstStream, 0, id, U32(kCancel));
  };
  // Within the budget: served on.
  testutil::RawConnection calm;
  Open(&calm);
  std::string burst;
  for (uint32_t id = 1; id < 2 * 10; id += 2) burst += open_and_reset(id);
  ASSERT_TRUE(calm.Send(burst).ok());
  EXPECT_FALSE(calm.WaitClosed(milliseconds(300)));
  EXPECT_FALSE(Has(Parse(calm.received()), kGoaway));

  // Beyond it (the rapid reset attack): GOAWAY ENHANCE_YOUR_CALM, closed.
  testutil::RawConnection rapid;
  Open(&rapid);
  burst.clear();
  for (uint32_t id = 1; id < 2 * 100; id += 2) burst += open_and_reset(id);
  rapid.Send(burst).IgnoreError();
  EXPECT_TRUE(rapid.WaitClosed(seconds(5)));
  const Received r = Parse(rapid.received());
  EXPECT_TRUE(Has(r, kGoaway));
  EXPECT_EQ(r.goaway_error, kEnhanceYourCalm);
  EXPECT_TRUE(Call().ok());  // other clients are served
}

TEST_P(H2LimitsTest, AClientThatFloodsPingsWithoutReadingIsClosed) {
  Start(GrpcOptions{});
  testutil::RawConnection flood;
  ASSERT_TRUE(flood.Connect(Endpoint()).ok());
  ASSERT_TRUE(flood.Send(Preface()).ok());
  std::string pings;
  for (int i = 0; i < 50; ++i) pings += Frame(kPing, 0, 0, std::string(8, 'p'));
  // 50 at a time are acknowledged as they come, until the acks fill the socket buffers (never
  // read here); then they queue in the session until its limit (1,000): the server closes and a
  // send fails. 1.7 GB of PINGs would be far beyond it.
  bool closed = false;
  int64_t sent = 0;
  for (; sent < 2'000'000 && !closed; ++sent) closed = !flood.Send(pings).ok();
  EXPECT_TRUE(closed);
  // Not before the session's limit: it queues up to 1,000 acks before it gives up, so at least
  // that many PINGs went through (how many more the socket buffers held varies with the host).
  EXPECT_GT(sent * 50, 1'000);
  EXPECT_TRUE(Call().ok());
}

// A SETTINGS frame of many settings (CVE-2020-11080): past 32 in one frame, GOAWAY
// ENHANCE_YOUR_CALM and closed, as nghttp2's default (nghttp2_option_set_max_settings).
TEST_P(H2LimitsTest, ASettingsFrameOfTooManySettingsGetsGoaway) {
  Start(GrpcOptions{});
  auto settings = [](int n) {
    std::string payload;
    for (int i = 0; i < n; ++i) payload += std::string("\x00\x04", 2) + U32(65535);
    return Frame(kSettings, 0, 0, payload);
  };
  testutil::RawConnection calm;
  Open(&calm);
  ASSERT_TRUE(calm.Send(settings(32)).ok());
  EXPECT_FALSE(calm.WaitClosed(milliseconds(300)));
  EXPECT_FALSE(Has(Parse(calm.received()), kGoaway));

  testutil::RawConnection flood;
  Open(&flood);
  flood.Send(settings(33)).IgnoreError();
  EXPECT_TRUE(flood.WaitClosed(seconds(5)));
  const Received r = Parse(flood.received());
  EXPECT_TRUE(Has(r, kGoaway));
  EXPECT_EQ(r.goaway_error, kEnhanceYourCalm);
  EXPECT_TRUE(Call().ok());
}

// nghttp2's checks of request headers are off (about 1.3k instructions per call net); the
// engine's own (h2_wire.h GrpcRequestCheck) answer what a gRPC client relies on.
TEST_P(H2LimitsTest, RequestsThatAreMalformedOrNotGrpcAreRefusedAndTheConnectionServesOn) {
  Start(GrpcOptions{});
  testutil::RawConnection c;
  Open(&c);
  const std::string path = "/chronoq.v1.DelayQueue/ListTopics";
  auto with = [&](std::string name, std::string value) {
    auto f = GrpcFields(path);
    for (auto& [n, v] : f) {
      if (n == name) {
        v = value;
        return f;
      }
    }
    f.emplace_back(std::move(name), std::move(value));
    return f;
  };
  auto without = [&](const std::string& name) {
    auto f = GrpcFields(path);
    std::erase_if(f, [&](const auto& nv) { return nv.first == name; });
    return f;
  };
  auto pseudo_after_regular = GrpcFields(path);
  pseudo_after_regular.emplace_back(":authority", "y");
  auto moved_path = without(":path");
  moved_path.emplace_back(":path", path);  // after content-type and te
  auto twice = GrpcFields(path);
  twice.insert(twice.begin(), {":path", path});
  auto unknown_pseudo = GrpcFields(path);
  unknown_pseudo.insert(unknown_pseudo.begin(), {":status", "200"});
  // Stream id -> its request's fields; each request a header block and an empty message.
  const std::vector<std::pair<uint32_t, std::vector<std::pair<std::string, std::string>>>>
      requests = {
          {1, without(":scheme")},
          {3, without(":method")},
          {5, with(":path", "")},
          {7, twice},
          {9, moved_path},
          {11, pseudo_after_regular},
          {13, unknown_pseudo},
          {15, with("connection", "keep-alive")},
          {17, with("transfer-encoding", "chunked")},
          {19, with("te", "gzip")},
          {21, with("content-type", "text/plain")},
          {23, without("content-type")},
          {25, with("content-type", "application/grpc+json")},
          {27, with(":method", "GET")},
          // Served: the variants a gRPC client may send.
          {29, GrpcFields(path)},
          {31, with("content-type", "application/grpc+proto")},
          {33, with("content-type", "application/grpc; charset=utf-8")},
          {35, with("te", "Trailers")},
          {37, without("te")},
          {39, without(":authority")},
      };
  std::string bytes;
  for (const auto& [id, fields] : requests) {
    bytes += Frame(kHeaders, kEndHeaders, id, Block(fields)) +
             Frame(kData, kEndStream, id, std::string(5, '\0'));
  }
  ASSERT_TRUE(c.Send(bytes).ok());
  std::vector<uint32_t> ids;
  for (const auto& [id, fields] : requests) ids.push_back(id);
  std::map<uint32_t, StreamEnd> got = AwaitEnds(&c, ids);
  // Malformed (RFC 9113 section 8.1.1): RST_STREAM PROTOCOL_ERROR, no answer.
  for (uint32_t id = 1; id <= 19; id += 2) {
    EXPECT_EQ(got[id].reset, kProtocolError) << "stream " << id;
    EXPECT_TRUE(got[id].fields.empty()) << "stream " << id;
  }
  // Not gRPC's content-type: HTTP 415, INVALID_ARGUMENT with the sentence; not POST: 405.
  for (uint32_t id : {21u, 23u, 25u}) {
    EXPECT_EQ(got[id].fields[":status"], "415") << "stream " << id;
    EXPECT_EQ(got[id].fields["content-type"], "application/grpc");
    EXPECT_EQ(got[id].fields["grpc-status"], "3") << "stream " << id;
    EXPECT_TRUE(got[id].ended);
  }
  EXPECT_EQ(got[21].fields["grpc-message"],
            "content-type must be application/grpc or application/grpc+proto, not "
            "\"text/plain\"");
  EXPECT_EQ(got[23].fields["grpc-message"],
            "content-type is missing: a gRPC request's is application/grpc");
  EXPECT_EQ(got[27].fields[":status"], "405");
  EXPECT_EQ(got[27].fields["grpc-status"], "13");
  EXPECT_EQ(got[27].fields["grpc-message"], ":method must be POST, not \"GET\"");
  // The others are served (ListTopics: OK in the trailers after the answer's DATA).
  for (uint32_t id = 29; id <= 39; id += 2) {
    EXPECT_EQ(got[id].fields[":status"], "200") << "stream " << id;
    EXPECT_EQ(got[id].fields["grpc-status"], "0") << "stream " << id;
    EXPECT_TRUE(got[id].ended) << "stream " << id;
  }
  EXPECT_FALSE(Has(Parse(c.received()), kGoaway));
  EXPECT_TRUE(Call().ok());
}

// Also nghttp2's checks once (RFC 9113 sections 8.1.1 and 8.2.1): a field name's characters
// (no uppercase letter, only tchar) and a request's DATA against its content-length.
TEST_P(H2LimitsTest, BadHeaderNamesAndDataThatDisagreesWithContentLengthAreProtocolErrors) {
  Start(GrpcOptions{});
  testutil::RawConnection c;
  Open(&c);
  const std::string path = "/chronoq.v1.DelayQueue/ListTopics";
  auto plus = [&](std::vector<std::pair<std::string, std::string>> extra) {
    auto f = GrpcFields(path);
    f.insert(f.end(), extra.begin(), extra.end());
    return f;
  };
  const std::string message(5, '\0');  // an empty ListTopicsRequest, framed
  struct Request {
    uint32_t id;
    std::vector<std::pair<std::string, std::string>> fields;
    std::vector<std::string> data;  // its DATA frames, the last with END_STREAM
  };
  const std::vector<Request> requests = {
      {1, plus({{"Content-Type", "application/grpc"}}), {message}},
      {3, plus({{"x-Trace", "1"}}), {message}},
      {5, plus({{"x trace", "1"}}), {message}},
      {7, plus({{"x(trace)", "1"}}), {message}},
      {9, plus({{"content-length", "4"}}), {message}},   // DATA past it
      {11, plus({{"content-length", "6"}}), {message}},  // DATA short of it
      {13,
       plus({{"content-length", "5"}}),
       {std::string(3, '\0'), std::string(3, '\0')}},  // past it, 2nd frame
      {15, plus({{"content-length", "5"}}), {}},       // no DATA at all
      {17, plus({{"content-length", "five"}}), {message}},
      {19, plus({{"content-length", "5"}, {"content-length", "5"}}), {message}},
      // Served: the fields gRPC's clients send, and a content-length that agrees.
      {21, plus({{"content-length", "5"}}), {message}},
      {23, plus({{"content-length", "5"}}), {std::string(2, '\0'), std::string(3, '\0')}},
      {25,
       plus({{"user-agent", "grpc-python/1.66.1 grpc-c/43.0.0 (linux; chttp2)"},
             {"grpc-accept-encoding", "identity,deflate,gzip"},
             {"x-request-id_2", "!#$%&'*+-.^_`|~"}}),
       {message}},
  };
  std::string bytes;
  for (const auto& r : requests) {
    const uint8_t flags = r.data.empty() ? kEndHeaders | kEndStream : kEndHeaders;
    bytes += Frame(kHeaders, flags, r.id, Block(r.fields));
    for (size_t i = 0; i < r.data.size(); ++i) {
      bytes += Frame(kData, i + 1 == r.data.size() ? kEndStream : 0, r.id, r.data[i]);
    }
  }
  ASSERT_TRUE(c.Send(bytes).ok());
  std::vector<uint32_t> ids;
  for (const auto& r : requests) ids.push_back(r.id);
  std::map<uint32_t, StreamEnd> got = AwaitEnds(&c, ids);
  for (uint32_t id = 1; id <= 19; id += 2) {
    EXPECT_EQ(got[id].reset, kProtocolError) << "stream " << id;
    EXPECT_TRUE(got[id].fields.empty()) << "stream " << id;
  }
  for (uint32_t id = 21; id <= 25; id += 2) {
    EXPECT_EQ(got[id].fields[":status"], "200") << "stream " << id;
    EXPECT_EQ(got[id].fields["grpc-status"], "0") << "stream " << id;
    EXPECT_TRUE(got[id].ended) << "stream " << id;
  }
  EXPECT_FALSE(Has(Parse(c.received()), kGoaway));
  EXPECT_TRUE(Call().ok());
}

// RST_STREAM or WINDOW_UPDATE on a stream the client never opened (idle) is a connection error
// (RFC 9113 sections 5.1 and 6.4), as nghttp2 has it: GOAWAY PROTOCOL_ERROR, closed. (The own
// engine ignored both, then served the stream opened after the reset: found by its fuzz target.)
TEST_P(H2LimitsTest, ResetOrWindowUpdateOfAStreamNeverOpenedIsAConnectionError) {
  Start(GrpcOptions{});
  constexpr uint8_t kWindowUpdate = 8;
  for (const uint8_t type : {kRstStream, kWindowUpdate}) {
    testutil::RawConnection c;
    Open(&c);
    c.Send(Frame(type, 0, 5, U32(type == kRstStream ? kCancel : 100))).IgnoreError();
    EXPECT_TRUE(c.WaitClosed(seconds(5))) << int{type};
    const Received r = Parse(c.received());
    EXPECT_TRUE(Has(r, kGoaway)) << int{type};
    EXPECT_EQ(r.goaway_error, kProtocolError) << int{type};
  }
  EXPECT_TRUE(Call().ok());
}

}  // namespace
}  // namespace chronoq::grpc_api
