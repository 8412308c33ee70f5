// A client subcommand (`chronoq send`, `pull`, ...): its options, how its options become one API
// request, and how a successful answer reads for a person. One file per subcommand defines its
// Command; cli.cc runs them (parse, build, send, print, exit code).
#pragma once

#include <chrono>
#include <functional>
#include <string>
#include <vector>

#include "base/result.h"
#include "cli/args.h"
#include "cli/call.h"
#include "client/json.h"

namespace chronoq::cli {

// The one request a subcommand makes.
struct Request {
  enum class Method { kPost, kGet };
  Method method = Method::kPost;
  std::string op;  // "sendMsg": the path under /camellia/delayQueue/
  Params params{};
  std::chrono::milliseconds extra_wait{0};  // added to --timeout (long polls)
};

struct Command {
  CommandSpec spec;
  // The request for these options, or kInvalidArgument naming a malformed option (exit 2).
  // Called only with arguments that passed ParseArgs(spec).
  std::function<Result<Request>(const ParsedArgs& args)> build;
  // The text printed on stdout for a code-200 answer (the whole parsed answer document).
  std::function<std::string(const client::Json& answer, const ParsedArgs& args)> render;
  // Instead of `render` when the server says an existing message answered (Answer::existing);
  // empty: `render`.
  std::function<std::string(const client::Json& answer, const ParsedArgs& args)> render_existing =
      nullptr;
};

// The subcommands, one per file.
Command SendCommand();     // send.cc
Command PullCommand();     // pull.cc
Command AckCommand();      // ack.cc
Command NackCommand();     // ack.cc
Command GetCommand();      // get.cc
Command DeleteCommand();   // delete.cc
Command TopicsCommand();   // topics.cc
Command TopicCommand();    // topics.cc
Command MonitorCommand();  // monitor.cc

// Every subcommand, in the order `chronoq --help` lists them.
const std::vector<Command>& Commands();

// Options several subcommands share.
OptionSpec TopicOption();
OptionSpec MsgIdOption(std::string help = "the message's id");
// The value of an option ParseArgs found present (a required one).
std::string Required(const ParsedArgs& args, std::string_view name);

}  // namespace chronoq::cli
