// `chronoq export` and `chronoq import` through the real binary between real servers (issue 21,
// docs/operations.md "Export and import"): a round trip keeps every field and status, between
// embedded stores, from embedded to Redis and back, and on memory; an import run twice changes
// nothing; bad lines are refused one by one with their line number.
#include <gtest/gtest.h>

#include <boost/json.hpp>
#include <fstream>
#include <sstream>

#include "tests/testutil/server_harness.h"
#include "tests/testutil/temp_dir.h"

namespace chronoq::data_test {
namespace {

namespace json = boost::json;
using testutil::ApiClient;
using testutil::ApiResponse;
using testutil::ExitResult;
using testutil::RunBinary;
using testutil::RunBinaryWithInput;
using testutil::ServerProcess;

// Payloads a user may send: quotes, backslashes, escapes, multi-byte UTF-8, JSON in JSON.
const std::vector<std::string> kPayloads = {
    R"({"orderId":42,"note":"he said \"hi\""})",
    "back\\slash and \"quotes\" and \ttab\nnewline",
    "caf\xc3\xa9 \xe2\x9c\x93 \xf0\x9f\x98\x80 \x01\x1f control",
    "plain",
};

const char kCallback[] =
    R"({"type":"http","url":"http://127.0.0.1:9/hook","headers":{"Authorization":"Bearer s3cret"}})";

std::string Url(const ServerProcess& s) { return "http://127.0.0.1:" + std::to_string(s.port()); }

std::string ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::string Describe(const ExitResult& r) {
  return "exit " + std::to_string(r.exit_code) + "\nstdout:\n" + r.out + "\nstderr:\n" + r.err;
}

class ExportImportTest : public ::testing::Test {
 protected:
  // Starts a server on `storage` with a test clock.
  std::unique_ptr<ServerProcess> Start(const std::string& storage) {
    auto s = std::make_unique<ServerProcess>();
    // The allowlist admits the push callback of Fill (its trigger time is never reached).
    Status st =
        s->Start({"--storage=" + storage, "--test-clock", "--push-allowed-targets=127.0.0.1"},
                 std::chrono::seconds(20));
    EXPECT_TRUE(st.ok()) << st.ToString();
    return s;
  }

  ExitResult Export(const ServerProcess& s, const std::string& out,
                    std::vector<std::string> more = {}) {
    std::vector<std::string> args = {"export", "--server=" + Url(s), "--out=" + out};
    args.insert(args.end(), more.begin(), more.end());
    return RunBinary(args, std::chrono::seconds(60));
  }
  ExitResult Import(const ServerProcess& s, const std::string& in) {
    return RunBinary({"import", "--server=" + Url(s), "--in=" + in}, std::chrono::seconds(60));
  }

  // What every round trip carries: each status, every extension field, two topics.
  void Fill(ServerProcess& s) {
    ApiClient api(s.endpoint());
    auto send = [&](testutil::Form f) {
      ApiResponse r = api.Queue("sendMsg", f);
      ASSERT_EQ(r.code(), 200) << r.Describe();
    };
    send({{"topic", "orders"},
          {"msgId", "w1"},
          {"msg", kPayloads[0]},
          {"delayMillis", "60000"},
          {"ttlMillis", "600000"},
          {"maxRetry", "3"},
          {"priority", "5"}});
    send({{"topic", "orders"},
          {"msgId", "quorum"},
          {"msg", kPayloads[3]},
          {"delayMillis", "3600000"},
          {"countTrigger", "3"}});
    ASSERT_EQ(api.Queue("countMsg", {{"topic", "orders"}, {"msgId", "quorum"}}).code(), 200);
    send({{"topic", "orders"},
          {"msgId", "c1"},
          {"msg", kPayloads[1]},
          {"delayMillis", "0"},
          {"priority", "9"}});
    ApiResponse pulled =
        api.Queue("pullMsg", {{"topic", "orders"}, {"batch", "1"}, {"ackTimeoutMillis", "600000"}});
    ASSERT_EQ(pulled.at("delayMsgList").as_array().size(), 1u) << pulled.Describe();
    send({{"topic", "orders"},
          {"msgId", "n1"},
          {"msg", kPayloads[2]},
          {"delayMillis", "0"},
          {"priority", "8"}});
    ASSERT_EQ(
        api.Queue("pullMsg", {{"topic", "orders"}, {"batch", "1"}, {"ackTimeoutMillis", "5000"}})
            .code(),
        200);
    ApiResponse nack =
        api.PostJson(std::string(testutil::kQueuePath) + "ackMsgBatch",
                     R"({"topic":"orders","nack":["n1"],"reason":"printer \"offline\""})");
    ASSERT_EQ(nack.code(), 200) << nack.Describe();
    send({{"topic", "orders"}, {"msgId", "r1"}, {"msg", kPayloads[3]}, {"delayMillis", "0"}});
    send({{"topic", "jobs"}, {"msgId", "j1"}, {"msg", kPayloads[2]}, {"delayMillis", "900000"}});
    // A push callback whose header value reads mask (security.md) and an export keeps.
    send({{"topic", "jobs"},
          {"msgId", "p1"},
          {"msg", kPayloads[3]},
          {"delayMillis", "3600000"},
          {"callback", kCallback}});
  }

  testutil::TempDir dir_;
};

