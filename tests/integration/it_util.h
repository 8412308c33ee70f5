// Shared pieces of the integration tests: a fixture that runs the real server (one per flag set
// and test process, started with --test-clock), unique topic names, and checks of the JSON shapes
// of API.md. Header-only; each test file includes it.
#pragma once

#include <gtest/gtest.h>

#include <boost/json.hpp>
#include <csignal>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "tests/testutil/server_harness.h"

namespace chronoq::it {

namespace json = boost::json;
using testutil::ApiClient;
using testutil::ApiResponse;
using testutil::Form;
using testutil::ServerProcess;

inline constexpr int64_t kMinute = 60'000;
inline constexpr int64_t kHour = 60 * kMinute;
inline constexpr int64_t kDay = 24 * kHour;

// The nine waitingQueueInfo buckets, in camellia's order.
inline const std::vector<std::string>& BucketNames() {
  static const std::vector<std::string> names = {
      "sizeOf0To1min",      "sizeOf1minTo10min",  "sizeOf10minTo30min",
      "sizeOf30minTo1hour", "sizeOf1hourTo6hour", "sizeOf6hourTo1day",
      "sizeOf1dayTo7day",   "sizeOf7dayTo30day",  "sizeOf30dayToInfinite"};
  return names;
}

// The keys of a JSON object, in order.
inline std::vector<std::string> Keys(const json::value& v) {
  std::vector<std::string> out;
  if (!v.is_object()) return out;
  for (const auto& kv : v.as_object()) out.emplace_back(kv.key());
  return out;
}

inline std::string Str(const json::value& v) {
  return v.is_string() ? std::string(v.as_string()) : std::string("<not a string>");
}
inline int64_t Int(const json::value& v) { return v.is_int64() ? v.as_int64() : INT64_MIN; }

// A message object has exactly the nine fields of API.md section 3, with their JSON types.
inline void ExpectMessageShape(const json::value& m) {
  ASSERT_TRUE(m.is_object()) << json::serialize(m);
  EXPECT_EQ(Keys(m),
            (std::vector<std::string>{"topic", "msgId", "msg", "produceTime", "triggerTime",
                                      "expireTime", "maxRetry", "retry", "status"}))
      << json::serialize(m);
  const json::object& o = m.as_object();
  for (const char* k : {"topic", "msgId", "msg"}) {
    EXPECT_TRUE(o.contains(k) && o.at(k).is_string()) << k << " in " << json::serialize(m);
  }
  for (const char* k :
       {"produceTime", "triggerTime", "expireTime", "maxRetry", "retry", "status"}) {
    EXPECT_TRUE(o.contains(k) && o.at(k).is_int64()) << k << " in " << json::serialize(m);
  }
}

// Every JSON answer says so.
inline void ExpectJsonAnswer(const ApiResponse& r) {
  EXPECT_EQ(r.header("Content-Type"), "application/json") << r.Describe();
  EXPECT_FALSE(r.http.body.empty()) << "empty body, HTTP " << r.status;
  EXPECT_TRUE(r.json_ok) << r.Describe();
}

// A request error (API.md section 2, layer 1): HTTP `status` and exactly the five fields, `msg`
// mentioning `mentions` when given.
inline void ExpectRequestError(const ApiResponse& r, int status, std::string_view path,
                               std::string_view mentions = {}) {
  EXPECT_EQ(r.status, status) << r.Describe();
  ExpectJsonAnswer(r);
  EXPECT_EQ(Keys(r.json), (std::vector<std::string>{"code", "msg", "status", "error", "path"}))
      << r.Describe();
  EXPECT_EQ(r.code(), status) << r.Describe();
  EXPECT_EQ(Int(r.at("status")), status) << r.Describe();
  EXPECT_FALSE(r.msg().empty()) << r.Describe();
  EXPECT_EQ(Str(r.at("path")), path) << r.Describe();
  const char* reason = status == 400   ? "Bad Request"
                       : status == 401 ? "Unauthorized"
                       : status == 403 ? "Forbidden"
                       : status == 404 ? "Not Found"
                       : status == 405 ? "Method Not Allowed"
                       : status == 413 ? "Payload Too Large"
                       : status == 431 ? "Request Header Fields Too Large"
                                       : "?";
  EXPECT_EQ(Str(r.at("error")), reason) << r.Describe();
  if (!mentions.empty()) {
    EXPECT_NE(r.msg().find(mentions), std::string::npos)
        << "msg should mention '" << mentions << "': " << r.Describe();
  }
}

// An application result (API.md section 2, layer 2): HTTP 200 with `code`.
inline void ExpectAppCode(const ApiResponse& r, int code, std::string_view mentions = {}) {
  EXPECT_EQ(r.status, 200) << r.Describe();
  ExpectJsonAnswer(r);
  EXPECT_EQ(r.code(), code) << r.Describe();
  if (code == 200) {
    EXPECT_EQ(r.msg(), "success") << r.Describe();
  } else {
    EXPECT_FALSE(r.msg().empty()) << r.Describe();
    EXPECT_NE(r.msg(), "success") << r.Describe();
  }
  if (!mentions.empty()) {
    EXPECT_NE(r.msg().find(mentions), std::string::npos)
        << "msg should mention '" << mentions << "': " << r.Describe();
  }
}

// Servers shared by the tests of a process, one per flag set; killed at exit.
inline ServerProcess* SharedServer(const std::vector<std::string>& flags, std::string* error) {
  static std::map<std::vector<std::string>, std::unique_ptr<ServerProcess>> servers;
  auto it = servers.find(flags);
  if (it != servers.end() && it->second->running()) return it->second.get();
  auto s = std::make_unique<ServerProcess>();
  Status st = s->Start(flags);
  if (!st.ok()) {
    *error = st.message();
    return nullptr;
  }
  ServerProcess* p = s.get();
  servers[flags] = std::move(s);
  return p;
}

// Fixture: a running server (flags from Flags(), always with --test-clock) and a client.
class ServerTest : public ::testing::Test {
 protected:
  virtual std::vector<std::string> Flags() const { return {}; }

