// The auth integration tests' tokens and fixture (auth_test.cc on every storage variant,
// auth_cluster_test.cc on a Redis Cluster). Header-only.
#pragma once

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "tests/integration/it_util.h"

namespace chronoq::it {

// Tokens (16+ characters of [A-Za-z0-9._~-]).
inline const std::string kShopProducer = "shopP-0123456789abcdef";
inline const std::string kShopConsumer = "shopC-0123456789abcdef";
inline const std::string kShopAdmin = "shopA-0123456789abcdef";
inline const std::string kBankProducer = "bankP-0123456789abcdef";
inline const std::string kBankAdmin = "bankA-0123456789abcdef";
inline const std::string kRoot = "rootA-0123456789abcdef";  // admin of the unnamed namespace '*'
inline const std::string kLate = "lateP-0123456789abcdef";  // added by a reload
inline const std::string kWrong = "wrong-0123456789abcdef";
inline const std::string kLimited = "limit-0123456789abcdef";  // one request per 1,000 s

inline std::string TokensText() {
  return "# tokens of the auth integration test\n" + kShopProducer + " shop producer\n" +
         kShopConsumer + " shop consumer\n" + kShopAdmin + " shop admin\n" + kBankProducer +
         " bank producer\n" + kBankAdmin + " bank admin\n" + kRoot + " * admin\n" + kLimited +
         " shop producer rate=0.001\n";
}

// The tokens file of this process's servers (written before the first starts, removed when the
// process exits).
inline const std::string& TokensPath() {
  struct File {
    std::string path = (std::filesystem::temp_directory_path() /
                        ("chronoq-it-tokens-" + std::to_string(::getpid())))
                           .string();
    File() { std::ofstream(path, std::ios::trunc) << TokensText(); }
    ~File() {
      std::error_code ec;
      std::filesystem::remove(path, ec);
    }
  };
  static const File file;
  return file.path;
}

class AuthTest : public ServerTest {
 protected:
  std::vector<std::string> Flags() const override { return {"--auth-tokens-file=" + TokensPath()}; }
  void SetUp() override {
    ServerTest::SetUp();
    api().set_token(kRoot);  // the fixture's clock moves and checks are the operator's
  }
  // A client with `token` (empty: none).
  std::unique_ptr<ApiClient> As(const std::string& token) {
    std::unique_ptr<ApiClient> c = NewClient();
    c->set_token(token);
    return c;
  }

