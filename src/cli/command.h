// A client subcommand (`chronoq send`, `pull`, ...): its options, how its options become API
// requests, and how a successful answer reads for a person. One file per subcommand (or pair of
// related subcommands) defines its Command; cli.cc runs them (parse, build, send, print, exit
// code). Most subcommands make one request; send-batch and ack --batch send their input in parts
// of at most kMaxBatchItems, and list --all follows the pages.
#pragma once

#include <chrono>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "base/result.h"
#include "cli/args.h"
#include "cli/call.h"
#include "client/json.h"

namespace chronoq::cli {

// One request of a subcommand.
struct Request {
  enum class Method { kPost, kGet };
  Method method = Method::kPost;
  std::string op;   // "sendMsg": the path under /camellia/delayQueue/
  Params params{};  // form fields (POST) or query (GET)
  // When not empty, POSTed as the body (application/json) instead of `params`: sendMsgBatch and
  // ackMsgBatch take JSON arrays.
  std::string json{};
  // send-batch: the input line of each item of `json`, for the answer's per-item results.
  std::vector<int64_t> lines{};
  std::chrono::milliseconds extra_wait{0};  // added to --timeout (long polls)
};

struct Command {
  CommandSpec spec;
  // The requests for these options, sent in order while each is answered with code 200 (one for
  // most subcommands), or kInvalidArgument naming a malformed option or input line (exit 2).
  // Called only with arguments that passed ParseArgs(spec).
  std::function<Result<std::vector<Request>>(const ParsedArgs& args)> build;
  // The text printed on stdout for a code-200 answer (the whole parsed answer document) to `sent`.
  std::function<std::string(const client::Json& answer, const Request& sent,
                            const ParsedArgs& args)>
      render;
  // Instead of `render` when the server says an existing message answered (Answer::existing);
  // empty: `render`.
  std::function<std::string(const client::Json& answer, const Request& sent,
                            const ParsedArgs& args)>
      render_existing = nullptr;
  // Paging (list --all): the request after `sent`, whose code-200 answer is `answer`; nullopt
  // after the last page. Empty: the built requests are all.
  std::function<std::optional<Request>(const Request& sent, const client::Json& answer,
                                       const ParsedArgs& args)>
      next = nullptr;
  // Batch answers report each item: how many items of this code-200 answer failed. Any failed
  // item makes the exit code 1, after every request was sent and printed. Empty: none can fail.
  std::function<int64_t(const client::Json& answer)> failed_items = nullptr;
};

// The subcommands, one per file.
Command SendCommand();         // send.cc
Command PullCommand();         // pull.cc
Command AckCommand();          // ack.cc
Command NackCommand();         // ack.cc
Command GetCommand();          // get.cc
Command DeleteCommand();       // delete.cc
Command TopicsCommand();       // topics.cc
Command TopicCommand();        // topics.cc
Command MonitorCommand();      // monitor.cc
Command SendBatchCommand();    // send_batch.cc
Command UpdateCommand();       // update.cc
Command TriggerNowCommand();   // update.cc
Command TouchCommand();        // touch.cc
Command CountCommand();        // count.cc
Command ListCommand();         // list.cc
Command PeekCommand();         // list.cc
Command TopicConfigCommand();  // topic_config.cc
Command PauseCommand();        // topic_config.cc
Command ResumeCommand();       // topic_config.cc
Command PurgeCommand();        // topic_config.cc
Command RedriveCommand();      // topic_config.cc
Command BackupCommand();       // backup.cc

// Every subcommand, in the order `chronoq --help` lists them.
const std::vector<Command>& Commands();

// Options several subcommands share.
OptionSpec TopicOption();
OptionSpec MsgIdOption(std::string help = "the message's id");
// The value of an option ParseArgs found present (a required one).
std::string Required(const ParsedArgs& args, std::string_view name);
// Adds the message settings that send and update share, when given: --delay (delayMillis),
// --trigger-time (triggerTime), --ttl (ttlMillis), --max-retry (maxRetry), --priority. Each
// command declares these options itself (their help differs). kInvalidArgument naming a
// malformed one. In send.cc.
Status AddSettingParams(const ParsedArgs& args, Params* params);
// "<verb> <msgId> in topic <topic>: <StateLine>" for an answer with the changed message
// (updateMsg, countMsg). In update.cc.
std::string Changed(std::string_view verb, const client::Json& answer);
// Command::failed_items of the batch operations (sendMsgBatch, ackMsgBatch): how many of the
// answer's "results" have a code other than 200.
int64_t FailedResults(const client::Json& answer);
// The one request of a subcommand that makes one.
Result<std::vector<Request>> One(Request r);

}  // namespace chronoq::cli
