// `chronoq ack` and `chronoq nack`: ackMsg with ack=true / ack=false; with --batch, ackMsgBatch
// for the ids given as arguments or on stdin (one per line), in parts of kMaxBatchItems ids.
#include <fmt/format.h>

#include "cli/command.h"
#include "cli/format.h"
#include "cli/input.h"

namespace chronoq::cli {

namespace {

// Whether this run nacks: `chronoq nack`, or `chronoq ack --nack`.
bool Nacks(bool ack_command, const ParsedArgs& args) { return !ack_command || args.Flag("nack"); }

Result<std::vector<std::string>> BatchIds(const ParsedArgs& args) {
  if (args.Has("msg-id")) {
    return InvalidArgument(
        "option '--msg-id' does not go with --batch: give the ids as arguments or one per line "
        "on stdin");
  }
  std::vector<std::string> ids = args.operands();
  if (ids.empty()) {
    CQ_ASSIGN_OR_RETURN(std::string text, ReadInput("-", "--batch"));
    for (const InputLine& line : NonBlankLines(text)) ids.emplace_back(line.text);
  }
  if (ids.empty()) {
    return InvalidArgument(
        "--batch: no message ids (give them as arguments or one per line on stdin)");
  }
  return ids;
}

// {"topic":..,"ack"|"nack":[ids...],"reason":..}: one ackMsgBatch request per kMaxBatchItems ids.
std::vector<Request> BatchRequests(const ParsedArgs& args, bool nack,
                                   const std::vector<std::string>& ids) {
  std::vector<Request> requests;
  for (size_t begin = 0; begin < ids.size(); begin += kMaxBatchItems) {
    size_t end = std::min(ids.size(), begin + kMaxBatchItems);
    std::string json = fmt::format("{{\"topic\":{},\"{}\":[", JsonString(Required(args, "topic")),
                                   nack ? "nack" : "ack");
    for (size_t i = begin; i < end; ++i) {
      if (i > begin) json += ",";
      json += JsonString(ids[i]);
    }
    json += "]";
    if (std::optional<std::string> reason = args.Get("reason")) {
      json += ",\"reason\":" + JsonString(*reason);
    }
    json += "}";
    requests.push_back(Request{.op = "ackMsgBatch", .json = std::move(json)});
  }
  return requests;
}

Result<std::vector<Request>> Build(bool ack_command, const ParsedArgs& args) {
  bool nack = Nacks(ack_command, args);
  if (args.Has("reason") && !nack) {
    return InvalidArgument("option '--reason': only a nack keeps a reason (add --nack)");
  }
  if (args.Flag("batch")) {
    CQ_ASSIGN_OR_RETURN(std::vector<std::string> ids, BatchIds(args));
    return BatchRequests(args, nack, ids);
  }
  if (!args.operands().empty()) {
    return InvalidArgument(
        fmt::format("unexpected argument '{}' (several message ids as arguments need --batch)",
                    args.operands().front()));
  }
  if (!args.Has("msg-id")) {
    return InvalidArgument(
        "missing required option '--msg-id' (--msg-id=ID; several ids: --batch ID...)");
  }
  Request r{.op = "ackMsg",
            .params = {{"topic", Required(args, "topic")},
                       {"msgId", Required(args, "msg-id")},
                       {"ack", nack ? "false" : "true"}}};
  if (std::optional<std::string> reason = args.Get("reason"))
    r.params.emplace_back("reason", *reason);
  return One(std::move(r));
}

std::string Done(bool nack, std::string_view id, std::string_view topic) {
  return fmt::format("{} {} in topic {}", nack ? "nacked" : "acked", Printable(id),
                     Printable(topic));
}

std::string Render(bool ack_command, const client::Json& answer, const Request& sent,
                   const ParsedArgs& args) {
  bool nack = Nacks(ack_command, args);
  std::string topic = Required(args, "topic");
  if (sent.op == "ackMsg") {
    return Done(nack, Required(args, "msg-id"), topic) +
           (nack ? ": it is delivered again (unless that was its last delivery)\n" : "\n");
  }
  std::string out;
  for (const client::Json& item : answer["results"].items()) {
    const std::string& id = item["msgId"].AsString();
    if (item["code"].AsInt() == 200) {
      out += Done(nack, id, topic) + "\n";
    } else {
      out += fmt::format("not {} {}: {} (code {})\n", nack ? "nacked" : "acked", Printable(id),
                         Printable(item["msg"].AsString()), item["code"].AsInt());
    }
  }
  return out;
}

Command AckOrNack(bool ack) {
  std::vector<OptionSpec> options = {
      TopicOption(),
      {.name = "msg-id", .help = "the message's id (without --batch)", .value_name = "ID"},
      {.name = "batch",
       .help = "the ids given as arguments, else one per line on stdin (ackMsgBatch)",
       .flag = true}};
  if (ack) {
    options.push_back(
        {.name = "nack", .help = "nack them instead (as chronoq nack)", .flag = true});
  }
  options.push_back({.name = "reason",
                     .help = ack ? "with --nack: why, kept as the message's lastError"
                                 : "why, kept as the message's lastError",
                     .value_name = "TEXT"});
  return {
      .spec = {.name = ack ? "ack" : "nack",
               .summary = ack ? "acknowledge a pulled message: it is done"
                              : "give a pulled message back, to be delivered again now",
               .details = std::string(ack ? "Calls ackMsg with ack=true. Exit code 1 when the "
                                            "message does not exist or is not\ndelivered and "
                                            "unacked."
                                          : "Calls ackMsg with ack=false. Exit code 1 when the "
                                            "message does not exist or is not\nbeing consumed "
                                            "(status 3).") +
                          "\nWith --batch, calls ackMsgBatch (1,000 ids per request) and prints "
                          "each id's result;\nexit code 1 when any of them failed.",
               .options = std::move(options),
               .operands = "[ID...]"},
      .build = [ack](const ParsedArgs& args) { return Build(ack, args); },
      .render = [ack](const client::Json& answer, const Request& sent,
                      const ParsedArgs& args) { return Render(ack, answer, sent, args); },
      .failed_items = FailedResults,
  };
}

}  // namespace

Command AckCommand() { return AckOrNack(true); }
Command NackCommand() { return AckOrNack(false); }

}  // namespace chronoq::cli
