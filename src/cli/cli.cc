#include "cli/cli.h"

#include <fmt/format.h>

#include <cstdio>
#include <deque>
#include <iterator>

#include "cli/command.h"
#include "cli/data.h"

namespace chronoq::cli {

const std::vector<Command>& Commands() {
  static const std::vector<Command> commands = {
      SendCommand(),       SendBatchCommand(),   PullCommand(),   AckCommand(),    NackCommand(),
      TouchCommand(),      GetCommand(),         ListCommand(),   PeekCommand(),   UpdateCommand(),
      TriggerNowCommand(), CountCommand(),       DeleteCommand(), TopicsCommand(), TopicCommand(),
      MonitorCommand(),    TopicConfigCommand(), PauseCommand(),  ResumeCommand(), PurgeCommand(),
      RedriveCommand(),    BackupCommand(),
  };
  return commands;
}

OptionSpec TopicOption() {
  return {.name = "topic", .help = "the topic", .required = true, .value_name = "NAME"};
}

OptionSpec MsgIdOption(std::string help) {
  return {.name = "msg-id", .help = std::move(help), .required = true, .value_name = "ID"};
}

std::string Required(const ParsedArgs& args, std::string_view name) {
  return args.Get(name).value_or("");
}

int64_t FailedResults(const client::Json& answer) {
  int64_t failed = 0;
  for (const client::Json& item : answer["results"].items()) failed += item["code"].AsInt() != 200;
  return failed;
}

Result<std::vector<Request>> One(Request r) {
  std::vector<Request> requests;
  requests.push_back(std::move(r));
  return requests;
}

namespace {

const Command* Find(std::string_view name) {
  for (const Command& c : Commands()) {
    if (c.spec.name == name) return &c;
  }
  return nullptr;
}

Answer Call(const Session& session, const Request& r) {
  if (r.method == Request::Method::kGet) return session.Get(r.op, r.params);
  if (!r.json.empty()) return session.PostJson(r.op, r.json);
  return session.Post(r.op, r.params, r.extra_wait);
}

// Said when a request after the first of a run fails: what the earlier ones did stays done.
std::string Earlier(int64_t answered) {
  if (answered == 0) return "";
  return fmt::format(" (after {} {} answered with code 200, printed above)", answered,
                     answered == 1 ? "request" : "requests");
}

int UsageError(std::string_view name, const Status& s, Output* output) {
  output->err += fmt::format("chronoq {}: {}\n(chronoq {} --help shows the options)\n", name,
                             s.message(), name);
  return kExitUsage;
}

}  // namespace

namespace {

// The streaming data commands (data.h), which run by themselves.
using DataRun = int (*)(const std::vector<std::string>&);
DataRun FindData(std::string_view name) {
  if (name == "export") return RunExport;
  if (name == "import") return RunImport;
  return nullptr;
}

}  // namespace

bool IsCliCommand(std::string_view name) {
  return Find(name) != nullptr || FindData(name) != nullptr;
}

int RunCliCaptured(std::string_view name, const std::vector<std::string>& args, Output* output) {
  const Command* cmd = Find(name);
  CQ_CHECK(cmd != nullptr, "RunCli: '{}' is not a client subcommand", name);
  Result<ParsedArgs> parsed = ParseArgs(cmd->spec, args);
  if (!parsed.has_value()) return UsageError(name, parsed.error(), output);
  if (parsed->help()) {
    output->out += HelpText(cmd->spec);
    return kExitOk;
  }
  Result<Session> session = Session::FromArgs(*parsed);
  if (!session.has_value()) return UsageError(name, session.error(), output);
  Result<std::vector<Request>> built = cmd->build(*parsed);
  if (!built.has_value()) return UsageError(name, built.error(), output);

  std::deque<Request> pending(std::make_move_iterator(built->begin()),
                              std::make_move_iterator(built->end()));
  int64_t answered = 0;  // requests answered with code 200
  int64_t failed_items = 0;
  while (!pending.empty()) {
    Request request = std::move(pending.front());
    pending.pop_front();
    Answer answer = Call(*session, request);
    if (answer.exit == kExitUnreachable) {
      output->err += fmt::format("chronoq {}: {}{}\n", name, answer.error, Earlier(answered));
      return answer.exit;
    }
    if (session->json) output->out += answer.body + "\n";
    if (answer.exit != kExitOk) {
      output->err += fmt::format("chronoq {}: {}{}\n", name, answer.error, Earlier(answered));
      return answer.exit;
    }
    ++answered;
    if (!session->json) {
      const auto& render =
          answer.existing && cmd->render_existing ? cmd->render_existing : cmd->render;
      output->out += render(answer.json, request, *parsed);
    }
    if (cmd->failed_items) failed_items += cmd->failed_items(answer.json);
    if (cmd->next) {
      std::optional<Request> next = cmd->next(request, answer.json, *parsed);
      if (next.has_value()) pending.push_back(std::move(*next));
    }
  }
  if (failed_items > 0) {
    output->err += fmt::format("chronoq {}: {} {} failed (see above)\n", name, failed_items,
                               failed_items == 1 ? "item" : "items");
    return kExitRefused;
  }
  return kExitOk;
}

int RunCli(std::string_view name, const std::vector<std::string>& args) {
  if (DataRun run = FindData(name)) return run(args);
  Output output;
  int rc = RunCliCaptured(name, args, &output);
  std::fwrite(output.out.data(), 1, output.out.size(), stdout);
  std::fwrite(output.err.data(), 1, output.err.size(), stderr);
  return rc;
}

std::string CommandsUsage() {
  std::string out;
  for (const Command& c : Commands())
    out += fmt::format("  {:<10} {}\n", c.spec.name, c.spec.summary);
  for (const CommandSpec& spec : {ExportSpec(), ImportSpec()})
    out += fmt::format("  {:<10} {}\n", spec.name, spec.summary);
  return out;
}

}  // namespace chronoq::cli
