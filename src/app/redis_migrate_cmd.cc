#include "app/redis_migrate_cmd.h"

#include <fmt/format.h>

#include <cstdio>
#include <cstdlib>
#include <optional>
#include <sstream>
#include <string>

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
              "its requests with code 503, so it refuses to start while any node of the namespace "
              "runs (a client subscribed to its ready channel): stop them first. Every node must "
              "be of a build that reads format 4. A run stopped at any "
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

// How many clients are subscribed to the namespace's ready channel (`cq:{<ns>}:ready`): every
// running node of the namespace is, from its start to its end (docs/redis.md "Nodes"), and
// nothing else. On a Cluster each server counts only the subscribers connected to it (a node
// subscribes on one of its seeds), so every server that CLUSTER NODES lists is asked.
Result<int64_t> RunningNodes(RedisClient& client, const redis::RedisUrl& url,
                             const std::string& ns) {
  const std::string channel = fmt::format("cq:{{{}}}:ready", ns);
  auto subscribed = [&channel](RedisClient& c) -> Result<int64_t> {
    CQ_ASSIGN_OR_RETURN(redis::RedisReply r, c.One("", {"PUBSUB", "NUMSUB", channel}));
    if (r.type != redis::RedisReply::Type::kArray || r.elements.size() != 2) {
      return Status(Errc::kUnavailable, "unexpected answer to PUBSUB NUMSUB");
    }
    return r.elements[1].integer;
  };
  if (url.mode != redis::RedisMode::kCluster) return subscribed(client);
  CQ_ASSIGN_OR_RETURN(redis::RedisReply nodes, client.One("", {"CLUSTER", "NODES"}));
  int64_t total = 0;
  std::istringstream lines(nodes.str);
  for (std::string line; std::getline(lines, line);) {
    std::istringstream fields(line);
    std::string id, address, flags;
    fields >> id >> address >> flags;
    if (flags.find("fail") != std::string::npos || flags.find("noaddr") != std::string::npos ||
        flags.find("handshake") != std::string::npos) {
      continue;  // not reachable: no node can be subscribed there
    }
    address = address.substr(0, address.find('@'));  // ip:port@cport[,hostname]
    const size_t colon = address.rfind(':');
    if (colon == std::string::npos) continue;
    redis::RedisUrl one = url;
    one.mode = redis::RedisMode::kStandalone;
    one.endpoints = {
        redis::RedisEndpoint{address.substr(0, colon), std::atoi(address.c_str() + colon + 1)}};
    if (one.endpoints[0].port <= 0) continue;
    RedisClient c(one);
    CQ_RETURN_IF_ERROR(c.error());
    CQ_ASSIGN_OR_RETURN(int64_t n, subscribed(c));
    total += n;
  }
  return total;
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
  // A running node would answer 503 for every topic being moved, and one of a build that does
  // not know layout 4 would write keys nobody reads: refuse before changing anything.
  Result<int64_t> running = RunningNodes(client, *url, ns);
  if (!running.has_value()) return unreachable("counting the running nodes", running.error());
  if (*running > 0) {
    std::fprintf(stderr,
                 "chronoq redis-migrate: %lld running node(s) of namespace '%s' (clients "
                 "subscribed to cq:{%s}:ready): stop every node of the namespace first; nothing "
                 "was changed\n",
                 static_cast<long long>(*running), ns.c_str(), ns.c_str());
    return cli::kExitRefused;
  }
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
