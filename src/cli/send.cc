// `chronoq send`: sendMsg.
#include <fmt/format.h>

#include <limits>

#include "cli/command.h"
#include "cli/format.h"

namespace chronoq::cli {

namespace {

constexpr int64_t kInt32Max = std::numeric_limits<int32_t>::max();

Result<Request> Build(const ParsedArgs& args) {
  Request r{.op = "sendMsg"};
  r.params = {{"topic", Required(args, "topic")}, {"msg", Required(args, "msg")}};
  CQ_ASSIGN_OR_RETURN(std::optional<std::chrono::milliseconds> delay,
                      DurationOption(args, "delay"));
  r.params.emplace_back("delayMillis",
                        std::to_string(delay.value_or(std::chrono::milliseconds(0)).count()));
  CQ_ASSIGN_OR_RETURN(std::optional<std::chrono::milliseconds> ttl,
                      DurationOption(args, "ttl", /*positive=*/true));
  if (ttl.has_value()) {
    r.params.emplace_back("ttlMillis", std::to_string(ttl->count()));
  }
  CQ_ASSIGN_OR_RETURN(std::optional<int64_t> max_retry, IntOption(args, "max-retry", 0, kInt32Max));
  if (max_retry.has_value()) r.params.emplace_back("maxRetry", std::to_string(*max_retry));
  if (std::optional<std::string> id = args.Get("msg-id")) r.params.emplace_back("msgId", *id);
  return r;
}

std::string Render(const client::Json& answer, const ParsedArgs&) {
  const client::Json& m = answer["delayMsg"];
  return fmt::format("sent {} to topic {}: {}, triggers at {}, expires at {}\n",
                     Printable(m["msgId"].AsString()), Printable(m["topic"].AsString()),
                     StatusName(m["status"].AsInt()), IsoUtc(m["triggerTime"].AsInt()),
                     IsoUtc(m["expireTime"].AsInt()));
}

// The send changed nothing: say so first, then what is stored.
std::string RenderExisting(const client::Json& answer, const ParsedArgs&) {
  const client::Json& m = answer["delayMsg"];
  return fmt::format(
      "not sent: {} is already in topic {} ({}); nothing was stored. The existing message "
      "triggers at {}, expires at {}\n",
      Printable(m["msgId"].AsString()), Printable(m["topic"].AsString()),
      StatusName(m["status"].AsInt()), IsoUtc(m["triggerTime"].AsInt()),
      IsoUtc(m["expireTime"].AsInt()));
}

}  // namespace

Command SendCommand() {
  return {
      .spec = {.name = "send",
               .summary = "send a message that becomes consumable after a delay",
               .details = "Calls sendMsg. Prints the message's id, status and trigger and expire "
                          "times (UTC).\n"
                          "Sending again with the same --msg-id while the message is in life "
                          "changes nothing:\nit prints \"not sent\" and the existing message's "
                          "times (exit code 0).",
               .options =
                   {TopicOption(),
                    {.name = "msg", .help = "the payload", .required = true, .value_name = "TEXT"},
                    {.name = "delay",
                     .help = "consumable after this long (default 0: now)",
                     .value_name = "DURATION"},
                    {.name = "ttl",
                     .help = "ends this long after its trigger time (default: the server's, 1h)",
                     .value_name = "DURATION"},
                    {.name = "max-retry",
                     .help = "at most N+1 deliveries (default: the server's, 10)",
                     .value_name = "N"},
                    {.name = "msg-id",
                     .help = "the message's id (default: the server generates one)",
                     .value_name = "ID"}}},
      .build = Build,
      .render = Render,
      .render_existing = RenderExisting,
  };
}

}  // namespace chronoq::cli
