// `chronoq list` and `chronoq peek`: listMsg (API-EXTENSIONS.md section 3), one page or, with
// --all, every page by following nextCursor.
#include <fmt/format.h>

#include <cctype>
#include <limits>

#include "cli/command.h"
#include "cli/format.h"

namespace chronoq::cli {

namespace {

constexpr int64_t kReady = 2;

// --status: a number (the server checks it is 1..7) or a status name in any case ("ready").
Result<std::string> StatusParam(std::string_view text) {
  for (int64_t s = 1; s <= 7; ++s) {
    std::string_view name = StatusName(s);
    if (text.size() == name.size() &&
        std::equal(text.begin(), text.end(), name.begin(), [](char a, char b) {
          return std::toupper(static_cast<unsigned char>(a)) == b;
        })) {
      return std::to_string(s);
    }
  }
  Result<int64_t> n =
      ParseInt(text, std::numeric_limits<int64_t>::min(), std::numeric_limits<int64_t>::max());
  if (!n.has_value()) {
    return InvalidArgument(fmt::format(
        "option '--status': '{}' is not a status (1..7, or a name such as WAITING, READY, "
        "CONSUMING)",
        text));
  }
  return std::to_string(*n);
}

Result<std::vector<Request>> Build(std::optional<int64_t> fixed_status, const ParsedArgs& args) {
  Request r{.method = Request::Method::kGet,
            .op = "listMsg",
            .params = {{"topic", Required(args, "topic")}}};
  if (fixed_status.has_value()) {
    r.params.emplace_back("status", std::to_string(*fixed_status));
  } else if (std::optional<std::string> status = args.Get("status")) {
    CQ_ASSIGN_OR_RETURN(std::string param, StatusParam(*status));
    r.params.emplace_back("status", param);
  }
  CQ_ASSIGN_OR_RETURN(std::optional<int64_t> limit,
                      IntOption(args, "limit", 1, std::numeric_limits<int32_t>::max()));
  if (limit.has_value()) r.params.emplace_back("limit", std::to_string(*limit));
  if (std::optional<std::string> cursor = args.Get("cursor")) {
    r.params.emplace_back("cursor", *cursor);
  }
  return One(std::move(r));
}

std::string_view CursorOf(const Request& r) {
  for (const auto& [name, value] : r.params) {
    if (name == "cursor") return value;
  }
  return {};
}

// With --all, the same request from the answer's nextCursor on; nothing after the last page.
std::optional<Request> Next(const Request& sent, const client::Json& answer,
                            const ParsedArgs& args) {
  const client::Json& cursor = answer["nextCursor"];
  if (!args.Flag("all") || cursor.type() != client::Json::Type::kString ||
      cursor.AsString().empty()) {
    return std::nullopt;
  }
  Request next = sent;
  std::erase_if(next.params, [](const auto& p) { return p.first == "cursor"; });
  next.params.emplace_back("cursor", cursor.AsString());
  return next;
}

std::string Nothing(const ParsedArgs& args, const Request& sent) {
  std::string topic = Printable(Required(args, "topic"));
  for (const auto& [name, value] : sent.params) {
    if (name != "status") continue;
    Result<int64_t> parsed = ParseInt(value, 1, 7);
    int64_t status = parsed.has_value() ? *parsed : 0;
    if (status == kReady) return fmt::format("no message ready in topic {}\n", topic);
    return fmt::format("no message with status {} ({}) in topic {}\n", StatusName(status), value,
                       topic);
  }
  return fmt::format("no message waiting, ready or being consumed in topic {}\n", topic);
}

std::string Render(const client::Json& answer, const Request& sent, const ParsedArgs& args) {
  // A page reached by --all, not the one the options asked for.
  bool later_page = CursorOf(sent) != args.Get("cursor").value_or("");
  const std::vector<client::Json>& list = answer["delayMsgList"].items();
  std::string out;
  if (list.empty() && !later_page) out = Nothing(args, sent);
  for (const client::Json& m : list) {
    if (!out.empty() || later_page) out += "\n";
    out += MessageBlock(m);
  }
  const client::Json& cursor = answer["nextCursor"];
  if (!args.Flag("all") && cursor.type() == client::Json::Type::kString) {
    out +=
        fmt::format("\n(more: the next page is --cursor={}, or give --all)\n", cursor.AsString());
  }
  return out;
}

std::vector<OptionSpec> PageOptions() {
  return {{.name = "limit",
           .help = "at most N messages per page (default 100; the server caps it at 1,000)",
           .value_name = "N"},
          {.name = "cursor",
           .help = "start where the previous page ended (its nextCursor)",
           .value_name = "CURSOR"},
          {.name = "all", .help = "every page to the end, following nextCursor", .flag = true}};
}

Command Make(CommandSpec spec, std::optional<int64_t> fixed_status) {
  return {
      .spec = std::move(spec),
      .build = [fixed_status](const ParsedArgs& args) { return Build(fixed_status, args); },
      .render = Render,
      .next = Next,
  };
}

}  // namespace

Command ListCommand() {
  std::vector<OptionSpec> options = {
      TopicOption(),
      {.name = "status",
       .help = "only this status: 1..7 or its name (default: WAITING, READY, CONSUMING)",
       .value_name = "STATUS"}};
  for (OptionSpec& o : PageOptions()) options.push_back(std::move(o));
  return Make({.name = "list",
               .summary = "list the messages of a topic, a page at a time",
               .details = "Calls listMsg. Order: waiting by trigger time, ready in the order a "
                          "pull takes them,\nconsuming by ack deadline, ended by end time. "
                          "Without --all, prints the cursor of the next page.\nWith --json, "
                          "prints one answer document per page (one per line).",
               .options = std::move(options)},
              std::nullopt);
}

Command PeekCommand() {
  std::vector<OptionSpec> options = {TopicOption()};
  for (OptionSpec& o : PageOptions()) options.push_back(std::move(o));
  return Make({.name = "peek",
               .summary = "show the messages the next pulls would take, without taking them",
               .details = "Calls listMsg with status=2 (READY): the consumable messages in the "
                          "order a pull delivers\nthem (highest priority first). Nothing is "
                          "delivered.",
               .options = std::move(options)},
              kReady);
}

}  // namespace chronoq::cli
