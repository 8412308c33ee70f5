#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>
#include <string>

#include "auth/access.h"
#include "auth/authenticator.h"
#include "auth/tokens.h"

namespace chronoq::auth {
namespace {

constexpr std::string_view kProducer = "prod-0123456789abcdef";
constexpr std::string_view kConsumer = "cons-0123456789abcdef";
constexpr std::string_view kAdmin = "admn-0123456789abcdef";
constexpr std::string_view kRoot = "root-0123456789abcdef";

std::string File() {
  return fmt::format(
      "# tokens\n{} shop producer\n\n  {}\tshop consumer   # the workers\n{} shop admin\n{} * "
      "admin\n",
      kProducer, kConsumer, kAdmin, kRoot);
}

TEST(TokenTableTest, ParsesLinesCommentsAndBlankLines) {
  Result<TokenTable> t = TokenTable::Parse(File(), "f");
  ASSERT_TRUE(t.has_value()) << t.error().message();
  EXPECT_EQ(t->size(), 4u);
  std::optional<Caller> c = t->Find(kConsumer);
  ASSERT_TRUE(c);
  EXPECT_FALSE(c->anonymous);
  EXPECT_EQ(c->ns, "shop");
  EXPECT_EQ(c->role, Role::kConsumer);
  std::optional<Caller> root = t->Find(kRoot);
  ASSERT_TRUE(root);
  EXPECT_EQ(root->ns, "");  // '*': the unnamed namespace
  EXPECT_EQ(root->role, Role::kAdmin);
  EXPECT_FALSE(t->Find("prod-0123456789abcdeX"));
  EXPECT_FALSE(t->Find(""));
  EXPECT_FALSE(t->Find(std::string(kProducer) + "x"));
}

struct BadFile {
  std::string text;
  std::string error;
};

TEST(TokenTableTest, RefusesABadLineWithItsNumberAndNeverTheToken) {
  const std::string tok = "secret-0123456789abcdef";
  const BadFile cases[] = {
      {"# only a comment\n", "f: no token (a line is '<token> <namespace> <role>')"},
      {"", "f: no token (a line is '<token> <namespace> <role>')"},
      {"\n" + tok + " shop\n",
       "f line 2: expected '<token> <namespace> <role> [rate=<n>]', got 2 fields"},
      {tok + "\n", "f line 1: expected '<token> <namespace> <role> [rate=<n>]', got 1 field"},
      {tok + " shop admin extra\n",
       "f line 1: the 4th field must be rate=<requests per second, above 0>, got 'extra'"},
      {tok + " shop admin rate=0\n",
       "f line 1: the 4th field must be rate=<requests per second, above 0>, got 'rate=0'"},
      {tok + " shop admin rate=1 x\n",
       "f line 1: expected '<token> <namespace> <role> [rate=<n>]', got 5 fields"},
      {"short shop admin\n",
       "f line 1: the token is 5 characters long; a token has 16 to 256 (make one with 'openssl "
       "rand -hex 32')"},
      {"secret/0123456789abcdef shop admin\n",
       "f line 1: the token has a character other than A-Z a-z 0-9 '-' '.' '_' '~' at offset 6"},
      {tok + " sh/op admin\n",
       "f line 1: namespace 'sh/op' is not valid: '*' or 1 to 64 characters among A-Z a-z 0-9 "
       "'_' '.' '-'"},
      {tok + " shop root\n", "f line 1: role 'root' is not one of producer, consumer, admin"},
      {tok + " shop admin\n# x\n" + tok + " other producer\n",
       "f line 3: the same token as line 1"},
  };
  for (const BadFile& c : cases) {
    Result<TokenTable> t = TokenTable::Parse(c.text, "f");
    ASSERT_FALSE(t.has_value()) << c.text;
    EXPECT_EQ(t.error().code(), Errc::kInvalidArgument);
    EXPECT_EQ(t.error().message(), c.error);
    EXPECT_EQ(t.error().message().find("0123456789abcdef"), std::string::npos);
  }
}

TEST(AccessTest, RuleTable) {
  auto caller = [](std::string ns, Role r) { return Caller{false, std::move(ns), r}; };
  const Caller producer = caller("shop", Role::kProducer);
  const Caller consumer = caller("shop", Role::kConsumer);
  const Caller admin = caller("shop", Role::kAdmin);
  const Caller root = caller("", Role::kAdmin);
  using O = Operation;
  for (O op : {O::kSend, O::kSendBatch, O::kGet, O::kUpdate, O::kCount, O::kDelete}) {
    EXPECT_TRUE(Allows(producer, op)) << OperationName(op);
  }
  for (O op : {O::kPull, O::kLongPoll, O::kAck, O::kAckBatch, O::kTouch, O::kList, O::kPurge,
               O::kRedrive, O::kReadTopicConfig, O::kWriteTopicConfig, O::kMetrics}) {
    EXPECT_FALSE(Allows(producer, op)) << OperationName(op);
  }
  for (O op : {O::kPull, O::kLongPoll, O::kAck, O::kAckBatch, O::kGet, O::kTouch}) {
    EXPECT_TRUE(Allows(consumer, op)) << OperationName(op);
  }
  for (O op : {O::kSend, O::kSendBatch, O::kUpdate, O::kCount, O::kDelete, O::kList}) {
    EXPECT_FALSE(Allows(consumer, op)) << OperationName(op);
  }
  for (size_t i = 0; i < kOperationCount; ++i) {
    const O op = static_cast<O>(i);
    EXPECT_TRUE(Allows(root, op)) << OperationName(op);
    EXPECT_TRUE(Allows(Caller{}, op)) << OperationName(op);  // anonymous: no tokens
    // A namespace's admin may do everything of its namespace, nothing server-wide.
    EXPECT_EQ(Allows(admin, op), !ServerWide(op)) << OperationName(op);
  }
  EXPECT_TRUE(Allows(caller("", Role::kConsumer), O::kHealthCheck));
  EXPECT_FALSE(Allows(caller("", Role::kConsumer), O::kMetrics));
}

TEST(ParseAuthorizationTest, BearerOnly) {
  EXPECT_FALSE(ParseAuthorization(std::nullopt).token);
  EXPECT_FALSE(ParseAuthorization(std::nullopt).malformed);
  Credential c = ParseAuthorization("Bearer abc");
  ASSERT_TRUE(c.token);
  EXPECT_EQ(*c.token, "abc");
  EXPECT_EQ(*ParseAuthorization("  bearer   abc ").token, "abc");
  for (std::string_view bad : {"", "Bearer", "Bearer ", "Basic abc", "Bearerabc", "Bearer a b"}) {
    EXPECT_TRUE(ParseAuthorization(bad).malformed) << bad;
    EXPECT_FALSE(ParseAuthorization(bad).token) << bad;
  }
}

class AuthenticatorTest : public ::testing::Test {
 protected:
  void Write(const std::string& text) { std::ofstream(path_, std::ios::trunc) << text; }
  void TearDown() override { std::remove(path_.c_str()); }
  Decision Check(std::optional<std::string_view> token, Operation op) {
    return auth_.Check(Credential{token, false}, op);
  }
  std::string path_ = ::testing::TempDir() + "/tokens_" +
                      ::testing::UnitTest::GetInstance()->current_test_info()->name();
  Authenticator auth_;
};

TEST_F(AuthenticatorTest, DisabledAllowsEverythingAnonymously) {
  EXPECT_FALSE(auth_.enabled());
  Decision d = Check(std::nullopt, Operation::kPurge);
  EXPECT_EQ(d.verdict, Verdict::kAllowed);
  EXPECT_TRUE(d.caller.anonymous);
}

TEST_F(AuthenticatorTest, DecidesAndCountsFailures) {
  Write(File());
  ASSERT_TRUE(auth_.Load(path_).ok());
  EXPECT_TRUE(auth_.enabled());
  EXPECT_EQ(auth_.token_count(), 4u);

  Decision d = Check(kProducer, Operation::kSend);
  EXPECT_EQ(d.verdict, Verdict::kAllowed);
  EXPECT_EQ(d.caller.ns, "shop");

  d = Check(std::nullopt, Operation::kSend);
  EXPECT_EQ(d.verdict, Verdict::kUnauthenticated);
  EXPECT_EQ(d.message, "authentication required: give a token as 'Authorization: Bearer <token>'");
  d = Check("nope-0123456789abcdef", Operation::kSend);
  EXPECT_EQ(d.verdict, Verdict::kUnauthenticated);
  EXPECT_EQ(d.message, "the token is not valid");
  d = auth_.Check(Credential{std::nullopt, true}, Operation::kSend);
  EXPECT_EQ(d.verdict, Verdict::kUnauthenticated);
  EXPECT_EQ(d.message, "the authorization is not 'Bearer <token>'");
  d = Check(kConsumer, Operation::kSend);
  EXPECT_EQ(d.verdict, Verdict::kForbidden);
  EXPECT_EQ(d.message,
            "a consumer token of namespace 'shop' may not send messages: that needs producer or "
            "admin");
  d = Check(kAdmin, Operation::kMetrics);
  EXPECT_EQ(d.verdict, Verdict::kForbidden);
  EXPECT_EQ(d.message,
            "an admin token of namespace 'shop' may not read the metrics: that needs admin of "
            "namespace '*'");
  EXPECT_EQ(Check(std::nullopt, Operation::kHealthCheck).verdict, Verdict::kAllowed);

  EXPECT_EQ(auth_.failures(Failure::kMissing), 1u);
  EXPECT_EQ(auth_.failures(Failure::kUnknown), 1u);
  EXPECT_EQ(auth_.failures(Failure::kMalformed), 1u);
  EXPECT_EQ(auth_.failures(Failure::kForbidden), 2u);
  metrics::TextWriter w;
  auth_.RenderMetrics(w);
  EXPECT_NE(w.text().find("cq_auth_failures_total{reason=\"forbidden\"} 2"), std::string::npos);
  EXPECT_NE(w.text().find("cq_auth_tokens 4"), std::string::npos);
}

TEST_F(AuthenticatorTest, ReloadTakesNewTokensAndKeepsOldOnesOnError) {
  Write(fmt::format("{} shop producer\n", kProducer));
  ASSERT_TRUE(auth_.Load(path_).ok());
  EXPECT_EQ(Check(kConsumer, Operation::kPull).verdict, Verdict::kUnauthenticated);

  Write(fmt::format("{} shop consumer\n", kConsumer));  // producer removed, consumer added
  ASSERT_TRUE(auth_.Reload().ok());
  EXPECT_EQ(Check(kConsumer, Operation::kPull).verdict, Verdict::kAllowed);
  EXPECT_EQ(Check(kProducer, Operation::kSend).verdict, Verdict::kUnauthenticated);

  Write(fmt::format("{} shop consumer\n{} shop\n", kProducer, kConsumer));  // broken line 2
  Status s = auth_.Reload();
  EXPECT_EQ(s.code(), Errc::kInvalidArgument);
  EXPECT_NE(s.message().find("line 2: expected"), std::string::npos) << s.message();
  EXPECT_EQ(s.message().find("0123456789abcdef"), std::string::npos);
  // The old tokens stay.
  EXPECT_EQ(Check(kConsumer, Operation::kPull).verdict, Verdict::kAllowed);
  EXPECT_EQ(Check(kProducer, Operation::kPull).verdict, Verdict::kUnauthenticated);

  std::remove(path_.c_str());
  EXPECT_EQ(auth_.Reload().code(), Errc::kIOError);
  EXPECT_EQ(Check(kConsumer, Operation::kPull).verdict, Verdict::kAllowed);
}

TEST_F(AuthenticatorTest, LoadRefusesABadFileAndStaysDisabled) {
  Write("x y z\n");
  Status s = auth_.Load(path_);
  EXPECT_EQ(s.code(), Errc::kInvalidArgument);
  EXPECT_FALSE(auth_.enabled());
  EXPECT_EQ(auth_.Load(path_ + ".missing").code(), Errc::kIOError);
}

}  // namespace
}  // namespace chronoq::auth

