// `chronoq get`: getMsg.
#include "cli/command.h"
#include "cli/format.h"

namespace chronoq::cli {

namespace {

Result<std::vector<Request>> Build(const ParsedArgs& args) {
  return One(
      Request{.op = "getMsg",
              .params = {{"topic", Required(args, "topic")}, {"msgId", Required(args, "msg-id")}}});
}

std::string Render(const client::Json& answer, const Request&, const ParsedArgs&) {
  return MessageBlock(answer["delayMsg"]);
}

}  // namespace

Command GetCommand() {
  return {
      .spec = {.name = "get",
               .summary = "show a message and its status",
               .details = "Calls getMsg. Ended messages stay readable for a while (the server's "
                          "end-life-msg-expire-millis);\nexit code 1 when the message is "
                          "unknown or past that.",
               .options = {TopicOption(), MsgIdOption()}},
      .build = Build,
      .render = Render,
  };
}

}  // namespace chronoq::cli