  void SetUp() override {
    std::vector<std::string> flags = {"--test-clock", "--log-level=warn"};
    for (const auto& f : Flags()) flags.push_back(f);
    std::string error;
    server_ = SharedServer(flags, &error);
    ASSERT_NE(server_, nullptr) << error;
    flags_ = flags;
    api_ = std::make_unique<ApiClient>(server_->endpoint());
    static int runs = 0;
    run_ = ++runs;  // distinguishes repeated runs (--gtest_repeat) on the same shared server
  }

  ServerProcess& server() { return *server_; }
  // Stops the server (SIGTERM; it must exit 0) and starts it again with the same flags (so on
  // the same store); api() then talks to the new process.
  Status RestartServer() {
    int rc = server_->Stop(SIGTERM);
    if (rc != 0) return Internal("the server exited with " + std::to_string(rc) + " on SIGTERM");
    Status s = server_->Start(flags_);
    api_ = std::make_unique<ApiClient>(server_->endpoint());
    return s;
  }
  ApiClient& api() { return *api_; }
  std::unique_ptr<ApiClient> NewClient() {
    return std::make_unique<ApiClient>(server_->endpoint());
  }

  // A topic name unique to this test run (and to `tag`).
  std::string Topic(std::string_view tag = "t") {
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    return std::string("it.") + info->test_suite_name() + "." + info->name() + "." +
           std::to_string(run_) + "." + std::string(tag);
  }