// Every field of getMsg on both servers, for each message of the export.
void ExpectSameMessages(ServerProcess& a, ServerProcess& b, const std::string& exported) {
  ApiClient ca(a.endpoint()), cb(b.endpoint());
  std::istringstream lines(exported);
  std::string line;
  int n = 0;
  while (std::getline(lines, line)) {
    json::object m = json::parse(line).as_object();
    testutil::Form ref = {{"topic", std::string(m["topic"].as_string())},
                          {"msgId", std::string(m["msgId"].as_string())}};
    ApiResponse ra = ca.Queue("getMsg", ref), rb = cb.Queue("getMsg", ref);
    ASSERT_EQ(rb.code(), 200) << rb.Describe();
    EXPECT_EQ(json::serialize(ra.at("delayMsg")), json::serialize(rb.at("delayMsg")));
    ++n;
  }
  EXPECT_EQ(n, 7);
}

TEST_F(ExportImportTest, RoundTripsKeepEveryFieldBetweenStorages) {
  for (std::vector<std::string> chain : {std::vector<std::string>{"embedded", "embedded"},
                                         std::vector<std::string>{"embedded", "redis", "embedded"},
                                         std::vector<std::string>{"memory", "memory"}}) {
    SCOPED_TRACE(chain[0] + " -> " + chain[1] + (chain.size() > 2 ? " -> " + chain[2] : ""));
    std::vector<std::unique_ptr<ServerProcess>> servers;
    servers.push_back(Start(chain[0]));
    Fill(*servers[0]);
    const std::string first = dir_.path() + "/" + chain[0] + "-0.jsonl";
    ExitResult e = Export(*servers[0], first);
    ASSERT_EQ(e.exit_code, 0) << Describe(e);
    EXPECT_NE(e.err.find("exported 7 messages of 2 topics"), std::string::npos) << e.err;
    const std::string exported = ReadFile(first);
    // Absolute times and the export fields are there.
    EXPECT_NE(exported.find("\"ackDeadline\":"), std::string::npos) << exported;
    EXPECT_NE(exported.find("\"lastError\":\"printer \\\"offline\\\"\""), std::string::npos);
    // The callback's real header value (getMsg shows "***"), for import to restore.
    EXPECT_NE(exported.find(R"("headers":{"Authorization":"Bearer s3cret"})"), std::string::npos)
        << exported;
    for (size_t i = 1; i < chain.size(); ++i) {
      servers.push_back(Start(chain[i]));
      ServerProcess& target = *servers.back();
      const std::string in = dir_.path() + "/" + chain[0] + "-" + std::to_string(i - 1) + ".jsonl";
      ExitResult im = Import(target, in);
      ASSERT_EQ(im.exit_code, 0) << Describe(im);
      EXPECT_EQ(im.out, "imported 7, skipped 0 (already there), refused 0\n");
      // Twice: nothing changes.
      im = Import(target, in);
      ASSERT_EQ(im.exit_code, 0) << Describe(im);
      EXPECT_EQ(im.out, "imported 0, skipped 7 (already there), refused 0\n");
      ExpectSameMessages(*servers[0], target, exported);
      // Its own export is the same, byte for byte (same order, fields and times; the real header
      // value), while getMsg masks it.
      ApiResponse p1 =
          ApiClient(target.endpoint()).Queue("getMsg", {{"topic", "jobs"}, {"msgId", "p1"}});
      EXPECT_EQ(json::serialize(p1.at("delayMsg").at("callback").at("headers")),
                R"({"Authorization":"***"})")
          << p1.Describe();
      const std::string again = dir_.path() + "/" + chain[0] + "-" + std::to_string(i) + ".jsonl";
      e = Export(target, again);
      ASSERT_EQ(e.exit_code, 0) << Describe(e);
      EXPECT_EQ(ReadFile(again), exported);
    }
    // On the last target, the consuming message comes back at its ack deadline (the clock moves,
    // nobody sleeps), and the nacked one keeps its reason.
    ServerProcess& last = *servers.back();
    ApiClient api(last.endpoint());
    ApiResponse c1 = api.Queue("getMsg", {{"topic", "orders"}, {"msgId", "c1"}});
    ASSERT_EQ(c1.at("delayMsg").at("status").as_int64(), 3) << c1.Describe();
    const std::string line_c1 = exported.substr(exported.find("\"msgId\":\"c1\""));
    const int64_t deadline = std::stoll(line_c1.substr(line_c1.find("\"ackDeadline\":") + 14));
    const int64_t now = api.Now();
    ASSERT_LT(now, deadline);
    api.AdvanceClock(deadline - now - 1);
    ApiResponse none = api.Queue("pullMsg", {{"topic", "orders"}, {"batch", "10"}});
    for (const json::value& m : none.at("delayMsgList").as_array()) {
      EXPECT_NE(m.at("msgId").as_string(), "c1") << "delivered again before its deadline";
    }
    api.AdvanceClock(1);
    ApiResponse back = api.Queue("pullMsg", {{"topic", "orders"}, {"batch", "10"}});
    bool seen = false;
    for (const json::value& m : back.at("delayMsgList").as_array()) {
      if (m.at("msgId").as_string() != "c1") continue;
      seen = true;
      EXPECT_EQ(m.at("retry").as_int64(), 2);
      EXPECT_EQ(m.at("msg").as_string(), kPayloads[1]);
    }
    EXPECT_TRUE(seen) << back.Describe();
  }
}