  // The namespace isolation checks (on the storage of the fixture's server).
  void NamespaceIsolation() {
    const std::string topic = Topic();
    auto shop = As(kShopProducer);
    auto bank = As(kBankProducer);
    auto shop_admin = As(kShopAdmin);
    auto bank_admin = As(kBankAdmin);
    auto root = As(kRoot);
    const std::string q = "/camellia/delayQueue/";
    // The same topic and msgId in two namespaces are two messages.
    for (int i = 0; i < 3; ++i) {
      ExpectAppCode(shop->Queue("sendMsg", {{"topic", topic},
                                            {"msgId", "m" + std::to_string(i)},
                                            {"msg", "shop-secret"},
                                            {"delayMillis", "0"}}),
                    200);
    }
    ExpectAppCode(
        bank->Queue("sendMsg",
                    {{"topic", topic}, {"msgId", "m0"}, {"msg", "bank"}, {"delayMillis", "60000"}}),
        200);
    ApiResponse r = bank->Queue("getMsg", {{"topic", topic}, {"msgId", "m0"}});
    ExpectAppCode(r, 200);
    EXPECT_EQ(Str(r.at("delayMsg").as_object().at("msg")), "bank");
    EXPECT_EQ(Str(r.at("delayMsg").as_object().at("topic")), topic);
    r = bank->Queue("getMsg", {{"topic", topic}, {"msgId", "m1"}});
    ExpectAppCode(r, 404);
    // The error sentence names the topic as the client knows it.
    EXPECT_EQ(r.msg().find('\x1f'), std::string::npos) << r.Describe();
    EXPECT_EQ(r.msg().find("bank"), std::string::npos) << r.Describe();

    // Listings: each namespace sees its own topic only; '*' sees neither.
    auto listed = [&](ApiClient& c) {
      ApiResponse l = c.Get(q + "getTopicInfoList");
      EXPECT_EQ(l.code(), 200) << l.Describe();
      std::map<std::string, int64_t> out;
      for (const auto& t : l.at("data").as_array()) {
        out[Str(t.as_object().at("topic"))] = Int(t.as_object().at("readyQueueSize"));
      }
      return out;
    };
    std::map<std::string, int64_t> s = listed(*shop_admin);
    ASSERT_TRUE(s.count(topic)) << "shop's listing lacks its topic";
    EXPECT_EQ(s[topic], 3);
    for (const auto& [name, n] : s) EXPECT_EQ(name.find('\x1f'), std::string::npos) << name;
    std::map<std::string, int64_t> b = listed(*bank_admin);
    ASSERT_TRUE(b.count(topic));
    EXPECT_EQ(b[topic], 0);  // bank's message waits
    EXPECT_FALSE(listed(*root).count(topic));

    // A name that spells another namespace's internal name is refused, whoever asks.
    for (ApiClient* c : {bank_admin.get(), root.get()}) {
      r = c->Get(q + "listMsg", {{"topic", "shop\x1f" + topic}});
      ExpectAppCode(r, 400, "control character");
    }

    // listMsg: shop's cursor handed to bank lists nothing of shop's.
    r = shop_admin->Get(q + "listMsg", {{"topic", topic}, {"limit", "1"}});
    ExpectAppCode(r, 200);
    const std::string cursor = Str(r.at("nextCursor"));
    ASSERT_FALSE(cursor.empty()) << r.Describe();
    r = bank_admin->Get(q + "listMsg", {{"topic", topic}, {"limit", "10"}, {"cursor", cursor}});
    EXPECT_EQ(r.http.body.find("shop-secret"), std::string::npos) << r.Describe();
    // A crafted cursor (any text) cannot reach shop's messages either.
    for (const std::string& crafted : {std::string("2:0:0:0"), std::string("1:0:-inf:0"),
                                       cursor + "0", std::string("cq1.0.0")}) {
      r = bank_admin->Get(q + "listMsg", {{"topic", topic}, {"cursor", crafted}});
      EXPECT_EQ(r.http.body.find("shop-secret"), std::string::npos) << r.Describe();
    }
    // bank pulls bank's only (nothing consumable there yet).
    auto bank_consumer_pull = bank_admin->Queue("pullMsg", {{"topic", topic}, {"batch", "10"}});
    ExpectAppCode(bank_consumer_pull, 200);
    EXPECT_TRUE(bank_consumer_pull.at("delayMsgList").as_array().empty())
        << bank_consumer_pull.Describe();
    // shop's consumer gets shop's three, named as shop knows them.
    r = As(kShopConsumer)->Queue("pullMsg", {{"topic", topic}, {"batch", "10"}});
    ExpectAppCode(r, 200);
    ASSERT_EQ(r.at("delayMsgList").as_array().size(), 3u) << r.Describe();
    for (const auto& m : r.at("delayMsgList").as_array()) {
      EXPECT_EQ(Str(m.as_object().at("topic")), topic);
    }

    // Topic configuration: a dead-letter topic is in the namespace and named as the client does.
    r = shop_admin->Post(q + "setTopicConfig", {{"topic", topic}, {"deadLetterTopic", "dlq"}});
    ExpectAppCode(r, 200);
    r = shop_admin->Get(q + "getTopicConfig", {{"topic", topic}});
    ExpectAppCode(r, 200);
    EXPECT_NE(r.http.body.find("\"dlq\""), std::string::npos) << r.Describe();
    EXPECT_EQ(r.http.body.find('\x1f'), std::string::npos) << r.Describe();
    r = bank_admin->Get(q + "getTopicConfig", {{"topic", topic}});
    EXPECT_EQ(r.http.body.find("\"dlq\""), std::string::npos) << r.Describe();
    // Purging bank's topic leaves shop's messages alone.
    r = bank_admin->Post(q + "purgeTopic", {{"topic", topic}});
    ExpectAppCode(r, 200);
    r = shop_admin->Get(q + "getTopicInfo", {{"topic", topic}});
    EXPECT_EQ(Int(r.at("data").as_object().at("ackQueueSize")), 3) << r.Describe();

    // The operator's metrics show each namespace's topic apart.
    r = root->Get("/metrics");
    EXPECT_NE(r.http.body.find("topic=\"shop/" + topic + "\""), std::string::npos);
    EXPECT_NE(r.http.body.find("topic=\"bank/" + topic + "\""), std::string::npos);
  }
};

}  // namespace chronoq::it
