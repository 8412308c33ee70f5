// `chronoq touch`: touchMsg, a new ack deadline for a message being consumed.
#include <fmt/format.h>

#include "cli/command.h"
#include "cli/format.h"

namespace chronoq::cli {

namespace {

Result<std::vector<Request>> Build(const ParsedArgs& args) {
  Request r{.op = "touchMsg",
            .params = {{"topic", Required(args, "topic")}, {"msgId", Required(args, "msg-id")}}};
  CQ_ASSIGN_OR_RETURN(std::optional<std::chrono::milliseconds> ack_timeout,
                      DurationOption(args, "ack-timeout", /*positive=*/true));
  if (ack_timeout.has_value()) {
    r.params.emplace_back("ackTimeoutMillis", std::to_string(ack_timeout->count()));
  }
  return One(std::move(r));
}

std::string Render(const client::Json& answer, const Request&, const ParsedArgs& args) {
  const client::Json& m = answer["delayMsg"];
  std::optional<std::string> ack_timeout = args.Get("ack-timeout");
  return fmt::format("touched {} in topic {}: {}, to be acked within {} from now\n",
                     Printable(m["msgId"].AsString()), Printable(m["topic"].AsString()),
                     StatusName(m["status"].AsInt()),
                     ack_timeout.has_value() ? *ack_timeout : "the topic's ack timeout");
}

}  // namespace

Command TouchCommand() {
  return {
      .spec = {.name = "touch",
               .summary = "keep a pulled message: restart its ack timeout",
               .details = "Calls touchMsg. A message being consumed (status 3) gets a new ack "
                          "deadline, now + the ack\ntimeout, and is not delivered again "
                          "meanwhile. Exit code 1 for a message in another status.",
               .options = {TopicOption(),
                           MsgIdOption(),
                           {.name = "ack-timeout",
                            .help = "ack within this long from now (default: the topic's, 30s)",
                            .value_name = "DURATION"}}},
      .build = Build,
      .render = Render,
  };
}

}  // namespace chronoq::cli
