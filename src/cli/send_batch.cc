// `chronoq send-batch`: sendMsgBatch for JSON lines read from a file or stdin, one sendMsg object
// (without topic) per line, in requests of at most kMaxBatchItems messages.
#include <fmt/format.h>

#include "cli/command.h"
#include "cli/format.h"
#include "cli/input.h"

namespace chronoq::cli {

namespace {

// A line that can go into a sendMsgBatch `msgs` array as it is; else why not. The server checks
// the fields; this only keeps a typo on line 5,000 from storing the 4,999 lines before it.
Status CheckLine(const InputLine& line, std::string_view topic) {
  Result<client::Json> item = client::Json::Parse(line.text);
  if (!item.has_value()) {
    return InvalidArgument(
        fmt::format("line {}: not JSON: {}", line.number, item.error().message()));
  }
  if (!item->is_object()) {
    return InvalidArgument(
        fmt::format("line {}: not a JSON object (each line is one sendMsg object, such as "
                    "{{\"msg\":\"hi\",\"delayMillis\":0}})",
                    line.number));
  }
  // The server takes a topic equal to the batch's; another one would be a surprise to find out
  // about from the server after the lines before it were stored.
  if (item->Has("topic") && (*item)["topic"].AsString() != topic) {
    return InvalidArgument(
        fmt::format("line {}: has another topic; every message goes to --topic (remove the "
                    "topic from the line)",
                    line.number));
  }
  return Status();
}

Result<std::vector<Request>> Build(const ParsedArgs& args) {
  std::string file = args.Get("file").value_or("-");
  CQ_ASSIGN_OR_RETURN(std::string text, ReadInput(file, "--file"));
  std::vector<InputLine> lines = NonBlankLines(text);
  if (lines.empty()) {
    return InvalidArgument(fmt::format("no messages in {}: give one JSON object per line",
                                       file == "-" ? "stdin" : "'" + file + "'"));
  }
  std::string topic = Required(args, "topic");
  for (const InputLine& line : lines) CQ_RETURN_IF_ERROR(CheckLine(line, topic));

  std::string head = fmt::format("{{\"topic\":{},\"msgs\":[", JsonString(topic));
  std::vector<Request> requests;
  for (size_t begin = 0; begin < lines.size(); begin += kMaxBatchItems) {
    size_t end = std::min(lines.size(), begin + kMaxBatchItems);
    Request r{.op = "sendMsgBatch", .json = head};
    for (size_t i = begin; i < end; ++i) {
      if (i > begin) r.json += ",";
      r.json += lines[i].text;
      r.lines.push_back(lines[i].number);
    }
    r.json += "]}";
    requests.push_back(std::move(r));
  }
  return requests;
}

// The server names an item by its place in its request ("msgs[3]: delayMillis is missing"); the
// line number said before it is what the user can find.
std::string_view WithoutItemPrefix(std::string_view msg) {
  if (msg.rfind("msgs[", 0) != 0) return msg;
  size_t end = msg.find("]: ");
  return end == std::string_view::npos ? msg : msg.substr(end + 3);
}

std::string Render(const client::Json& answer, const Request& sent, const ParsedArgs&) {
  std::string out;
  const std::vector<client::Json>& results = answer["results"].items();
  for (size_t i = 0; i < results.size(); ++i) {
    const client::Json& item = results[i];
    std::string where = i < sent.lines.size() ? fmt::format("line {}", sent.lines[i])
                                              : fmt::format("item {}", i + 1);
    const client::Json& m = item["delayMsg"];
    if (item["code"].AsInt() == 200 && item["existing"].AsBool()) {
      // As `chronoq send` says it: not an error, but nothing new.
      out += fmt::format("{}: not sent: {} is already in the topic ({}); nothing was stored\n",
                         where, Printable(m["msgId"].AsString()), StatusName(m["status"].AsInt()));
    } else if (item["code"].AsInt() == 200) {
      out +=
          fmt::format("{}: sent {}: {}\n", where, Printable(m["msgId"].AsString()), StateLine(m));
    } else {
      out +=
          fmt::format("{}: not sent: {} (code {})\n", where,
                      Printable(WithoutItemPrefix(item["msg"].AsString())), item["code"].AsInt());
    }
  }
  return out;
}

}  // namespace

Command SendBatchCommand() {
  return {
      .spec = {.name = "send-batch",
               .summary = "send many messages read as JSON lines from a file or stdin",
               .details =
                   "Calls sendMsgBatch, 1,000 messages per request (each request is stored "
                   "atomically).\nEach line is one sendMsg object without topic, e.g.\n"
                   "  {\"msg\":\"hi\",\"delayMillis\":30000,\"msgId\":\"o-1\",\"priority\":5}\n"
                   "Blank lines are skipped. Every line is checked to be a JSON object before "
                   "anything is sent.\nPrints each line's result; exit code 1 when any message "
                   "was refused.",
               .options = {TopicOption(),
                           {.name = "file",
                            .help = "read the JSON lines from this file (default -: stdin)",
                            .value_name = "PATH"}}},
      .build = Build,
      .render = Render,
      .failed_items = FailedResults,
  };
}

}  // namespace chronoq::cli
