// `chronoq monitor`: getMonitorData.
#include <fmt/format.h>

#include "cli/command.h"
#include "cli/format.h"

namespace chronoq::cli {

namespace {

Result<std::vector<Request>> Build(const ParsedArgs&) {
  return One(Request{.method = Request::Method::kGet, .op = "getMonitorData"});
}

std::string RequestStats(const std::vector<client::Json>& list) {
  std::vector<std::vector<std::string>> rows = {
      {"TOPIC", "SEND", "PULL", "ACK", "GET", "DELETE", "READY", "ENDED", "ACK-TIMEOUT"}};
  for (const client::Json& s : list) {
    std::vector<std::string> row = {Printable(s["topic"].AsString())};
    for (const char* key : {"sendMsg", "pullMsg", "ackMsg", "getMsg", "deleteMsg",
                            "triggerMsgReady", "triggerMsgEndLife", "triggerMsgTimeout"}) {
      row.push_back(std::to_string(s[key].AsInt()));
    }
    rows.push_back(std::move(row));
  }
  return Table(rows);
}

std::string GapStats(const std::vector<client::Json>& list) {
  std::vector<std::vector<std::string>> rows = {{"TOPIC", "COUNT", "AVG MS", "MAX MS"}};
  for (const client::Json& s : list) {
    rows.push_back({Printable(s["topic"].AsString()), std::to_string(s["count"].AsInt()),
                    fmt::format("{:.1f}", s["avg"].AsDouble()), std::to_string(s["max"].AsInt())});
  }
  return Table(rows);
}

std::string Render(const client::Json& answer, const Request&, const ParsedArgs&) {
  const client::Json& d = answer["data"];
  const auto& requests = d["requestStatsList"].items();
  const auto& pull_gaps = d["pullMsgTimeGapStatsList"].items();
  const auto& ready_gaps = d["readyQueueTimeGapStatsList"].items();
  if (requests.empty() && pull_gaps.empty() && ready_gaps.empty()) {
    return "nothing counted in the last monitor interval (or the first one has not ended yet)\n";
  }
  std::string out = "Requests answered with code 200 and timer events, last interval:\n";
  out += RequestStats(requests);
  out += "\nDelivery time - trigger time (pulls):\n";
  out += GapStats(pull_gaps);
  out += "\nConsumable time - trigger time (server lateness):\n";
  out += GapStats(ready_gaps);
  return out;
}

}  // namespace

Command MonitorCommand() {
  return {
      .spec = {.name = "monitor",
               .summary = "show per-topic statistics of the last monitor interval",
               .details =
                   "Calls getMonitorData. Statistics cover this node's last completed interval of "
                   "monitor-interval-seconds (60 by default)."},
      .build = Build,
      .render = Render,
  };
}

}  // namespace chronoq::cli
