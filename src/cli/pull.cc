// `chronoq pull`: pullMsg, or longPollingMsg with --long-poll.
#include <fmt/format.h>

#include <limits>

#include "cli/command.h"
#include "cli/format.h"

namespace chronoq::cli {

namespace {

Result<std::vector<Request>> Build(const ParsedArgs& args) {
  Request r{.op = "pullMsg"};
  r.params = {{"topic", Required(args, "topic")}};
  CQ_ASSIGN_OR_RETURN(std::optional<int64_t> batch,
                      IntOption(args, "batch", 1, std::numeric_limits<int32_t>::max()));
  if (batch.has_value()) r.params.emplace_back("batch", std::to_string(*batch));
  CQ_ASSIGN_OR_RETURN(std::optional<std::chrono::milliseconds> ack_timeout,
                      DurationOption(args, "ack-timeout", /*positive=*/true));
  if (ack_timeout.has_value()) {
    r.params.emplace_back("ackTimeoutMillis", std::to_string(ack_timeout->count()));
  }
  CQ_ASSIGN_OR_RETURN(std::optional<std::chrono::milliseconds> long_poll,
                      DurationOption(args, "long-poll", /*positive=*/true));
  if (long_poll.has_value()) {
    r.op = "longPollingMsg";
    r.params.emplace_back("longPollingTimeoutMillis", std::to_string(long_poll->count()));
    r.extra_wait = *long_poll;
  }
  return One(std::move(r));
}

std::string Render(const client::Json& answer, const Request&, const ParsedArgs& args) {
  const std::vector<client::Json>& list = answer["delayMsgList"].items();
  if (list.empty()) {
    return fmt::format("no message ready in topic {}\n", Printable(Required(args, "topic")));
  }
  std::string out;
  for (const client::Json& m : list) {
    if (!out.empty()) out += "\n";
    out += MessageBlock(m);
  }
  return out;
}

}  // namespace

Command PullCommand() {
  return {
      .spec = {.name = "pull",
               .summary = "take consumable messages of a topic (short or long poll)",
               .details = "Calls pullMsg (longPollingMsg with --long-poll). Each message printed "
                          "must be acked (chronoq ack) within the ack "
                          "timeout, or it is\ndelivered again. With --long-poll, waits up to "
                          "that long for a message when none is ready.",
               .options = {TopicOption(),
                           {.name = "batch",
                            .help = "take up to N messages (default 1)",
                            .value_name = "N"},
                           {.name = "ack-timeout",
                            .help = "ack within this long (default: the server's, 30s)",
                            .value_name = "DURATION"},
                           {.name = "long-poll",
                            .help = "wait up to this long for a message (server cap 2m)",
                            .value_name = "DURATION"}}},
      .build = Build,
      .render = Render,
  };
}

}  // namespace chronoq::cli
