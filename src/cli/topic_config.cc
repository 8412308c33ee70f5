// The subcommands of API-EXTENSIONS.md section 4: `chronoq topic-config get|set|delete`
// (getTopicConfig, setTopicConfig, deleteTopicConfig), `chronoq pause|resume` (pauseTopic,
// resumeTopic), `chronoq purge` (purgeTopic) and `chronoq redrive` (redriveMsg).
#include <fmt/format.h>

#include <limits>

#include "cli/command.h"
#include "cli/format.h"

namespace chronoq::cli {

namespace {

constexpr int64_t kMaxInt = std::numeric_limits<int64_t>::max();

// The settings of `topic-config set`: option, API parameter, and whether it is a duration.
struct Setting {
  std::string_view option;
  std::string_view param;
  bool duration;
};
constexpr Setting kSettings[] = {
    {"capacity", "capacity", false},
    {"ttl-millis", "ttlMillis", true},
    {"max-retry", "maxRetry", false},
    {"ack-timeout-millis", "ackTimeoutMillis", true},
    {"retry-interval-millis", "retryIntervalMillis", true},
    {"dead-letter-topic", "deadLetterTopic", false},
    {"paused", "paused", false},
};

Result<std::vector<Request>> BuildTopicConfig(const ParsedArgs& args) {
  const std::vector<std::string>& verbs = args.operands();
  if (verbs.size() != 1 || (verbs[0] != "get" && verbs[0] != "set" && verbs[0] != "delete")) {
    return InvalidArgument(
        "give one of get, set, delete: chronoq topic-config get|set|delete --topic=NAME");
  }
  const std::string& verb = verbs[0];
  Params params = {{"topic", Required(args, "topic")}};
  bool any = false;
  for (const Setting& s : kSettings) {
    std::optional<std::string> v = args.Get(s.option);
    if (!v) continue;
    if (verb != "set") {
      return InvalidArgument(fmt::format("--{} is for topic-config set, not {}", s.option, verb));
    }
    any = true;
    if (s.duration) {
      // Plain digits are milliseconds; units are welcome (--ttl-millis=1h).
      CQ_ASSIGN_OR_RETURN(std::optional<std::chrono::milliseconds> d,
                          DurationOption(args, s.option));
      params.emplace_back(std::string(s.param), std::to_string(d->count()));
    } else if (s.option == "capacity" || s.option == "max-retry") {
      CQ_ASSIGN_OR_RETURN(std::optional<int64_t> n, IntOption(args, s.option, 0, kMaxInt));
      params.emplace_back(std::string(s.param), std::to_string(*n));
    } else if (s.option == "paused" && *v != "true" && *v != "false") {
      return InvalidArgument(fmt::format("--paused must be true or false, got '{}'", *v));
    } else {
      params.emplace_back(std::string(s.param), *v);
    }
  }
  if (verb == "set" && !any) {
    return InvalidArgument(
        "topic-config set needs at least one of --capacity, --ttl-millis, --max-retry, "
        "--ack-timeout-millis, --retry-interval-millis, --dead-letter-topic, --paused");
  }
  if (verb == "get") {
    return One(Request{
        .method = Request::Method::kGet, .op = "getTopicConfig", .params = std::move(params)});
  }
  return One(Request{.op = verb == "set" ? "setTopicConfig" : "deleteTopicConfig",
                     .params = std::move(params)});
}

// The topic's configuration: one row per field with its value and the layer it came from.
std::string RenderConfig(const client::Json& answer) {
  const client::Json& c = answer["topicConfig"];
  const client::Json& sources = c["sources"];
  std::vector<std::vector<std::string>> rows = {{"SETTING", "VALUE", "FROM"}};
  for (const Setting& s : kSettings) {
    const client::Json& v = c[s.param];
    using T = client::Json::Type;
    std::string text = v.type() == T::kString ? Printable(v.AsString())
                       : v.type() == T::kBool ? (v.AsBool() ? "true" : "false")
                                              : std::to_string(v.AsInt());
    if (s.param == "deadLetterTopic" && text.empty()) text = "(none)";
    if (s.param == "capacity" && text == "0") text = "0 (unlimited)";
    rows.push_back({std::string(s.param), text, sources[s.param].AsString()});
  }
  return fmt::format("topic {}\n", Printable(c["topic"].AsString())) + Table(rows);
}

std::string RenderTopicConfig(const client::Json& answer, const Request& sent, const ParsedArgs&) {
  if (sent.op == "deleteTopicConfig") {
    return fmt::format(
        "topic {}: stored configuration deleted (the config file's and the "
        "server's defaults apply)\n",
        Printable(sent.params.front().second));
  }
  return RenderConfig(answer);
}

Result<std::vector<Request>> BuildPause(const ParsedArgs& args) {
  return One(Request{.op = "pauseTopic", .params = {{"topic", Required(args, "topic")}}});
}

Result<std::vector<Request>> BuildResume(const ParsedArgs& args) {
  return One(Request{.op = "resumeTopic", .params = {{"topic", Required(args, "topic")}}});
}

std::string RenderPaused(const client::Json& answer, const Request&, const ParsedArgs&) {
  const client::Json& c = answer["topicConfig"];
  return fmt::format("topic {} {}\n", Printable(c["topic"].AsString()),
                     c["paused"].AsBool() ? "paused: sends are stored, pulls get nothing"
                                          : "resumed: pulls get its messages again");
}

Result<std::vector<Request>> BuildPurge(const ParsedArgs& args) {
  Request r{.op = "purgeTopic", .params = {{"topic", Required(args, "topic")}}};
  CQ_ASSIGN_OR_RETURN(std::optional<int64_t> status, IntOption(args, "status", 1, 3));
  if (status) r.params.emplace_back("status", std::to_string(*status));
  return One(std::move(r));
}

Result<std::vector<Request>> BuildRedrive(const ParsedArgs& args) {
  Request r{.op = "redriveMsg", .params = {{"topic", Required(args, "topic")}}};
  if (std::optional<std::string> id = args.Get("msg-id")) r.params.emplace_back("msgId", *id);
  CQ_ASSIGN_OR_RETURN(std::optional<int64_t> limit, IntOption(args, "limit", 1, 1000));
  if (limit) r.params.emplace_back("limit", std::to_string(*limit));
  CQ_ASSIGN_OR_RETURN(std::optional<std::chrono::milliseconds> delay,
                      DurationOption(args, "delay-millis"));
  if (delay) r.params.emplace_back("delayMillis", std::to_string(delay->count()));
  return One(std::move(r));
}

// "purged 3 messages from topic t" / "redriven 1 message from topic t.dlq".
std::string Counted(std::string_view verb, std::string_view key, const client::Json& answer,
                    const Request& sent) {
  const int64_t n = answer[key].AsInt();
  return fmt::format("{} {} message{} {} topic {}\n", verb, n, n == 1 ? "" : "s",
                     verb == "redriven" ? "from dead-letter" : "from",
                     Printable(sent.params.front().second));
}

}  // namespace

Command TopicConfigCommand() {
  std::vector<OptionSpec> options = {TopicOption()};
  options.push_back({.name = "capacity",
                     .help = "set: most messages in life (0: unlimited); a send beyond gets code "
                             "429",
                     .value_name = "N"});
  options.push_back({.name = "ttl-millis",
                     .help = "set: default ttl of the topic's messages (ms, or 30s, 1h...)",
                     .value_name = "MS"});
  options.push_back({.name = "max-retry", .help = "set: default maxRetry", .value_name = "N"});
  options.push_back({.name = "ack-timeout-millis",
                     .help = "set: default ack timeout (ms, or 30s...)",
                     .value_name = "MS"});
  options.push_back({.name = "retry-interval-millis",
                     .help = "set: wait before a nacked or timed-out message is ready again",
                     .value_name = "MS"});
  options.push_back({.name = "dead-letter-topic",
                     .help = "set: where expired and exhausted messages go (empty: none)",
                     .value_name = "NAME"});
  options.push_back({.name = "paused",
                     .help = "set: true stops deliveries (sends are still stored), false resumes",
                     .value_name = "BOOL"});
  return {
      .spec = {.name = "topic-config",
               .summary = "get, set or delete a topic's configuration",
               .details =
                   "Calls getTopicConfig, setTopicConfig or deleteTopicConfig. get and set print "
                   "every setting\nwith the layer it came from: topic (stored by set), file (the "
                   "server's [topics.<name>]\ntable) or server (its defaults). delete returns the "
                   "topic to the file's and the server's\ndefaults. Durations are milliseconds or "
                   "take a unit (ms, s, m, h, d).",
               .options = std::move(options),
               .operands = "get|set|delete"},
      .build = BuildTopicConfig,
      .render = RenderTopicConfig,
  };
}

Command PauseCommand() {
  return {
      .spec = {.name = "pause",
               .summary = "stop deliveries of a topic (sends are still stored)",
               .details = "Calls pauseTopic: pulls and long polls of the topic get nothing until "
                          "`chronoq resume`.\nDurable; on Redis every node stops at once.",
               .options = {TopicOption()}},
      .build = BuildPause,
      .render = RenderPaused,
  };
}

Command ResumeCommand() {
  return {
      .spec = {.name = "resume",
               .summary = "resume deliveries of a paused topic",
               .details = "Calls resumeTopic; parked long polls get the topic's messages at once.",
               .options = {TopicOption()}},
      .build = BuildResume,
      .render = RenderPaused,
  };
}

Command PurgeCommand() {
  return {
      .spec = {.name = "purge",
               .summary = "delete every in-life message of a topic",
               .details = "Calls purgeTopic: each message waiting, ready or consuming (or only "
                          "those in --status)\nis deleted as deleteMsg would. Cannot be undone.",
               .options = {TopicOption(),
                           {.name = "status",
                            .help = "only messages in this status: 1 waiting, 2 ready, 3 consuming",
                            .value_name = "1|2|3"}}},
      .build = BuildPurge,
      .render = [](const client::Json& answer, const Request& sent,
                   const ParsedArgs&) { return Counted("purged", "purged", answer, sent); },
  };
}

Command RedriveCommand() {
  return {
      .spec = {.name = "redrive",
               .summary = "send dead letters back to their source topics",
               .details =
                   "Calls redriveMsg on a dead-letter topic: each ready dead letter (the "
                   "one --msg-id, or up\nto --limit, oldest first) goes back to the topic it "
                   "came from as a new message (retry 0)\nand leaves the dead-letter topic, "
                   "in one write.",
               .options = {TopicOption(),
                           {.name = "msg-id", .help = "only this dead letter", .value_name = "ID"},
                           {.name = "limit",
                            .help = "at most N dead letters (default 100)",
                            .value_name = "N"},
                           {.name = "delay-millis",
                            .help = "consumable in the source topic after this delay (default 0)",
                            .value_name = "DURATION"}}},
      .build = BuildRedrive,
      .render = [](const client::Json& answer, const Request& sent,
                   const ParsedArgs&) { return Counted("redriven", "redriven", answer, sent); },
  };
}

}  // namespace chronoq::cli
