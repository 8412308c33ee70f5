#include "cli/cli.h"

#include <fmt/format.h>

#include <cstdio>

#include "cli/command.h"

namespace chronoq::cli {

const std::vector<Command>& Commands() {
  static const std::vector<Command> commands = {
      SendCommand(),   PullCommand(),   AckCommand(),   NackCommand(),    GetCommand(),
      DeleteCommand(), TopicsCommand(), TopicCommand(), MonitorCommand(),
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

namespace {

const Command* Find(std::string_view name) {
  for (const Command& c : Commands()) {
    if (c.spec.name == name) return &c;
  }
  return nullptr;
}

int UsageError(std::string_view name, const Status& s, Output* output) {
  output->err += fmt::format("chronoq {}: {}\n(chronoq {} --help shows the options)\n", name,
                             s.message(), name);
  return kExitUsage;
}

}  // namespace

bool IsCliCommand(std::string_view name) { return Find(name) != nullptr; }

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
  Result<Request> request = cmd->build(*parsed);
  if (!request.has_value()) return UsageError(name, request.error(), output);

  Answer answer = request->method == Request::Method::kPost
                      ? session->Post(request->op, request->params, request->extra_wait)
                      : session->Get(request->op, request->params);
  if (answer.exit == kExitUnreachable) {
    output->err += fmt::format("chronoq {}: {}\n", name, answer.error);
    return answer.exit;
  }
  if (session->json) output->out += answer.body + "\n";
  if (answer.exit != kExitOk) {
    output->err += fmt::format("chronoq {}: {}\n", name, answer.error);
    return answer.exit;
  }
  if (!session->json) {
    const auto& render =
        answer.existing && cmd->render_existing ? cmd->render_existing : cmd->render;
    output->out += render(answer.json, *parsed);
  }
  return kExitOk;
}

int RunCli(std::string_view name, const std::vector<std::string>& args) {
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
  return out;
}

}  // namespace chronoq::cli
