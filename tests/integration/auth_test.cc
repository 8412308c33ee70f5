// Authentication, authorization and namespaces through the real binary (docs/security.md): every
// endpoint x every role x {no token, wrong token, right token}, the /t/<token> path prefix,
// namespace isolation on the storage under test (memory, embedded, Redis, two nodes on Redis),
// listMsg cursors of another namespace, SIGHUP reloads, and no token text anywhere a client or
// an operator can read.
#include <gtest/gtest.h>

#include <csignal>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <thread>
#include <tuple>

#include "tests/integration/auth_util.h"

namespace chronoq::it {
namespace {

struct Endpoint {
  std::string method;
  std::string path;
  Form params;
  std::string roles;  // who may: P producer, C consumer, A a namespace's admin, R admin of '*'
};

std::vector<Endpoint> Endpoints(const std::string& topic) {
  const std::string q = "/camellia/delayQueue/";
  const Form ref = {{"topic", topic}, {"msgId", "m1"}};
  auto with = [](Form f, Form extra) {
    for (auto& e : extra) f.push_back(std::move(e));
    return f;
  };
  return {
      {"POST", q + "sendMsg", with(ref, {{"msg", "x"}, {"delayMillis", "0"}}), "PAR"},
      {"POST", q + "sendMsgBatch", {{"topic", topic}, {"msgs", "[]"}}, "PAR"},
      {"POST", q + "getMsg", ref, "PCAR"},
      {"POST", q + "updateMsg", with(ref, {{"priority", "1"}}), "PAR"},
      {"POST", q + "countMsg", ref, "PAR"},
      {"POST", q + "deleteMsg", ref, "PAR"},
      {"POST", q + "pullMsg", {{"topic", topic}}, "CAR"},
      // A ready message waits there for each role allowed (the test clock never ends a wait).
      {"POST", q + "longPollingMsg", {{"topic", topic + ".lp"}}, "CAR"},
      {"POST", q + "ackMsg", with(ref, {{"ack", "true"}}), "CAR"},
      {"POST", q + "ackMsgBatch", {{"topic", topic}, {"ack", "m1"}}, "CAR"},
      {"POST", q + "touchMsg", ref, "CAR"},
      {"GET", q + "listMsg", {{"topic", topic}}, "AR"},
      {"GET", q + "getTopicInfo", {{"topic", topic}}, "PCAR"},
      {"GET", q + "getTopicInfoList", {}, "PCAR"},
      {"GET", q + "getTopicConfig", {{"topic", topic}}, "AR"},
      {"POST", q + "setTopicConfig", {{"topic", topic}, {"maxRetry", "3"}}, "AR"},
      {"POST", q + "deleteTopicConfig", {{"topic", topic}}, "AR"},
      {"POST", q + "pauseTopic", {{"topic", topic}}, "AR"},
      {"POST", q + "resumeTopic", {{"topic", topic}}, "AR"},
      {"POST", q + "purgeTopic", {{"topic", topic}}, "AR"},
      {"POST", q + "redriveMsg", {{"topic", topic}}, "AR"},
      {"POST", q + "getMsgHistory", ref, "PCAR"},
      {"GET", q + "getMonitorData", {}, "R"},
      {"GET", "/metrics", {}, "R"},
      {"GET", "/camellia/health/online", {}, "R"},
      {"GET", "/camellia/health/offline", {}, "R"},
      {"GET", "/dashboard/api/topics", {}, "AR"},
      {"GET", "/dashboard/api/history", {{"topic", topic}}, "AR"},
      {"POST", "/chronoq/admin/backup", {{"to", "relative/refused"}}, "R"},
      {"POST", q + "importMsgBatch", {}, "R"},  // a form body: refused with 400 when admitted
  };
}

// Every route the server serves, as its metrics name them (cq_http_requests_total's `route`
// label: one per registered route; "other" is every unknown path).
std::set<std::string> ServedRoutes(ApiClient& root) {
  ApiResponse m = root.Get("/metrics");
  EXPECT_EQ(m.status, 200) << m.Describe();
  std::set<std::string> out;
  const std::string key = "cq_http_requests_total{route=\"";
  for (size_t at = m.http.body.find(key); at != std::string::npos;
       at = m.http.body.find(key, at + 1)) {
    const size_t from = at + key.size();
    std::string route = m.http.body.substr(from, m.http.body.find('"', from) - from);
    if (route != "other") out.insert(std::move(route));
  }
  return out;
}

ApiResponse Call(ApiClient& c, const Endpoint& e, const std::string& prefix = "") {
  if (e.method == "GET") return c.Get(prefix + e.path, e.params);
  return c.Post(prefix + e.path, e.params);
}

void ExpectRefused(const ApiResponse& r, int status, const std::string& path) {
  ExpectRequestError(r, status, path);
  if (status == 401) {
    EXPECT_EQ(r.header("WWW-Authenticate"), "Bearer") << r.Describe();
  }
}

TEST_F(AuthTest, EveryEndpointEveryRoleEveryCredential) {
  const std::string topic = Topic();
  const std::vector<std::pair<char, std::string>> roles = {
      {'P', kShopProducer}, {'C', kShopConsumer}, {'A', kShopAdmin}, {'R', kRoot}};
  auto none = As("");
  auto wrong = As(kWrong);
  for (const std::string& token : {kShopProducer, kShopProducer, kRoot}) {
    ExpectAppCode(
        As(token)->Queue("sendMsg", {{"topic", topic + ".lp"}, {"msg", "x"}, {"delayMillis", "0"}}),
        200);
  }
  for (const Endpoint& e : Endpoints(topic)) {
    SCOPED_TRACE(e.method + " " + e.path);
    ExpectRefused(Call(*none, e), 401, e.path);
    ExpectRefused(Call(*wrong, e), 401, e.path);
    for (const auto& [role, token] : roles) {
      SCOPED_TRACE(std::string("role ") + role);
      auto c = As(token);
      ApiResponse r = Call(*c, e);
      if (e.roles.find(role) != std::string::npos) {
        EXPECT_NE(r.status, 401) << r.Describe();
        EXPECT_NE(r.status, 403) << r.Describe();
        EXPECT_LT(r.status, 500) << r.Describe();
      } else {
        ExpectRefused(r, 403, e.path);
      }
    }
  }
  ApiResponse online = As(kRoot)->Get("/camellia/health/online");
  EXPECT_EQ(online.status, 200) << online.Describe();
  // The walk covers every route the binary serves: a route not listed above must be open (a
  // health check, the dashboard's files, a test control), else it is missing from the walk.
  std::set<std::string> walked;
  for (const Endpoint& e : Endpoints(topic)) walked.insert(e.path);
  const std::set<std::string> served = ServedRoutes(*As(kRoot));
  EXPECT_GT(served.size(), walked.size());
  for (const std::string& route : served) {
    if (walked.contains(route)) continue;
    SCOPED_TRACE("unwalked route " + route);
    ApiResponse r = none->Get(route);
    EXPECT_NE(r.status, 401) << "a route that needs a token is missing from Endpoints()";
    EXPECT_NE(r.status, 403) << r.Describe();
  }
  for (const std::string& path : walked) EXPECT_TRUE(served.contains(path)) << path;
  // Open to everyone, without a token.
  // (The test controls exist only in test mode, and are open there: the harness's clock moves.)
  for (const char* open : {"/camellia/health/check", "/camellia/health/status", "/dashboard/",
                           "/chronoq/test/longPolls"}) {
    ApiResponse r = none->Get(open);
    EXPECT_EQ(r.status, 200) << open << " " << r.Describe();
  }
  // An unknown endpoint: 401 before 404 (it tells nothing to who has no token).
  ExpectRefused(none->Get("/camellia/delayQueue/nothing"), 401, "/camellia/delayQueue/nothing");
  EXPECT_EQ(As(kShopConsumer)->Get("/camellia/delayQueue/nothing").status, 404);
}

// importMsgBatch (a JSON body) restores stored state in any namespace: an admin of '*' only.
TEST_F(AuthTest, ImportIsForTheAdminOfTheUnnamedNamespaceOnly) {
  const std::string path = "/camellia/delayQueue/importMsgBatch";
  const std::string body = R"({"msgs":[]})";
  ExpectRefused(As("")->PostJson(path, body), 401, path);
  ExpectRefused(As(kWrong)->PostJson(path, body), 401, path);
  for (const std::string& token : {kShopProducer, kShopConsumer, kShopAdmin}) {
    ExpectRefused(As(token)->PostJson(path, body), 403, path);
  }
  ApiResponse root = As(kRoot)->PostJson(path, body);
  EXPECT_NE(root.status, 401) << root.Describe();
  EXPECT_NE(root.status, 403) << root.Describe();
  EXPECT_LT(root.status, 500) << root.Describe();
}

TEST_F(AuthTest, TokenPathPrefixForTheJavaSdk) {
  const std::string topic = Topic();
  auto none = As("");
  const std::string q = "/camellia/delayQueue/";
  ApiResponse r =
      none->Post("/t/" + kShopProducer + q + "sendMsg",
                 {{"topic", topic}, {"msgId", "a"}, {"msg", "x"}, {"delayMillis", "0"}});
  ExpectAppCode(r, 200);
  EXPECT_EQ(Str(r.at("delayMsg").as_object().at("topic")), topic);
  r = none->Post("/t/" + kShopConsumer + q + "pullMsg", {{"topic", topic}});
  ExpectAppCode(r, 200);
  ASSERT_EQ(r.at("delayMsgList").as_array().size(), 1u) << r.Describe();
  r = none->Post("/t/" + kShopConsumer + q + "sendMsg",
                 {{"topic", topic}, {"msg", "x"}, {"delayMillis", "0"}});
  ExpectRefused(r, 403, q + "sendMsg");
  // A wrong token in the prefix: 401, and neither the body nor the path echoes it.
  r = none->Post("/t/" + kWrong + q + "getMsg", {{"topic", topic}, {"msgId", "a"}});
  ExpectRefused(r, 401, q + "getMsg");
  EXPECT_EQ(r.http.body.find(kWrong), std::string::npos) << r.Describe();
  r = none->Get("/t/" + kWrong);
  ExpectRefused(r, 401, "/");
  EXPECT_EQ(r.http.body.find(kWrong), std::string::npos) << r.Describe();
  // The prefix with a query string after the path.
  r = none->Get("/t/" + kShopAdmin + q + "getTopicInfo", {{"topic", topic}});
  ExpectAppCode(r, 200);
}

TEST_F(AuthTest, MalformedAuthorizationIs401) {
  testutil::RawConnection raw;
  ASSERT_TRUE(raw.Connect(server().endpoint()).ok());
  ASSERT_TRUE(raw.Send("GET /camellia/delayQueue/getTopicInfoList HTTP/1.1\r\nHost: x\r\n"
                       "Authorization: Basic dXNlcjpwYXNz\r\nConnection: close\r\n\r\n")
                  .ok());
  ASSERT_TRUE(raw.ReadUntil("}", std::chrono::seconds(5))) << raw.received();
  const std::string& answer = raw.received();
  EXPECT_NE(answer.find("HTTP/1.1 401"), std::string::npos) << answer;
  EXPECT_NE(answer.find("the authorization is not 'Bearer <token>'"), std::string::npos) << answer;
}

TEST_F(AuthTest, NamespacesIsolateTopicsMessagesListingsAndCursors) { NamespaceIsolation(); }

// The dashboard's API (docs/dashboard.md): a namespace's admin sees its own topics only, under
// its client names, with their dead letters and series, and no node totals; every answer it
// gets is free of the other namespace's names and of internal names. The operator (admin of
// '*') sees both namespaces' topics as ns/topic.
TEST_F(AuthTest, TheDashboardShowsEachAdminItsNamespaceOnly) {
  const std::string mine = Topic("s-only");
  const std::string dead = Topic("s-dl");
  const std::string theirs = Topic("b-only");
  const std::string q = "/camellia/delayQueue/";
  auto shop_admin = As(kShopAdmin);
  auto bank_admin = As(kBankAdmin);
  auto root = As(kRoot);
  ExpectAppCode(As(kShopProducer)
                    ->Queue("sendMsg", {{"topic", mine}, {"msg", "x"}, {"delayMillis", "60000"}}),
                200);
  ExpectAppCode(
      As(kBankProducer)->Queue("sendMsg", {{"topic", theirs}, {"msg", "x"}, {"delayMillis", "0"}}),
      200);
  // A dead letter in shop: one delivery, not acked in time.
  ExpectAppCode(shop_admin->Post(q + "setTopicConfig", {{"topic", dead},
                                                        {"maxRetry", "0"},
                                                        {"ackTimeoutMillis", "1000"},
                                                        {"deadLetterTopic", dead + ".dlq"}}),
                200);
  ExpectAppCode(
      As(kShopProducer)->Queue("sendMsg", {{"topic", dead}, {"msg", "x"}, {"delayMillis", "0"}}),
      200);
  ApiResponse pulled = As(kShopConsumer)->Queue("pullMsg", {{"topic", dead}});
  ExpectAppCode(pulled, 200);
  ASSERT_EQ(pulled.at("delayMsgList").as_array().size(), 1u) << pulled.Describe();
  Advance(2'000);

  // Every answer of the dashboard's API a client of `token` gets on its pages.
  auto answers = [&](ApiClient& c, const std::string& own) {
    std::vector<ApiResponse> out;
    for (const Form& f : std::vector<Form>{{},
                                           {{"q", "TheDashboardShows"}},
                                           {{"deadLetters", "true"}, {"sort", "deadLetters"}},
                                           {{"sort", "waiting"}, {"limit", "100"}},
                                           {{"q", theirs}},
                                           {{"q", mine}}}) {
      out.push_back(c.Get("/dashboard/api/topics", f));
    }
    for (const std::string& t : {std::string(), own, own + ".dlq"}) {
      out.push_back(c.Get("/dashboard/api/history", t.empty() ? Form{} : Form{{"topic", t}}));
    }
    out.push_back(c.Get("/dashboard/api/history", {{"series", "false"}}));
    for (const ApiResponse& r : out) EXPECT_EQ(r.code(), 200) << r.Describe();
    return out;
  };
  auto names = [](const ApiResponse& r) {
    std::map<std::string, json::object> out;
    for (const auto& t : r.at("topics").as_array()) {
      out[Str(t.as_object().at("topic"))] = t.as_object();
    }
    return out;
  };
  for (const auto& [c, own, other, other_ns] :
       {std::tuple{shop_admin.get(), mine, theirs, "bank"},
        std::tuple{bank_admin.get(), theirs, mine, "shop"}}) {
    SCOPED_TRACE(std::string("the admin of the other namespace than ") + other_ns);
    for (const ApiResponse& r : answers(*c, own)) {
      EXPECT_EQ(r.http.body.find("\\u001f"), std::string::npos) << r.Describe();
      EXPECT_EQ(r.http.body.find(other), std::string::npos) << r.Describe();
      EXPECT_EQ(r.http.body.find(other_ns), std::string::npos) << r.Describe();
      EXPECT_EQ(r.http.body.find("\"namespace\":\"*\""), std::string::npos) << r.Describe();
    }
    ApiResponse page = c->Get("/dashboard/api/topics", {{"q", "TheDashboardShows"}});
    std::map<std::string, json::object> listed = names(page);
    EXPECT_TRUE(listed.contains(own)) << page.Describe();
    EXPECT_FALSE(listed.at(own).contains("namespace")) << page.Describe();
    ApiResponse hist = c->Get("/dashboard/api/history", {{"topic", own}});
    EXPECT_TRUE(hist.at("total").is_null()) << hist.Describe();
    EXPECT_EQ(Str(hist.at("topic")), own);
    // A name that spells another namespace's internal name is refused.
    ExpectRequestError(
        c->Get("/dashboard/api/history", {{"topic", std::string(other_ns) + "\x1f" + other}}), 400,
        "/dashboard/api/history");
  }
  // shop's dead-letter topic is shop's, with its dead letter (the dead-letter counts of the
  // overview come from the history, which is not sampled on the test clock: the unit test
  // handlers_dashboard_test.cc checks them).
  ApiResponse dl = shop_admin->Get("/dashboard/api/topics", {{"q", dead + ".dlq"}});
  std::map<std::string, json::object> dlq = names(dl);
  ASSERT_TRUE(dlq.contains(dead + ".dlq")) << dl.Describe();
  EXPECT_EQ(Int(dlq.at(dead + ".dlq").at("ready")), 1) << dl.Describe();
  EXPECT_EQ(Int(bank_admin->Get("/dashboard/api/topics", {{"q", dead}}).at("total")), 0);

  // The operator: both namespaces, as ns/topic, and the node's totals.
  for (const ApiResponse& r : answers(*root, "")) {
    EXPECT_EQ(r.http.body.find("\\u001f"), std::string::npos) << r.Describe();
  }
  ApiResponse all = root->Get("/dashboard/api/topics", {{"q", "TheDashboardShows"}});
  std::map<std::string, json::object> every = names(all);
  ASSERT_TRUE(every.contains("shop/" + mine)) << all.Describe();
  ASSERT_TRUE(every.contains("bank/" + theirs)) << all.Describe();
  EXPECT_EQ(Str(every.at("shop/" + mine).at("namespace")), "shop");
  EXPECT_EQ(Str(every.at("bank/" + theirs).at("namespace")), "bank");
  EXPECT_FALSE(every.contains(mine)) << all.Describe();
  ApiResponse node = root->Get("/dashboard/api/history");
  EXPECT_EQ(Str(node.at("namespace")), "*");
  EXPECT_TRUE(node.at("total").is_object()) << node.Describe();
  // Producers and consumers do not get the dashboard's API.
  for (const std::string& token : {kShopProducer, kShopConsumer, kBankProducer}) {
    ExpectRefused(As(token)->Get("/dashboard/api/topics"), 403, "/dashboard/api/topics");
  }
}

TEST_F(AuthTest, NoTokenTextInLogsMetricsErrorsOrPrintConfig) {
  const std::string topic = Topic();
  // Failures of every kind, then what an operator and a client can read.
  As("")->Get("/metrics");
  As(kWrong)->Get("/metrics");
  As(kShopConsumer)->Get("/metrics");
  std::vector<std::string> texts;
  texts.push_back(As(kRoot)->Get("/metrics").http.body);
  texts.push_back(As(kWrong)->Post("/t/" + kWrong + "/camellia/delayQueue/sendMsg", {}).http.body);
  texts.push_back(As(kShopConsumer)->Queue("sendMsg", {{"topic", topic}}).http.body);
  texts.push_back(server().Stderr());
  testutil::ExitResult pc =
      testutil::RunBinary({"serve", "--print-config", "--auth-tokens-file=" + TokensPath()});
  EXPECT_EQ(pc.exit_code, 0) << pc.err;
  texts.push_back(pc.out + pc.err);
  // A broken file at start: refused with the line, without the token.
  const std::string broken = TokensPath() + ".broken";
  std::ofstream(broken, std::ios::trunc) << kShopProducer << " shop\n";
  testutil::ExitResult start = testutil::RunBinary(
      {"serve", "--storage=memory", "--listen=127.0.0.1:0", "--auth-tokens-file=" + broken});
  EXPECT_EQ(start.exit_code, 2) << start.err;
  EXPECT_NE(
      start.err.find("line 1: expected '<token> <namespace> <role> [rate=<n>]', got 2 fields"),
      std::string::npos)
      << start.err;
  texts.push_back(start.out + start.err);
  std::filesystem::remove(broken);
  for (const std::string& text : texts) {
    for (const std::string& token :
         {kShopProducer, kShopConsumer, kShopAdmin, kBankProducer, kBankAdmin, kRoot, kWrong}) {
      EXPECT_EQ(text.find(token), std::string::npos) << "token found in: " << text.substr(0, 400);
    }
  }
  // Failures are counted by reason.
  std::string metrics = As(kRoot)->Get("/metrics").http.body;
  for (const char* reason : {"missing", "unknown", "forbidden"}) {
    EXPECT_NE(metrics.find(std::string("cq_auth_failures_total{reason=\"") + reason + "\"}"),
              std::string::npos)
        << reason;
  }
}

TEST_F(AuthTest, SighupReloadsTokensAndABrokenFileKeepsTheOldOnes) {
  const std::string q = "/camellia/delayQueue/";
  auto reloads = [&] {
    std::string m = As(kRoot)->Get("/metrics").http.body;
    size_t at = m.find("cq_auth_reloads_total{result=\"ok\"} ");
    size_t err = m.find("cq_auth_reloads_total{result=\"error\"} ");
    if (at == std::string::npos || err == std::string::npos) return std::pair<int, int>{-1, -1};
    return std::pair<int, int>{std::stoi(m.substr(at + 35)), std::stoi(m.substr(err + 38))};
  };
  // Waits until the server counted one more reload of `kind` (0 ok, 1 error).
  auto hup = [&](int kind) {
    std::pair<int, int> before = reloads();
    ::kill(server().pid(), SIGHUP);
    for (int i = 0; i < 500; ++i) {
      std::pair<int, int> now = reloads();
      if ((kind == 0 ? now.first : now.second) > (kind == 0 ? before.first : before.second)) {
        return true;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(10));  // a signal: nothing to wait on
    }
    return false;
  };
  // One node (the one signalled) when the storage has two.
  auto get_topic_list = [&](const std::string& token) {
    std::unique_ptr<ApiClient> c = As(token);
    c->OneNode();
    return c->Get(q + "getTopicInfoList").status;
  };
  EXPECT_EQ(get_topic_list(kLate), 401);
  // Add kLate, remove kBankProducer.
  std::string text = TokensText();
  text.replace(text.find(kBankProducer), kBankProducer.size() + 15, "");
  std::ofstream(TokensPath(), std::ios::trunc) << text << kLate << " shop producer\n";
  ASSERT_TRUE(hup(0));
  EXPECT_EQ(get_topic_list(kLate), 200);
  EXPECT_EQ(get_topic_list(kBankProducer), 401);
  // A broken file: the tokens in force stay.
  std::ofstream(TokensPath(), std::ios::trunc) << "# broken\n" << kBankProducer << " bank\n";
  ASSERT_TRUE(hup(1));
  EXPECT_EQ(get_topic_list(kLate), 200);
  EXPECT_EQ(get_topic_list(kBankProducer), 401);
  EXPECT_NE(server().Stderr().find("the previous tokens stay in force"), std::string::npos);
  // Back to the test's tokens.
  std::ofstream(TokensPath(), std::ios::trunc) << TokensText();
  ASSERT_TRUE(hup(0));
  EXPECT_EQ(get_topic_list(kBankProducer), 200);
  EXPECT_EQ(get_topic_list(kLate), 401);
}

}  // namespace
}  // namespace chronoq::it

namespace chronoq::it {
namespace {

// The bad-input table's auth rows (bad_input_table.h describes the table): requests that would
// change the queue were they admitted, each with a malformed or insufficient credential; each
// must get its exact refusal and change nothing.
struct AuthRow {
  std::string what;
  std::string target;         // path (maybe with /t/<token>)
  std::string authorization;  // the raw header line value; empty: no header
  int status;
  std::string word;  // the answer's msg mentions it
};

TEST_F(AuthTest, BadInputTableAuthRows) {
  const std::string topic = Topic();
  auto root = As(kRoot);
  auto shop = As(kShopProducer);
  ExpectAppCode(
      shop->Queue("sendMsg",
                  {{"topic", topic}, {"msgId", "r1"}, {"msg", "x"}, {"delayMillis", "0"}}),
      200);
  auto state = [&] {
    auto admin = As(kShopAdmin);
    return admin->Get("/camellia/delayQueue/getTopicInfoList").http.body + "|" +
           admin->Queue("getMsg", {{"topic", topic}, {"msgId", "r1"}}).http.body;
  };
  const std::string before = state();
  const std::string del = "/camellia/delayQueue/deleteMsg";
  const std::string body = client::FormEncode({{"topic", topic}, {"msgId", "r1"}});
  const std::string need = "authentication required";
  const std::vector<AuthRow> rows = {
      {"no Authorization header", del, "", 401, need},
      {"empty Authorization header", del, " ", 401, "not 'Bearer <token>'"},
      {"Basic scheme", del, "Basic dXNlcjpwYXNz", 401, "not 'Bearer <token>'"},
      {"Bearer without a token", del, "Bearer", 401, "not 'Bearer <token>'"},
      {"Bearer with two words", del, "Bearer " + kShopProducer + " x", 401, "not 'Bearer <token>'"},
      {"unknown token", del, "Bearer " + kWrong, 401, "not valid"},
      {"token with a character more", del, "Bearer " + kShopProducer + "x", 401, "not valid"},
      {"token with a character less", del, "Bearer " + kShopProducer.substr(1), 401, "not valid"},
      {"token of another case", del, "Bearer SHOPP-0123456789ABCDEF", 401, "not valid"},
      {"consumer deletes", del, "Bearer " + kShopConsumer, 403, "may not delete messages"},
      {"another namespace's admin purges", "/camellia/delayQueue/purgeTopic",
       "Bearer " + kBankAdmin, 200, ""},  // admitted, but purges bank's topic: nothing of shop's
      {"a namespace's admin sets the node offline", "/camellia/health/offline",
       "Bearer " + kShopAdmin, 403, "admin of namespace '*'"},
      {"a producer reads the dashboard's API", "/dashboard/api/topics", "Bearer " + kShopProducer,
       403, "a producer token of namespace 'shop' may not use the dashboard: that needs admin"},
      {"prefix with an unknown token", "/t/" + kWrong + del, "", 401, "not valid"},
      {"prefix with an empty token", "/t/" + del, "", 401, "not valid"},
      {"prefix with a consumer token", "/t/" + kShopConsumer + del, "", 403, "may not"},
      {"header wins over the prefix", "/t/" + kShopProducer + del, "Bearer " + kShopConsumer, 403,
       "may not"},
  };
  for (const AuthRow& row : rows) {
    SCOPED_TRACE(row.what);
    testutil::RawConnection raw;
    ASSERT_TRUE(raw.Connect(server().endpoint()).ok());
    std::string req = "POST " + row.target + " HTTP/1.1\r\nHost: x\r\nConnection: close\r\n";
    if (!row.authorization.empty()) req += "Authorization: " + row.authorization + "\r\n";
    req += "Content-Type: application/x-www-form-urlencoded\r\nContent-Length: " +
           std::to_string(body.size()) + "\r\n\r\n" + body;
    ASSERT_TRUE(raw.Send(req).ok());
    raw.WaitClosed(std::chrono::seconds(5));
    const std::string& answer = raw.received();
    EXPECT_NE(answer.find("HTTP/1.1 " + std::to_string(row.status)), std::string::npos) << answer;
    if (!row.word.empty()) {
      EXPECT_NE(answer.find(row.word), std::string::npos) << answer;
    }
    for (const std::string& token :
         {kShopProducer, kShopConsumer, kBankAdmin, kShopAdmin, kWrong}) {
      EXPECT_EQ(answer.find(token), std::string::npos) << answer;
    }
    EXPECT_EQ(state(), before) << "the row changed the queue";
  }
  EXPECT_EQ(root->Get("/camellia/health/status").status, 200);
}

TEST_F(AuthTest, ARateLimitedTokenGets429) {
  const std::string topic = Topic();
  auto limited = As(kLimited);
  ApiResponse r = limited->Queue("getMsg", {{"topic", topic}, {"msgId", "x"}});
  ExpectAppCode(r, 404);  // the bucket's one request
  r = limited->Queue("getMsg", {{"topic", topic}, {"msgId", "x"}});
  EXPECT_EQ(r.status, 429) << r.Describe();
  EXPECT_EQ(r.header("Retry-After"), "1");
  EXPECT_EQ(Str(r.at("error")), "Too Many Requests");
  EXPECT_EQ(r.msg(), "the token's rate limit (0.001 requests per second) is reached; retry later");
  // Other tokens are not limited by it.
  ExpectAppCode(As(kShopProducer)->Queue("getMsg", {{"topic", topic}, {"msgId", "x"}}), 404);
}

}  // namespace
}  // namespace chronoq::it
