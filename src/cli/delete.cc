// `chronoq delete`: deleteMsg.
#include <fmt/format.h>

#include "cli/command.h"
#include "cli/format.h"

namespace chronoq::cli {

namespace {

Result<std::vector<Request>> Build(const ParsedArgs& args) {
  return One(Request{.op = "deleteMsg",
                     .params = {{"topic", Required(args, "topic")},
                                {"msgId", Required(args, "msg-id")},
                                {"release", args.Flag("release") ? "true" : "false"}}});
}

std::string Render(const client::Json&, const Request&, const ParsedArgs& args) {
  return fmt::format("deleted {} in topic {}{}\n", Printable(Required(args, "msg-id")),
                     Printable(Required(args, "topic")),
                     args.Flag("release") ? " (record released)" : "");
}

}  // namespace

Command DeleteCommand() {
  return {
      .spec =
          {.name = "delete",
           .summary = "delete a message: it is never delivered again",
           .details =
               "Calls deleteMsg. Exit code 1 when the message does not exist or has already ended.",
           .options = {TopicOption(),
                       MsgIdOption(),
                       {.name = "release",
                        .help = "also forget the record at once (get then finds nothing)",
                        .flag = true}}},
      .build = Build,
      .render = Render,
  };
}

}  // namespace chronoq::cli
