#include "app/redis_client.h"

#include <chrono>
#include <future>

#include "redis/cluster.h"
#include "redis/sentinel.h"

namespace chronoq::app {

using redis::RedisReply;

RedisClient::RedisClient(const redis::RedisUrl& url) {
  redis::ConnectionOptions co;
  co.endpoint = url.endpoints.front();
  co.username = url.username;
  co.password = url.password;
  co.db = url.db;
  co.command_timeout = std::chrono::milliseconds(10'000);
  co.connect_timeout = std::chrono::milliseconds(3'000);
  if (url.mode == redis::RedisMode::kSentinel) {
    co.resolve = [sentinels = url.endpoints, name = url.master_name] {
      return redis::AskSentinels(sentinels, name, std::chrono::milliseconds(300));
    };
  }
  if (url.mode == redis::RedisMode::kCluster) {
    Result<std::unique_ptr<redis::RedisClusterClient>> c =
        redis::RedisClusterClient::Connect(&loop_, co, url.endpoints);
    if (!c.has_value()) {
      error_ = c.error();
      return;
    }
    sink_ = std::move(*c);
  } else {
    conn_ = std::make_unique<redis::RedisConnection>(&loop_, co);
    sink_ = std::make_unique<redis::SingleServer>(conn_.get());
  }
}

Result<std::vector<RedisReply>> RedisClient::Run(
    std::vector<std::pair<std::string, std::vector<std::string>>> cmds) {
  std::vector<std::promise<Result<RedisReply>>> promises(cmds.size());
  std::vector<std::future<Result<RedisReply>>> futures;
  futures.reserve(cmds.size());
  for (auto& p : promises) futures.push_back(p.get_future());
  for (size_t i = 0; i < cmds.size(); ++i) {
    sink_->Command(cmds[i].first, std::move(cmds[i].second),
                   [p = &promises[i]](Result<RedisReply> r) { p->set_value(std::move(r)); });
  }
  std::vector<RedisReply> out;
  out.reserve(cmds.size());
  Status failed;
  for (auto& f : futures) {
    Result<RedisReply> r = f.get();
    if (!r.has_value()) {
      if (failed.ok()) failed = r.error();
    } else if (r->is_error()) {
      if (failed.ok()) failed = Status(Errc::kUnavailable, "Redis answered: " + r->str);
    } else {
      out.push_back(std::move(r).value());
    }
  }
  if (!failed.ok()) return failed;
  return out;
}

Result<RedisReply> RedisClient::One(std::string key, std::vector<std::string> args) {
  std::vector<std::pair<std::string, std::vector<std::string>>> one;
  one.emplace_back(std::move(key), std::move(args));
  CQ_ASSIGN_OR_RETURN(std::vector<RedisReply> r, Run(std::move(one)));
  return std::move(r.front());
}

}  // namespace chronoq::app
