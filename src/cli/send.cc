// `chronoq send`: sendMsg.
#include <fmt/format.h>

#include <limits>

#include "cli/command.h"
#include "cli/format.h"
#include "cli/input.h"

namespace chronoq::cli {

namespace {

constexpr int64_t kInt32Max = std::numeric_limits<int32_t>::max();
constexpr int64_t kInt64Max = std::numeric_limits<int64_t>::max();

// --callback-url / --callback-grpc / --callback-kafka (at most one) as the callback parameter's
// JSON text (docs/push.md); the server checks every value and the allowlist.
Result<std::optional<std::string>> CallbackParam(const ParsedArgs& args) {
  std::optional<std::string> url = args.Get("callback-url");
  std::optional<std::string> grpc = args.Get("callback-grpc");
  std::optional<std::string> kafka = args.Get("callback-kafka");
  if (int(url.has_value()) + int(grpc.has_value()) + int(kafka.has_value()) > 1) {
    return InvalidArgument("give at most one of --callback-url, --callback-grpc, --callback-kafka");
  }
  std::string json;
  if (url) {
    json = R"({"type":"http","url":)" + JsonString(*url);
  } else if (grpc) {
    // TARGET/pkg.Service/Method: the target ends at the first '/'.
    size_t slash = grpc->find('/');
    if (slash == std::string::npos) {
      return InvalidArgument("--callback-grpc must be HOST:PORT/package.Service/Method");
    }
    json = R"({"type":"grpc","target":)" + JsonString(grpc->substr(0, slash)) + R"(,"method":)" +
           JsonString(grpc->substr(slash));
  } else if (kafka) {
    // BROKERS/TOPIC: the topic follows the last '/'.
    size_t slash = kafka->rfind('/');
    if (slash == std::string::npos) {
      return InvalidArgument("--callback-kafka must be BROKERS/TOPIC (host:port,host:port/topic)");
    }
    json = R"({"type":"kafka","brokers":)" + JsonString(kafka->substr(0, slash)) + R"(,"topic":)" +
           JsonString(kafka->substr(slash + 1));
  } else {
    if (args.Has("callback-timeout")) {
      return InvalidArgument(
          "--callback-timeout needs one of --callback-url, --callback-grpc, --callback-kafka");
    }
    return std::optional<std::string>();
  }
  CQ_ASSIGN_OR_RETURN(std::optional<std::chrono::milliseconds> timeout,
                      DurationOption(args, "callback-timeout", /*positive=*/true));
  if (timeout.has_value()) json += fmt::format(R"(,"timeoutMillis":{})", timeout->count());
  return std::optional<std::string>(json + "}");
}

Result<std::vector<Request>> Build(const ParsedArgs& args) {
  Request r{.op = "sendMsg"};
  r.params = {{"topic", Required(args, "topic")}, {"msg", Required(args, "msg")}};
  // delayMillis is required by the API; --trigger-time replaces it.
  if (!args.Has("delay") && !args.Has("trigger-time")) r.params.emplace_back("delayMillis", "0");
  CQ_RETURN_IF_ERROR(AddSettingParams(args, &r.params));
  CQ_ASSIGN_OR_RETURN(std::optional<int64_t> count_trigger,
                      IntOption(args, "count-trigger", 0, kInt32Max));
  if (count_trigger.has_value()) {
    r.params.emplace_back("countTrigger", std::to_string(*count_trigger));
  }
  if (std::optional<std::string> id = args.Get("msg-id")) r.params.emplace_back("msgId", *id);
  CQ_ASSIGN_OR_RETURN(std::optional<std::string> callback, CallbackParam(args));
  if (callback.has_value()) r.params.emplace_back("callback", *callback);
  return One(std::move(r));
}

std::string Render(const client::Json& answer, const Request&, const ParsedArgs&) {
  const client::Json& m = answer["delayMsg"];
  return fmt::format("sent {} to topic {}: {}\n", Printable(m["msgId"].AsString()),
                     Printable(m["topic"].AsString()), StateLine(m));
}

// The send changed nothing: say so first, then what is stored.
std::string RenderExisting(const client::Json& answer, const Request&, const ParsedArgs&) {
  const client::Json& m = answer["delayMsg"];
  return fmt::format(
      "not sent: {} is already in topic {} ({}); nothing was stored. The existing message "
      "triggers at {}, expires at {}\n",
      Printable(m["msgId"].AsString()), Printable(m["topic"].AsString()),
      StatusName(m["status"].AsInt()), IsoUtc(m["triggerTime"].AsInt()),
      IsoUtc(m["expireTime"].AsInt()));
}

}  // namespace

Status AddSettingParams(const ParsedArgs& args, Params* params) {
  CQ_ASSIGN_OR_RETURN(std::optional<std::chrono::milliseconds> delay,
                      DurationOption(args, "delay"));
  if (delay.has_value()) params->emplace_back("delayMillis", std::to_string(delay->count()));
  // Both --delay and --trigger-time go to the server, whose answer names both (one rule, kept
  // there).
  CQ_ASSIGN_OR_RETURN(std::optional<int64_t> trigger_time,
                      IntOption(args, "trigger-time", 0, kInt64Max));
  if (trigger_time.has_value()) params->emplace_back("triggerTime", std::to_string(*trigger_time));
  CQ_ASSIGN_OR_RETURN(std::optional<std::chrono::milliseconds> ttl,
                      DurationOption(args, "ttl", /*positive=*/true));
  if (ttl.has_value()) params->emplace_back("ttlMillis", std::to_string(ttl->count()));
  CQ_ASSIGN_OR_RETURN(std::optional<int64_t> max_retry, IntOption(args, "max-retry", 0, kInt32Max));
  if (max_retry.has_value()) params->emplace_back("maxRetry", std::to_string(*max_retry));
  // Any whole number: the server owns the range (0..9) and says it when one is outside.
  CQ_ASSIGN_OR_RETURN(std::optional<int64_t> priority,
                      IntOption(args, "priority", std::numeric_limits<int64_t>::min(), kInt64Max));
  if (priority.has_value()) params->emplace_back("priority", std::to_string(*priority));
  return Status();
}

Command SendCommand() {
  return {
      .spec = {.name = "send",
               .summary = "send a message that becomes consumable after a delay",
               .details = "Calls sendMsg. Prints the message's id, status and trigger and expire "
                          "times (UTC).\n"
                          "Sending again with the same --msg-id while the message is in life "
                          "changes nothing:\nit prints \"not sent\" and the existing message's "
                          "times (exit code 0).",
               .options =
                   {TopicOption(),
                    {.name = "msg", .help = "the payload", .required = true, .value_name = "TEXT"},
                    {.name = "delay",
                     .help = "consumable after this long (default 0: now)",
                     .value_name = "DURATION"},
                    {.name = "trigger-time",
                     .help = "consumable at this time, ms since the epoch (instead of --delay)",
                     .value_name = "MS"},
                    {.name = "ttl",
                     .help = "ends this long after its trigger time (default: the server's, 1h)",
                     .value_name = "DURATION"},
                    {.name = "max-retry",
                     .help = "at most N+1 deliveries (default: the server's, 10)",
                     .value_name = "N"},
                    {.name = "priority",
                     .help =
                         "0..9; among consumable messages, higher is delivered first (default 0)",
                     .value_name = "N"},
                    {.name = "count-trigger",
                     .help = "consumable once counted N times (chronoq count), or at its trigger "
                             "time",
                     .value_name = "N"},
                    {.name = "msg-id",
                     .help = "the message's id (default: the server generates one)",
                     .value_name = "ID"},
                    {.name = "callback-url",
                     .help = "push it at its trigger time with an HTTP POST of the message "
                             "object to URL instead of waiting for a pull (docs/push.md)",
                     .value_name = "URL"},
                    {.name = "callback-grpc",
                     .help = "push it with a unary gRPC call of the payload's bytes, e.g. "
                             "127.0.0.1:50051/pkg.Orders/Cancel",
                     .value_name = "TARGET/METHOD"},
                    {.name = "callback-kafka",
                     .help = "push it as a Kafka record (key: the msgId), e.g. "
                             "k1:9092,k2:9092/orders",
                     .value_name = "BROKERS/TOPIC"},
                    {.name = "callback-timeout",
                     .help = "the whole push call's timeout (default 5s)",
                     .value_name = "DURATION"}}},
      .build = Build,
      .render = Render,
      .render_existing = RenderExisting,
  };
}

}  // namespace chronoq::cli