TEST_F(ExportImportTest, BadLinesAreRefusedOneByOneAndNothingHalfWritten) {
  std::unique_ptr<ServerProcess> s = Start("memory");
  ApiClient api(s->endpoint());
  const int64_t now = api.Now();
  const std::string good = R"({"topic":"t","msgId":"ok","msg":"m","produceTime":)" +
                           std::to_string(now) + R"(,"triggerTime":)" + std::to_string(now) +
                           R"(,"expireTime":)" + std::to_string(now + 60'000) +
                           R"(,"maxRetry":1,"retry":0,"status":2})";
  std::string input = good + "\n";  // 1
  input += "not json at all\n";     // 2
  input += R"({"topic":"t","msgId":"a","msg":"m"})"
           "\n";  // 3
  input += R"({"topic":"t","msgId":"b","msg":1,"produceTime":0})"
           "\n";       // 4
  input += "\n";       // 5 (blank)
  input += "[1,2]\n";  // 6
  std::string ended = good;
  ended.replace(ended.find("\"ok\""), 4, "\"ended\"");
  ended.replace(ended.find("\"status\":2"), 10, "\"status\":4");
  input += ended + "\n";  // 7
  std::string consuming = good;
  consuming.replace(consuming.find("\"ok\""), 4, "\"nodeadline\"");
  consuming.replace(consuming.find("\"status\":2"), 10, "\"status\":3");
  input += consuming + "\n";  // 8
  std::string expired = good;
  expired.replace(expired.find("\"ok\""), 4, "\"old\"");
  expired.replace(expired.find(std::to_string(now + 60'000)), std::to_string(now).size(),
                  std::to_string(now - 1));
  input += expired;  // 9, no newline
  ExitResult r =
      RunBinaryWithInput({"import", "--server=" + Url(*s)}, input, std::chrono::seconds(30));
  EXPECT_EQ(r.exit_code, 1) << Describe(r);
  EXPECT_EQ(r.out, "imported 1, skipped 0 (already there), refused 7\n");
  for (std::string_view want :
       {"line 2: not JSON", "line 3: produceTime is missing", "line 4: msg must be a string",
        "line 6: not a JSON object", "line 7: status 4 is an ended message",
        "line 8: status 3 (consuming) needs ackDeadline", "line 9: expireTime"}) {
    EXPECT_NE(r.err.find(want), std::string::npos) << want << "\n" << r.err;
  }
  for (std::string id : {"a", "b", "ended", "nodeadline", "old"}) {
    EXPECT_EQ(api.Queue("getMsg", {{"topic", "t"}, {"msgId", id}}).code(), 404) << id;
  }
  EXPECT_EQ(api.Queue("getMsg", {{"topic", "t"}, {"msgId", "ok"}}).code(), 200);
}

TEST_F(ExportImportTest, ExportOfAnUnknownTopicIsAClearError) {
  std::unique_ptr<ServerProcess> s = Start("memory");
  ExitResult r = Export(*s, dir_.path() + "/none.jsonl", {"--topic=nope"});
  EXPECT_EQ(r.exit_code, 1) << Describe(r);
  EXPECT_NE(r.err.find("topic 'nope' does not exist"), std::string::npos) << r.err;
  r = RunBinary({"import", "--server=" + Url(*s), "--in=" + dir_.path() + "/missing.jsonl"});
  EXPECT_EQ(r.exit_code, 2) << Describe(r);
  EXPECT_NE(r.err.find("cannot open --in="), std::string::npos) << r.err;
}

}  // namespace
}  // namespace chronoq::data_test
