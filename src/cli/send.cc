// `chronoq send`: sendMsg.
#include <fmt/format.h>

#include <limits>

#include "cli/command.h"
#include "cli/format.h"

namespace chronoq::cli {

namespace {

constexpr int64_t kInt32Max = std::numeric_limits<int32_t>::max();
constexpr int64_t kInt64Max = std::numeric_limits<int64_t>::max();

Result<std::vector<Request>> Build(const ParsedArgs& args) {
  Request r{.op = "sendMsg"};
  r.params = {{"topic", Required(args, "topic")}, {"msg", Required(args, "msg")}};
  // delayMillis is required by the API; --trigger-time replaces it.
  if (!args.Has("delay") && !args.Has("trigger-time")) r.params.emplace_back("delayMillis", "0");
  CQ_RETURN_IF_ERROR(AddSettingParams(args, &r.params));
  CQ_ASSIGN_OR_RETURN(std::optional<int64_t> count_trigger,
                      IntOption(args, "count-trigger", 0, kInt32Max));
  if (count_trigger.has_value()) {
    r.params.emplace_back("countTrigger", std::to_string(*count_trigger));
  }
  if (std::optional<std::string> id = args.Get("msg-id")) r.params.emplace_back("msgId", *id);
  return One(std::move(r));
}

std::string Render(const client::Json& answer, const Request&, const ParsedArgs&) {
  const client::Json& m = answer["delayMsg"];
  return fmt::format("sent {} to topic {}: {}\n", Printable(m["msgId"].AsString()),
                     Printable(m["topic"].AsString()), StateLine(m));
}

// The send changed nothing: say so first, then what is stored.
std::string RenderExisting(const client::Json& answer, const Request&, const ParsedArgs&) {
  const client::Json& m = answer["delayMsg"];
  return fmt::format(
      "not sent: {} is already in topic {} ({}); nothing was stored. The existing message "
      "triggers at {}, expires at {}\n",
      Printable(m["msgId"].AsString()), Printable(m["topic"].AsString()),
      StatusName(m["status"].AsInt()), IsoUtc(m["triggerTime"].AsInt()),
      IsoUtc(m["expireTime"].AsInt()));
}

}  // namespace

Status AddSettingParams(const ParsedArgs& args, Params* params) {
  CQ_ASSIGN_OR_RETURN(std::optional<std::chrono::milliseconds> delay,
                      DurationOption(args, "delay"));
  if (delay.has_value()) params->emplace_back("delayMillis", std::to_string(delay->count()));
  // Both --delay and --trigger-time go to the server, whose answer names both (one rule, kept
  // there).
  CQ_ASSIGN_OR_RETURN(std::optional<int64_t> trigger_time,
                      IntOption(args, "trigger-time", 0, kInt64Max));
  if (trigger_time.has_value()) params->emplace_back("triggerTime", std::to_string(*trigger_time));
  CQ_ASSIGN_OR_RETURN(std::optional<std::chrono::milliseconds> ttl,
                      DurationOption(args, "ttl", /*positive=*/true));
  if (ttl.has_value()) params->emplace_back("ttlMillis", std::to_string(ttl->count()));
  CQ_ASSIGN_OR_RETURN(std::optional<int64_t> max_retry, IntOption(args, "max-retry", 0, kInt32Max));
  if (max_retry.has_value()) params->emplace_back("maxRetry", std::to_string(*max_retry));
  // Any whole number: the server owns the range (0..9) and says it when one is outside.
  CQ_ASSIGN_OR_RETURN(std::optional<int64_t> priority,
                      IntOption(args, "priority", std::numeric_limits<int64_t>::min(), kInt64Max));
  if (priority.has_value()) params->emplace_back("priority", std::to_string(*priority));
  return Status();
}

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
                    {.name = "trigger-time",
                     .help = "consumable at this time, ms since the epoch (instead of --delay)",
                     .value_name = "MS"},
                    {.name = "ttl",
                     .help = "ends this long after its trigger time (default: the server's, 1h)",
                     .value_name = "DURATION"},
                    {.name = "max-retry",
                     .help = "at most N+1 deliveries (default: the server's, 10)",
                     .value_name = "N"},
                    {.name = "priority",
                     .help =
                         "0..9; among consumable messages, higher is delivered first (default 0)",
                     .value_name = "N"},
                    {.name = "count-trigger",
                     .help = "consumable once counted N times (chronoq count), or at its trigger "
                             "time",
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
