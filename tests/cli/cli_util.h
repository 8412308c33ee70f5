// Shared pieces of the CLI tests: a fixture that runs `chronoq <subcommand> ...` against the
// shared test server (tests/integration/it_util.h) and parses its --json output.
#pragma once

#include <boost/json.hpp>
#include <string>
#include <vector>

#include "tests/integration/it_util.h"

namespace chronoq::it {

using testutil::ExitResult;
using testutil::RunBinary;

// The exit codes of the client subcommands (src/cli/cli.h).
inline constexpr int kOk = 0;
inline constexpr int kRefused = 1;
inline constexpr int kUsage = 2;
inline constexpr int kUnreachable = 3;

class CliTest : public ServerTest {
 protected:
  std::string ServerUrl() { return "http://127.0.0.1:" + std::to_string(server().port()); }

  // `chronoq <args...> --server=<the test server>`.
  ExitResult Cli(std::vector<std::string> args) {
    args.push_back("--server=" + ServerUrl());
    return RunBinary(args, std::chrono::seconds(20));
  }

  // Cli() with `input` on the binary's stdin.
  ExitResult CliWithInput(std::vector<std::string> args, std::string_view input) {
    args.push_back("--server=" + ServerUrl());
    return testutil::RunBinaryWithInput(args, input, std::chrono::seconds(20));
  }

  // Cli() that must exit 0; answers stdout.
  std::string CliOk(const std::vector<std::string>& args) {
    ExitResult r = Cli(args);
    EXPECT_EQ(r.exit_code, kOk) << Describe(r);
    return r.out;
  }

  // Cli() with --json that must exit `exit_code`: answers the one JSON document on stdout.
  json::object CliJson(std::vector<std::string> args, int exit_code = kOk) {
    args.push_back("--json");
    ExitResult r = Cli(args);
    EXPECT_EQ(r.exit_code, exit_code) << Describe(r);
    return ParseObject(r.out);
  }

  // The documents of a --json run that made several requests, one per line.
  static std::vector<json::object> ParseLines(const std::string& out) {
    std::vector<json::object> docs;
    size_t begin = 0;
    while (begin < out.size()) {
      size_t end = out.find('\n', begin);
      if (end == std::string::npos) end = out.size();
      docs.push_back(ParseObject(out.substr(begin, end - begin)));
      begin = end + 1;
    }
    return docs;
  }

  static json::object ParseObject(const std::string& out) {
    boost::system::error_code ec;
    json::value v = json::parse(out, ec);
    EXPECT_FALSE(ec) << "stdout is not one JSON document: " << out;
    EXPECT_TRUE(v.is_object()) << out;
    return v.is_object() ? v.as_object() : json::object();
  }

  static std::string Describe(const ExitResult& r) {
    return "exit " + std::to_string(r.exit_code) + (r.timed_out ? " (timed out)" : "") +
           "\nstdout:\n" + r.out + "\nstderr:\n" + r.err;
  }
};

inline bool Contains(const std::string& haystack, std::string_view needle) {
  return haystack.find(needle) != std::string::npos;
}

}  // namespace chronoq::it
