// `chronoq ack` and `chronoq nack`: ackMsg with ack=true / ack=false.
#include <fmt/format.h>

#include "cli/command.h"
#include "cli/format.h"

namespace chronoq::cli {

namespace {

Command AckOrNack(bool ack) {
  return {
      .spec = {.name = ack ? "ack" : "nack",
               .summary = ack ? "acknowledge a pulled message: it is done"
                              : "give a pulled message back, to be delivered again now",
               .details = ack ? "Calls ackMsg with ack=true. Exit code 1 when the message does "
                                "not exist or is not\ndelivered and unacked."
                              : "Calls ackMsg with ack=false. Exit code 1 when the message does "
                                "not exist or is not\nbeing consumed (status 3).",
               .options = {TopicOption(), MsgIdOption()}},
      .build = [ack](const ParsedArgs& args) -> Result<Request> {
        return Request{.op = "ackMsg",
                       .params = {{"topic", Required(args, "topic")},
                                  {"msgId", Required(args, "msg-id")},
                                  {"ack", ack ? "true" : "false"}}};
      },
      .render =
          [ack](const client::Json&, const ParsedArgs& args) {
            return fmt::format(
                "{} {} in topic {}{}\n", ack ? "acked" : "nacked",
                Printable(Required(args, "msg-id")), Printable(Required(args, "topic")),
                ack ? "" : ": it is delivered again (unless that was its last delivery)");
          },
  };
}

}  // namespace

Command AckCommand() { return AckOrNack(true); }
Command NackCommand() { return AckOrNack(false); }

}  // namespace chronoq::cli
