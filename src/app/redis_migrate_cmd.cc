#include "app/redis_migrate_cmd.h"

#include <fmt/format.h>

#include <cstdio>
#include <optional>

#include "app/redis_client.h"
#include "base/clock.h"
#include "cli/args.h"
#include "cli/call.h"
#include "redis/redis_migrate.h"
#include "redis/redis_url.h"

namespace chronoq::app {
namespace {

cli::CommandSpec Spec() {
  return {.name = "redis-migrate",
          .summary = "Move a Redis namespace's topics to redis-format 4 (offline)",
          .details =
              "Moves every topic of --namespace (or the one --topic) from the keys of redis-format "
              "1-3 to those of format 4 (docs/redis.md \"Migration from layouts 1-3\"), each "
              "message with its state: waiting, ready, delivered (an ack after the migration "
              "succeeds), ended, dead-letter outbox, history. While a topic moves, nodes answer "
              "its requests with code 503; stop the namespace's nodes first (or leave the topics "
              "unused). Every node must be of a build that reads format 4. A run stopped at any "
              "point (Ctrl-C, a lost connection) can be started again and finishes the job: "
              "nothing is lost or doubled. There is no way back to formats 1-3.",
          .options = {{.name = "redis-url",
                       .help = "the namespace's Redis: redis://, redis-sentinel:// or "
                               "redis-cluster://, user and password included (as chronoq serve's "
                               "--redis-url)",
                       .required = true,
                       .value_name = "URL"},
                      {.name = "namespace",
                       .help = "the nodes' namespace (their namespace setting)",
                       .required = true,
                       .value_name = "NS"},
                      {.name = "topic",
                       .help = "only this topic (default: every topic of the namespace)",
                       .value_name = "NAME"},
                      {.name = "batch",
                       .help = "messages moved per Redis script call, 1..10000 (default 1000): "
                               "Redis runs nothing else meanwhile",
                       .value_name = "N"}}};
}

}  // namespace

int RunRedisMigrate(const std::vector<std::string>& args) {
  const cli::CommandSpec spec = Spec();
  Result<cli::ParsedArgs> parsed = cli::ParseArgs(spec, args);
  if (parsed.has_value() && parsed->help()) {
    std::fputs(cli::HelpText(spec).c_str(), stdout);
    return cli::kExitOk;
  }
  auto usage = [](const std::string& msg) {
    std::fprintf(stderr,
                 "chronoq redis-migrate: %s\n(chronoq redis-migrate --help shows the options)\n",
                 msg.c_str());
    return cli::kExitUsage;
  };
  if (!parsed.has_value()) return usage(parsed.error().message());
  Result<redis::RedisUrl> url = redis::ParseRedisUrl(*parsed->Get("redis-url"));
  if (!url.has_value()) return usage("--redis-url: " + url.error().message());
  const std::string ns = *parsed->Get("namespace");
  if (ns.empty()) return usage("--namespace is empty; give the nodes' namespace setting");
  redis::MigrateOptions options;
  if (std::optional<std::string> b = parsed->Get("batch")) {
    Result<int64_t> n = cli::ParseInt(*b, 1, 10'000);
    if (!n.has_value()) return usage("--batch: " + n.error().message());
    options.batch = *n;
  }
  std::optional<std::string> only = parsed->Get("topic");
  if (only && only->empty()) return usage("--topic is empty; give a topic name or leave it out");
  auto unreachable = [&](const std::string& what, const Status& s) {
    std::fprintf(stderr, "chronoq redis-migrate: %s: %s\n", what.c_str(), s.message().c_str());
    return cli::kExitUnreachable;
  };

  RedisClient client(*url);
  if (!client.error().ok()) return unreachable(url->Redacted(), client.error());
  std::vector<std::string> topics;
  if (only) {
    topics.push_back(*only);
  } else {
    Result<std::vector<std::string>> listed = redis::NamespaceTopics(client.sink(), ns);
    if (!listed.has_value()) return unreachable("listing the topics", listed.error());
    topics = std::move(*listed);
  }
  int64_t total = 0, migrated = 0, missing = 0;
  for (const std::string& topic : topics) {
    Result<redis::MigrateResult> r =
        redis::MigrateTopic(client.sink(), *base::SystemClock::Get(), ns, topic, options);
    if (!r.has_value()) {
      return unreachable(fmt::format("topic '{}' (run it again to go on)", topic), r.error());
    }
    total += r->moved;
    if (r->outcome == redis::MigrateResult::Outcome::kNoTopic) {
      ++missing;
      std::fprintf(stderr, "topic '%s': no such topic in namespace '%s'\n", topic.c_str(),
                   ns.c_str());
      continue;
    }
    ++migrated;
    std::printf("topic '%s': in redis-format 4, %lld messages moved (%lld script calls)\n",
                topic.c_str(), static_cast<long long>(r->moved), static_cast<long long>(r->calls));
    std::fflush(stdout);
  }
  std::printf("%lld topics in redis-format 4, %lld messages moved; %lld not found\n",
              static_cast<long long>(migrated), static_cast<long long>(total),
              static_cast<long long>(missing));
  // A topic named by --topic that does not exist is the caller's mistake.
  return only && missing > 0 ? cli::kExitRefused : cli::kExitOk;
}

}  // namespace chronoq::app
