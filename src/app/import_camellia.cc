#include "app/import_camellia.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstdio>
#include <optional>

#include "app/redis_client.h"
#include "cli/data.h"
#include "client/json.h"
#include "http/json_writer.h"
#include "redis/redis_url.h"

namespace chronoq::app {
namespace {

using redis::RedisReply;

constexpr int64_t kChunk = 1000;  // entries read per command, strings per pipeline

cli::CommandSpec Spec() {
  return {.name = "import-camellia",
          .summary = "Copy a camellia-delay-queue deployment's messages in life from its Redis",
          .details =
              "Reads camellia's keys under --namespace (camellia_delay_queue_topics|<ns>, then per "
              "topic the waiting and ack sorted sets, the ready list and each message's string) "
              "and imports every message in life with its msgId, payload, trigger and expire "
              "times, retry count and status (waiting, ready, consuming with its ack deadline) "
              "through importMsgBatch. Idempotent: a msgId already in life in chronoq is "
              "skipped. A message whose string is missing or not JSON is reported and skipped. "
              "Camellia is only read. Stop camellia's producers and consumers first (or point "
              "them at chronoq): a message that moves while it is read may be missed.",
          .options = {{.name = "redis-url",
                       .help = "camellia's Redis: redis://, redis-sentinel:// or redis-cluster:// "
                               "(as chronoq serve's --redis-url)",
                       .required = true,
                       .value_name = "URL"},
                      {.name = "namespace",
                       .help = "camellia's namespace (its delay-queue namespace setting)",
                       .required = true,
                       .value_name = "NS"},
                      {.name = "topic",
                       .help = "only this topic (default: every topic camellia lists)",
                       .value_name = "NAME"},
                      {.name = "dry-run",
                       .help = "print what would be imported and change nothing",
                       .flag = true}}};
}

// camellia-delay-queue's keys (API-EXTENSIONS.md section 8).
std::string TopicsKey(const std::string& ns) { return "camellia_delay_queue_topics|" + ns; }
std::string QueueKey(std::string_view kind, const std::string& ns, const std::string& topic) {
  return fmt::format("camellia_delay_queue_{}|{{|{}|{}|}}", kind, ns, topic);
}
std::string MsgKey(const std::string& ns, const std::string& topic, const std::string& id) {
  return fmt::format("camellia_delay_queue_msg|{}|{}|{}", ns, topic, id);
}

// One message found in a camellia queue.
struct Found {
  std::string id;
  int status = 1;                // 1 waiting, 2 ready, 3 consuming
  std::optional<int64_t> score;  // waiting: trigger time; consuming: ack deadline
};

const char* StatusWord(int status) {
  return status == 1 ? "waiting" : status == 2 ? "ready" : "consuming";
}

// The import line (chronoq export's format) of camellia's message string `text` found in
// `f.status`'s queue of `topic`, or why it cannot be one.
Result<std::string> ImportLine(const std::string& topic, const Found& f, const std::string& text) {
  Result<client::Json> parsed = client::Json::Parse(text);
  if (!parsed.has_value() || !parsed->is_object()) {
    return InvalidArgument(fmt::format("its string is not a JSON object{}",
                                       parsed.has_value() ? "" : ": " + parsed.error().message()));
  }
  const client::Json& m = *parsed;
  http::JsonWriter w;
  w.BeginObject().Str("topic", topic).Str("msgId", f.id);
  // A field of another type is passed as a string: importMsgBatch names it in its refusal.
  auto copy = [&](std::string_view name, std::optional<int64_t> value = std::nullopt) {
    const client::Json& v = m[name];
    if (value) {
      w.Num(name, *value);
    } else if (v.type() == client::Json::Type::kNumber) {
      w.Num(name, v.AsInt());
    } else if (v.type() == client::Json::Type::kString) {
      w.Str(name, v.AsString());
    }
  };
  copy("msg");
  copy("produceTime");
  copy("triggerTime", f.status == 1 ? f.score : std::nullopt);
  copy("expireTime");
  copy("maxRetry");
  // A delivery has been delivered at least once, whatever the string says.
  const int64_t retry = m["retry"].AsInt();
  copy("retry", f.status == 3 ? std::optional<int64_t>(std::max<int64_t>(retry, 1)) : std::nullopt);
  w.Num("status", f.status);
  if (f.status == 3 && f.score) w.Num("ackDeadline", *f.score);
  return w.EndObject().Take();
}

}  // namespace

int RunImportCamellia(const std::vector<std::string>& args) {
  const cli::CommandSpec spec = Spec();
  Result<cli::ParsedArgs> parsed = cli::ParseArgs(spec, args);
  if (parsed.has_value() && parsed->help()) {
    std::fputs(cli::HelpText(spec).c_str(), stdout);
    return cli::kExitOk;
  }
  auto usage = [](const std::string& msg) {
    std::fprintf(stderr,
                 "chronoq import-camellia: %s\n(chronoq import-camellia --help shows the "
                 "options)\n",
                 msg.c_str());
    return cli::kExitUsage;
  };
  if (!parsed.has_value()) return usage(parsed.error().message());
  Result<cli::Session> session = cli::Session::FromArgs(*parsed);
  if (!session.has_value()) return usage(session.error().message());
  Result<redis::RedisUrl> url = redis::ParseRedisUrl(*parsed->Get("redis-url"));
  if (!url.has_value()) return usage("--redis-url: " + url.error().message());
  const std::string ns = *parsed->Get("namespace");
  if (ns.empty()) return usage("--namespace is empty; give camellia's namespace");
  const bool dry_run = parsed->Flag("dry-run");
  auto unreachable = [](const std::string& what, const Status& s) {
    std::fprintf(stderr, "chronoq import-camellia: %s: %s\n", what.c_str(), s.message().c_str());
    return cli::kExitUnreachable;
  };

  RedisClient reader(*url);
  if (!reader.error().ok()) return unreachable("camellia's Redis", reader.error());
  std::vector<std::string> topics;
  if (std::optional<std::string> only = parsed->Get("topic")) {
    topics.push_back(*only);
  } else {
    Result<RedisReply> listed = reader.One(TopicsKey(ns), {"ZRANGE", TopicsKey(ns), "0", "-1"});
    if (!listed.has_value()) return unreachable("reading " + TopicsKey(ns), listed.error());
    for (const RedisReply& t : listed->elements) topics.push_back(t.str);
  }

  cli::Importer importer(*session, stderr);
  int64_t unreadable = 0, found_total = 0;
  // Imports (or, dry, prints) one chunk of one queue: reads the strings in one pipeline.
  auto take = [&](const std::string& topic, std::vector<Found> chunk) -> int {
    std::vector<std::pair<std::string, std::vector<std::string>>> gets;
    for (const Found& f : chunk) {
      std::string key = MsgKey(ns, topic, f.id);
      gets.emplace_back(key, std::vector<std::string>{"GET", key});
    }
    Result<std::vector<RedisReply>> strings = reader.Run(std::move(gets));
    if (!strings.has_value()) return unreachable("reading messages of " + topic, strings.error());
    for (size_t i = 0; i < chunk.size(); ++i) {
      const Found& f = chunk[i];
      ++found_total;
      const std::string label = fmt::format("{}/{} ({})", topic, f.id, StatusWord(f.status));
      if ((*strings)[i].is_nil()) {
        ++unreadable;
        std::fprintf(stderr, "%s: skipped: its string %s is missing\n", label.c_str(),
                     MsgKey(ns, topic, f.id).c_str());
        continue;
      }
      Result<std::string> line = ImportLine(topic, f, (*strings)[i].str);
      if (!line.has_value()) {
        ++unreadable;
        std::fprintf(stderr, "%s: skipped: %s\n", label.c_str(), line.error().message().c_str());
        continue;
      }
      if (dry_run) {
        std::printf("would import %s: %s\n", label.c_str(), line->c_str());
      } else if (!importer.Add(label, std::move(*line))) {
        return unreachable("importing into " + session->server,
                           Status(Errc::kUnavailable, importer.error()));
      }
    }
    return cli::kExitOk;
  };
  for (const std::string& topic : topics) {
    // Consuming first, then ready, then waiting: a message seen in two queues (it moved while
    // being read) is imported in the first and skipped after.
    for (int status : {3, 2, 1}) {
      const std::string key = QueueKey(status == 3   ? "ack"
                                       : status == 2 ? "ready"
                                                     : "waiting",
                                       ns, topic);
      for (int64_t start = 0;; start += kChunk) {
        const std::string from = std::to_string(start), to = std::to_string(start + kChunk - 1);
        Result<RedisReply> page = status == 2
                                      ? reader.One(key, {"LRANGE", key, from, to})
                                      : reader.One(key, {"ZRANGE", key, from, to, "WITHSCORES"});
        if (!page.has_value()) return unreachable("reading " + key, page.error());
        std::vector<Found> chunk;
        const auto& e = page->elements;
        const size_t step = status == 2 ? 1 : 2;
        for (size_t i = 0; i + step - 1 < e.size(); i += step) {
          Found f{e[i].str, status, std::nullopt};
          if (step == 2) f.score = static_cast<int64_t>(std::stod(e[i + 1].str));
          chunk.push_back(std::move(f));
        }
        if (chunk.empty()) break;
        const size_t n = chunk.size();
        if (int rc = take(topic, std::move(chunk)); rc != cli::kExitOk) return rc;
        if (n < static_cast<size_t>(kChunk)) break;
      }
    }
  }
  if (!dry_run && !importer.Finish()) {
    return unreachable("importing into " + session->server,
                       Status(Errc::kUnavailable, importer.error()));
  }
  if (dry_run) {
    std::printf(
        "dry run: would import %lld of %lld messages of %zu topics; %lld skipped "
        "(string missing or not JSON); nothing was changed\n",
        static_cast<long long>(found_total - unreadable), static_cast<long long>(found_total),
        topics.size(), static_cast<long long>(unreadable));
    return unreadable > 0 ? cli::kExitRefused : cli::kExitOk;
  }
  std::printf(
      "imported %lld, skipped %lld (already there), refused %lld, unreadable %lld "
      "(string missing or not JSON), of %lld messages in %zu topics\n",
      static_cast<long long>(importer.imported()), static_cast<long long>(importer.skipped()),
      static_cast<long long>(importer.refused()), static_cast<long long>(unreadable),
      static_cast<long long>(found_total), topics.size());
  return importer.refused() + unreadable > 0 ? cli::kExitRefused : cli::kExitOk;
}

}  // namespace chronoq::app
