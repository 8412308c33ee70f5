// `chronoq count`: countMsg, counting towards a message's count trigger.
#include <limits>

#include "cli/command.h"

namespace chronoq::cli {

namespace {

Result<std::vector<Request>> Build(const ParsedArgs& args) {
  Request r{.op = "countMsg",
            .params = {{"topic", Required(args, "topic")}, {"msgId", Required(args, "msg-id")}}};
  CQ_ASSIGN_OR_RETURN(std::optional<int64_t> count,
                      IntOption(args, "count", 1, std::numeric_limits<int32_t>::max()));
  if (count.has_value()) r.params.emplace_back("count", std::to_string(*count));
  return One(std::move(r));
}

}  // namespace

Command CountCommand() {
  return {
      .spec = {.name = "count",
               .summary = "count towards a waiting message's count trigger",
               .details = "Calls countMsg. A waiting message (status 1) sent with --count-trigger "
                          "becomes consumable\nat once when its count reaches it. Exit code 1 "
                          "for a message in another status.",
               .options = {TopicOption(),
                           MsgIdOption(),
                           {.name = "count", .help = "add N (default 1)", .value_name = "N"}}},
      .build = Build,
      .render = [](const client::Json& answer, const Request&,
                   const ParsedArgs&) { return Changed("counted", answer); },
  };
}

}  // namespace chronoq::cli