namespace chronoq::auth {
namespace {

TEST(RateLimitTest, ATokenBucketPerTokenOnTheClock) {
  base::ManualClock clock(FromEpochMs(1'700'000'000'000));
  Authenticator auth(&clock);
  const std::string path = ::testing::TempDir() + "/tokens_rate";
  std::ofstream(path, std::ios::trunc) << kProducer << " shop producer rate=2\n"
                                       << kConsumer << " shop consumer\n";
  ASSERT_TRUE(auth.Load(path).ok());
  auto check = [&](std::string_view token) {
    return auth.Check(Credential{token, false}, Operation::kGet).verdict;
  };
  // A bucket of 2: two requests at once, then refused until it refills at 2 per second.
  EXPECT_EQ(check(kProducer), Verdict::kAllowed);
  EXPECT_EQ(check(kProducer), Verdict::kAllowed);
  Decision d = auth.Check(Credential{kProducer, false}, Operation::kGet);
  EXPECT_EQ(d.verdict, Verdict::kRateLimited);
  EXPECT_EQ(d.message, "the token's rate limit (2 requests per second) is reached; retry later");
  EXPECT_EQ(check(kConsumer), Verdict::kAllowed);  // no limit, and another bucket
  clock.Advance(Millis(499));
  EXPECT_EQ(check(kProducer), Verdict::kRateLimited);
  clock.Advance(Millis(1));
  EXPECT_EQ(check(kProducer), Verdict::kAllowed);
  EXPECT_EQ(check(kProducer), Verdict::kRateLimited);
  clock.Advance(Millis(10'000));  // refills to 2, no more
  EXPECT_EQ(check(kProducer), Verdict::kAllowed);
  EXPECT_EQ(check(kProducer), Verdict::kAllowed);
  EXPECT_EQ(check(kProducer), Verdict::kRateLimited);
  EXPECT_EQ(auth.failures(Failure::kRateLimited), 4u);
  // A reload keeps the bucket (an empty one stays empty).
  ASSERT_TRUE(auth.Reload().ok());
  EXPECT_EQ(check(kProducer), Verdict::kRateLimited);
  std::remove(path.c_str());
}

}  // namespace
}  // namespace chronoq::auth