  // sendMsg; `extra` adds or overrides parameters (msgId, ttlMillis, maxRetry, ...).
  ApiResponse Send(const std::string& topic, const std::string& msg, int64_t delay,
                   const Form& extra = {}) {
    Form f = {{"topic", topic}, {"msg", msg}, {"delayMillis", std::to_string(delay)}};
    for (const auto& e : extra) f.push_back(e);
    return api().Queue("sendMsg", f);
  }
  // sendMsg that must succeed; answers delayMsg.
  json::object SendOk(const std::string& topic, const std::string& msg, int64_t delay,
                      const Form& extra = {}) {
    ApiResponse r = Send(topic, msg, delay, extra);
    EXPECT_EQ(r.code(), 200) << r.Describe();
    const json::value& m = r.at("delayMsg");
    return m.is_object() ? m.as_object() : json::object();
  }
  ApiResponse Pull(const std::string& topic, int batch = 0, int64_t ack_timeout = 0) {
    Form f = {{"topic", topic}};
    if (batch != 0) f.emplace_back("batch", std::to_string(batch));
    if (ack_timeout != 0) f.emplace_back("ackTimeoutMillis", std::to_string(ack_timeout));
    return api().Queue("pullMsg", f);
  }
  // pullMsg that must succeed; answers delayMsgList.
  std::vector<json::object> PullOk(const std::string& topic, int batch = 0,
                                   int64_t ack_timeout = 0) {
    ApiResponse r = Pull(topic, batch, ack_timeout);
    EXPECT_EQ(r.code(), 200) << r.Describe();
    std::vector<json::object> out;
    const json::value& l = r.at("delayMsgList");
    EXPECT_TRUE(l.is_array()) << r.Describe();
    if (l.is_array()) {
      for (const auto& m : l.as_array()) out.push_back(m.as_object());
    }
    return out;
  }
  ApiResponse GetMsg(const std::string& topic, const std::string& id) {
    return api().Queue("getMsg", {{"topic", topic}, {"msgId", id}});
  }
  // The message's status as getMsg reads it; 0 when getMsg answers code 404.
  int64_t StatusOf(const std::string& topic, const std::string& id) {
    ApiResponse r = GetMsg(topic, id);
    if (r.code() == 404) return 0;
    EXPECT_EQ(r.code(), 200) << r.Describe();
    return Int(r.at("delayMsg").is_object() ? r.at("delayMsg").as_object().at("status")
                                            : json::value());
  }
  json::object GetOk(const std::string& topic, const std::string& id) {
    ApiResponse r = GetMsg(topic, id);
    EXPECT_EQ(r.code(), 200) << r.Describe();
    const json::value& m = r.at("delayMsg");
    return m.is_object() ? m.as_object() : json::object();
  }
  ApiResponse Ack(const std::string& topic, const std::string& id, bool ack = true) {
    return api().Queue("ackMsg",
                       {{"topic", topic}, {"msgId", id}, {"ack", ack ? "true" : "false"}});
  }
  ApiResponse Delete(const std::string& topic, const std::string& id, bool release = false) {
    return api().Queue("deleteMsg",
                       {{"topic", topic}, {"msgId", id}, {"release", release ? "true" : "false"}});
  }
  // getTopicInfo data (an empty object on failure).
  json::object TopicInfo(const std::string& topic) {
    ApiResponse r = api().Monitor("getTopicInfo", {{"topic", topic}});
    EXPECT_EQ(r.code(), 200) << r.Describe();
    const json::value& d = r.at("data");
    return d.is_object() ? d.as_object() : json::object();
  }
  // Topic names listed by getTopicInfoList.
  std::vector<std::string> ListedTopics() {
    ApiResponse r = api().Monitor("getTopicInfoList");
    EXPECT_EQ(r.code(), 200) << r.Describe();
    std::vector<std::string> out;
    const json::value& d = r.at("data");
    if (d.is_array()) {
      for (const auto& t : d.as_array()) out.push_back(Str(t.as_object().at("topic")));
    }
    return out;
  }
  bool Listed(const std::string& topic) {
    std::vector<std::string> l = ListedTopics();
    return std::find(l.begin(), l.end(), topic) != l.end();
  }
  int64_t Now() { return api().Now(); }
  int64_t Advance(int64_t ms) { return api().AdvanceClock(ms); }

 private:
  ServerProcess* server_ = nullptr;
  std::vector<std::string> flags_;
  std::unique_ptr<ApiClient> api_;
  int run_ = 0;
};

inline std::string MsgId(const json::object& m) {
  return m.contains("msgId") ? Str(m.at("msgId")) : std::string();
}

}  // namespace chronoq::it
