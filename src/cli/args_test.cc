#include "cli/args.h"

#include <gtest/gtest.h>

#include "cli/call.h"

namespace chronoq::cli {
namespace {

using std::chrono::milliseconds;

const CommandSpec& Spec() {
  static const CommandSpec spec = {.name = "send",
                                   .summary = "send a message",
                                   .options = {{.name = "topic", .help = "t", .required = true},
                                               {.name = "delay", .help = "d"},
                                               {.name = "release", .help = "r", .flag = true}}};
  return spec;
}

std::string ErrorOf(const std::vector<std::string>& args) {
  Result<ParsedArgs> r = ParseArgs(Spec(), args);
  EXPECT_FALSE(r.has_value());
  return r.has_value() ? "" : r.error().message();
}

TEST(ParseArgsTest, ReadsBothSpellingsAndFlags) {
  Result<ParsedArgs> r =
      ParseArgs(Spec(), {"--topic=orders", "--delay", "30s", "--release", "--json"});
  ASSERT_TRUE(r.has_value()) << r.error().message();
  EXPECT_EQ(r->Get("topic"), "orders");
  EXPECT_EQ(r->Get("delay"), "30s");
  EXPECT_TRUE(r->Flag("release"));
  EXPECT_TRUE(r->Flag("json"));
  EXPECT_FALSE(r->Has("server"));
  EXPECT_FALSE(r->help());
}

TEST(ParseArgsTest, ValuesAreKeptExactly) {
  Result<ParsedArgs> r = ParseArgs(Spec(), {"--topic= a=b ", "--delay="});
  ASSERT_TRUE(r.has_value()) << r.error().message();
  EXPECT_EQ(r->Get("topic"), " a=b ");
  EXPECT_EQ(r->Get("delay"), "");
}

TEST(ParseArgsTest, FlagTakesTrueOrFalse) {
  Result<ParsedArgs> r = ParseArgs(Spec(), {"--topic=t", "--release=false"});
  ASSERT_TRUE(r.has_value()) << r.error().message();
  EXPECT_FALSE(r->Flag("release"));
  EXPECT_NE(ErrorOf({"--topic=t", "--release=maybe"}).find("--release"), std::string::npos);
}

TEST(ParseArgsTest, ErrorsNameTheOption) {
  EXPECT_NE(ErrorOf({"--topic=t", "--bogus=1"}).find("unknown option '--bogus'"),
            std::string::npos);
  EXPECT_NE(ErrorOf({"--delay=1"}).find("missing required option '--topic'"), std::string::npos);
  EXPECT_NE(ErrorOf({"--topic=t", "--topic=u"}).find("'--topic' is given twice"),
            std::string::npos);
  EXPECT_NE(ErrorOf({"--topic"}).find("'--topic' needs a value"), std::string::npos);
  EXPECT_NE(ErrorOf({"--topic", "--delay=1"}).find("'--topic' needs a value"), std::string::npos);
  EXPECT_NE(ErrorOf({"--topic=t", "stray"}).find("unexpected argument 'stray'"), std::string::npos);
  EXPECT_NE(ErrorOf({"--topic=t", "--"}).find("unexpected argument '--'"), std::string::npos);
}

TEST(ParseArgsTest, OperandsOnlyWhereTheSpecTakesThem) {
  CommandSpec spec = Spec();
  spec.operands = "[ID...]";
  Result<ParsedArgs> r = ParseArgs(spec, {"a", "--topic", "t", "-b", "--release", "c"});
  ASSERT_TRUE(r.has_value()) << r.error().message();
  EXPECT_EQ(r->operands(), (std::vector<std::string>{"a", "-b", "c"}));
  EXPECT_EQ(r->Get("topic"), "t");
  EXPECT_NE(ParseArgs(spec, {"--topic=t", "--"}).error().message().find("unexpected argument '--'"),
            std::string::npos);
  EXPECT_NE(HelpText(spec).find("Usage: chronoq send [options] [ID...]\n"), std::string::npos);
  EXPECT_NE(HelpText(Spec()).find("Usage: chronoq send [options]\n"), std::string::npos);
}

TEST(ParseArgsTest, HelpSkipsRequiredChecks) {
  for (const char* h : {"--help", "-h"}) {
    Result<ParsedArgs> r = ParseArgs(Spec(), {h});
    ASSERT_TRUE(r.has_value()) << r.error().message();
    EXPECT_TRUE(r->help());
  }
}

TEST(ParseDurationTest, UnitsAndPlainMilliseconds) {
  EXPECT_EQ(*ParseDuration("1500"), milliseconds(1500));
  EXPECT_EQ(*ParseDuration("0"), milliseconds(0));
  EXPECT_EQ(*ParseDuration("250ms"), milliseconds(250));
  EXPECT_EQ(*ParseDuration("30s"), milliseconds(30'000));
  EXPECT_EQ(*ParseDuration("5m"), milliseconds(300'000));
  EXPECT_EQ(*ParseDuration("2h"), milliseconds(7'200'000));
  EXPECT_EQ(*ParseDuration("1d"), milliseconds(86'400'000));
  EXPECT_EQ(*ParseDuration("1h30m"), milliseconds(5'400'000));
  EXPECT_EQ(*ParseDuration("1m0s500ms"), milliseconds(60'500));
}

TEST(ParseDurationTest, RefusesWhatIsNotADuration) {
  for (const char* bad :
       {"", "-5", "-5s", "+5s", "1.5s", "5x", "s", "5 s", " 5s", "5s ", "5S", "1h30", "30sm",
        "0x10", "99999999999999999999", "9223372036854775807d", "9223372036854775807ms1ms"}) {
    SCOPED_TRACE(bad);
    Result<milliseconds> r = ParseDuration(bad);
    ASSERT_FALSE(r.has_value()) << r->count();
    EXPECT_NE(r.error().message().find("is not a duration"), std::string::npos);
  }
  EXPECT_EQ(*ParseDuration("9223372036854775807"), milliseconds(INT64_MAX));
}

TEST(ParseIntTest, RangeAndSyntax) {
  EXPECT_EQ(*ParseInt("0", 0, 10), 0);
  EXPECT_EQ(*ParseInt("10", 0, 10), 10);
  EXPECT_FALSE(ParseInt("11", 0, 10).has_value());
  EXPECT_FALSE(ParseInt("-1", 0, 10).has_value());
  EXPECT_FALSE(ParseInt("", 0, 10).has_value());
  EXPECT_FALSE(ParseInt("3x", 0, 10).has_value());
  EXPECT_FALSE(ParseInt("1e3", 0, 10000).has_value());
}

TEST(OptionReadersTest, ErrorsNameTheOption) {
  Result<ParsedArgs> args = ParseArgs(Spec(), {"--topic=7", "--delay=soon"});
  ASSERT_TRUE(args.has_value());
  auto d = DurationOption(*args, "delay");
  ASSERT_FALSE(d.has_value());
  EXPECT_NE(d.error().message().find("option '--delay': 'soon' is not a duration"),
            std::string::npos)
      << d.error().message();
  auto absent = DurationOption(*args, "timeout");
  ASSERT_TRUE(absent.has_value());
  EXPECT_FALSE(absent->has_value());
  auto n = IntOption(*args, "topic", 0, 5);
  ASSERT_FALSE(n.has_value());
  EXPECT_NE(n.error().message().find("option '--topic'"), std::string::npos);
  EXPECT_EQ(**IntOption(*args, "topic", 0, 10), 7);
}

TEST(SessionTest, HttpsServersTakeTheTlsOptions) {
  Result<ParsedArgs> args =
      ParseArgs(Spec(), {"--topic=t", "--server=https://queue.example:8443/", "--ca-file=/ca.pem",
                         "--cert-file=/c.pem", "--key-file=/c.key"});
  ASSERT_TRUE(args.has_value()) << args.error().message();
  Result<Session> s = Session::FromArgs(*args);
  ASSERT_TRUE(s.has_value()) << s.error().message();
  EXPECT_TRUE(s->endpoint.tls);
  EXPECT_EQ(s->endpoint.host, "queue.example");
  EXPECT_EQ(s->endpoint.port, 8443);
  EXPECT_EQ(s->endpoint.tls_options.ca_file, "/ca.pem");
  EXPECT_EQ(s->endpoint.tls_options.cert_file, "/c.pem");
  EXPECT_EQ(s->endpoint.tls_options.key_file, "/c.key");
  // https without a port is 443; http stays plain; an IPv6 address keeps its colons.
  s = Session::FromArgs(*ParseArgs(Spec(), {"--topic=t", "--server=https://[::1]"}));
  ASSERT_TRUE(s.has_value()) << s.error().message();
  EXPECT_TRUE(s->endpoint.tls);
  EXPECT_EQ(s->endpoint.host, "::1");
  EXPECT_EQ(s->endpoint.port, 443);
  s = Session::FromArgs(*ParseArgs(Spec(), {"--topic=t", "--server=http://h:1"}));
  ASSERT_TRUE(s.has_value()) << s.error().message();
  EXPECT_FALSE(s->endpoint.tls);
  // A client certificate needs its key.
  s = Session::FromArgs(*ParseArgs(Spec(), {"--topic=t", "--server=https://h", "--cert-file=c"}));
  ASSERT_FALSE(s.has_value());
  EXPECT_EQ(s.error().message(), "options '--cert-file' and '--key-file' go together");
}

TEST(HelpTextTest, ListsEveryOption) {
  std::string help = HelpText(Spec());
  for (const char* s :
       {"Usage: chronoq send", "--topic=VALUE", "(required)", "--delay=VALUE", "--release",
        "--server=URL", "--json", "--timeout=DURATION", "Exit codes"}) {
    EXPECT_NE(help.find(s), std::string::npos) << s << " in\n" << help;
  }
}

}  // namespace
}  // namespace chronoq::cli
