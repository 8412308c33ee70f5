// `chronoq topics` (getTopicInfoList) and `chronoq topic` (getTopicInfo).
#include <fmt/format.h>

#include "cli/command.h"
#include "cli/format.h"

namespace chronoq::cli {

namespace {

Result<std::vector<Request>> BuildList(const ParsedArgs&) {
  return One(Request{.method = Request::Method::kGet, .op = "getTopicInfoList"});
}

Result<std::vector<Request>> BuildOne(const ParsedArgs& args) {
  return One(Request{.method = Request::Method::kGet,
                     .op = "getTopicInfo",
                     .params = {{"topic", Required(args, "topic")}}});
}

std::string RenderList(const client::Json& answer, const Request&, const ParsedArgs&) {
  const std::vector<client::Json>& topics = answer["data"].items();
  if (topics.empty()) return "no topics\n";
  std::vector<std::vector<std::string>> rows = {{"TOPIC", "WAITING", "READY", "CONSUMING"}};
  for (const client::Json& t : topics) {
    rows.push_back({Printable(t["topic"].AsString()), std::to_string(t["waitingQueueSize"].AsInt()),
                    std::to_string(t["readyQueueSize"].AsInt()),
                    std::to_string(t["ackQueueSize"].AsInt())});
  }
  return Table(rows);
}

// waitingQueueInfo bucket names (API.md, getTopicInfo) and how they read.
constexpr std::pair<std::string_view, std::string_view> kBuckets[] = {
    {"sizeOf0To1min", "< 1min"},
    {"sizeOf1minTo10min", "1min - 10min"},
    {"sizeOf10minTo30min", "10min - 30min"},
    {"sizeOf30minTo1hour", "30min - 1h"},
    {"sizeOf1hourTo6hour", "1h - 6h"},
    {"sizeOf6hourTo1day", "6h - 1d"},
    {"sizeOf1dayTo7day", "1d - 7d"},
    {"sizeOf7dayTo30day", "7d - 30d"},
    {"sizeOf30dayToInfinite", ">= 30d"},
};

std::string RenderOne(const client::Json& answer, const Request&, const ParsedArgs&) {
  const client::Json& d = answer["data"];
  std::string out = fmt::format("topic      {}\n", Printable(d["topic"].AsString()));
  out += fmt::format("waiting    {}\n", d["waitingQueueSize"].AsInt());
  out += fmt::format("ready      {}\n", d["readyQueueSize"].AsInt());
  out += fmt::format("consuming  {}\n", d["ackQueueSize"].AsInt());
  std::vector<std::vector<std::string>> rows = {{"TRIGGER IN", "WAITING"}};
  const client::Json& info = d["waitingQueueInfo"];
  for (const auto& [key, label] : kBuckets) {
    rows.push_back({std::string(label), std::to_string(info[key].AsInt())});
  }
  return out + "\n" + Table(rows);
}

}  // namespace

Command TopicsCommand() {
  return {
      .spec = {.name = "topics",
               .summary = "list the known topics with their message counts",
               .details = "Calls getTopicInfoList. WAITING: before the trigger time; READY: "
                          "consumable; CONSUMING: "
                          "delivered, not yet acked."},
      .build = BuildList,
      .render = RenderList,
  };
}

Command TopicCommand() {
  return {
      .spec = {.name = "topic",
               .summary = "show one topic's counts and its waiting messages by delay",
               .details = "Calls getTopicInfo. An unknown topic shows all zero.",
               .options = {TopicOption()}},
      .build = BuildOne,
      .render = RenderOne,
  };
}

}  // namespace chronoq::cli
