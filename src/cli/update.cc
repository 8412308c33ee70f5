// `chronoq update` and `chronoq trigger-now`: updateMsg (API-EXTENSIONS.md section 3).
#include <fmt/format.h>

#include "cli/command.h"
#include "cli/format.h"

namespace chronoq::cli {

namespace {

// The options of update that change something (AddSettingParams' and --msg).
constexpr std::string_view kChanges[] = {"delay", "trigger-time", "msg",
                                         "ttl",   "max-retry",    "priority"};

Params Target(const ParsedArgs& args) {
  return {{"topic", Required(args, "topic")}, {"msgId", Required(args, "msg-id")}};
}

Result<std::vector<Request>> BuildUpdate(const ParsedArgs& args) {
  bool any = false;
  for (std::string_view name : kChanges) any |= args.Has(name);
  if (!any) {
    return InvalidArgument(
        "nothing to update: give at least one of --delay, --trigger-time, --msg, --ttl, "
        "--max-retry, --priority");
  }
  Request r{.op = "updateMsg", .params = Target(args)};
  CQ_RETURN_IF_ERROR(AddSettingParams(args, &r.params));
  if (std::optional<std::string> msg = args.Get("msg")) r.params.emplace_back("msg", *msg);
  return One(std::move(r));
}

// delayMillis=0 rather than triggerTime=<this machine's now>: "now" is the server's clock, so
// that a client whose clock runs behind or ahead still fires the message at once.
Result<std::vector<Request>> BuildTriggerNow(const ParsedArgs& args) {
  Request r{.op = "updateMsg", .params = Target(args)};
  r.params.emplace_back("delayMillis", "0");
  return One(std::move(r));
}

}  // namespace

std::string Changed(std::string_view verb, const client::Json& answer) {
  const client::Json& m = answer["delayMsg"];
  return fmt::format("{} {} in topic {}: {}\n", verb, Printable(m["msgId"].AsString()),
                     Printable(m["topic"].AsString()), StateLine(m));
}

Command UpdateCommand() {
  return {
      .spec = {.name = "update",
               .summary = "change a message that is waiting or ready",
               .details = "Calls updateMsg with the options given (at least one). Applies to "
                          "status 1 (WAITING) and 2 (READY);\nexit code 1 for a message in "
                          "another status or unknown. A new trigger time that is not in\nthe "
                          "future makes it consumable at once; a new ttl counts from the trigger "
                          "time.\nPrints the message's status and times after the update.",
               .options = {TopicOption(),
                           MsgIdOption(),
                           {.name = "delay",
                            .help = "new trigger time: this long from now (0: now)",
                            .value_name = "DURATION"},
                           {.name = "trigger-time",
                            .help = "new trigger time, ms since the epoch (instead of --delay)",
                            .value_name = "MS"},
                           {.name = "msg", .help = "new payload", .value_name = "TEXT"},
                           {.name = "ttl",
                            .help = "new ttl, counted from the trigger time",
                            .value_name = "DURATION"},
                           {.name = "max-retry",
                            .help = "new limit: at most N+1 deliveries",
                            .value_name = "N"},
                           {.name = "priority", .help = "new priority, 0..9", .value_name = "N"}}},
      .build = BuildUpdate,
      .render = [](const client::Json& answer, const Request&,
                   const ParsedArgs&) { return Changed("updated", answer); },
  };
}

Command TriggerNowCommand() {
  return {
      .spec = {.name = "trigger-now",
               .summary = "make a waiting message consumable now",
               .details = "Calls updateMsg with delayMillis=0 (the server's now). Applies to "
                          "status 1 (WAITING) and 2\n(READY); exit code 1 for a message in "
                          "another status or unknown.",
               .options = {TopicOption(), MsgIdOption()}},
      .build = BuildTriggerNow,
      .render = [](const client::Json& answer, const Request&,
                   const ParsedArgs&) { return Changed("triggered", answer); },
  };
}

}  // namespace chronoq::cli
