#include "redis/sentinel.h"

#include <fmt/format.h>
#include <hiredis/hiredis.h>
#include <sys/time.h>

#include <memory>

namespace chronoq::redis {
namespace {

Result<RedisEndpoint> AskOne(const RedisEndpoint& s, const std::string& name,
                             std::chrono::milliseconds timeout) {
  timeval tv{};
  tv.tv_sec = static_cast<time_t>(timeout.count() / 1000);
  tv.tv_usec = static_cast<suseconds_t>((timeout.count() % 1000) * 1000);
  std::unique_ptr<redisContext, decltype(&redisFree)> c(
      redisConnectWithTimeout(s.host.c_str(), s.port, tv), &redisFree);
  if (!c || c->err != 0) return Unavailable(c ? c->errstr : "out of memory");
  redisSetTimeout(c.get(), tv);
  std::unique_ptr<redisReply, decltype(&freeReplyObject)> r(
      static_cast<redisReply*>(
          redisCommand(c.get(), "SENTINEL get-master-addr-by-name %b", name.data(), name.size())),
      &freeReplyObject);
  if (!r) return Unavailable(c->err != 0 ? c->errstr : "no reply");
  if (r->type == REDIS_REPLY_ERROR) return Unavailable(std::string(r->str, r->len));
  if (r->type != REDIS_REPLY_ARRAY || r->elements != 2) {
    return Unavailable(fmt::format("does not know a master named '{}'", name));
  }
  RedisEndpoint e;
  e.host.assign(r->element[0]->str, r->element[0]->len);
  e.port = std::atoi(std::string(r->element[1]->str, r->element[1]->len).c_str());
  if (e.host.empty() || e.port <= 0) return Unavailable("answered an invalid address");
  return e;
}

}  // namespace

Result<RedisEndpoint> AskSentinels(const std::vector<RedisEndpoint>& sentinels,
                                   const std::string& master_name,
                                   std::chrono::milliseconds timeout) {
  std::string why;
  for (const RedisEndpoint& s : sentinels) {
    Result<RedisEndpoint> e = AskOne(s, master_name, timeout);
    if (e.has_value()) return e;
    why += fmt::format("{}sentinel {}:{}: {}", why.empty() ? "" : "; ", s.host, s.port,
                       e.error().message());
  }
  return Unavailable(fmt::format("no sentinel gave the master '{}': {}", master_name, why));
}

}  // namespace chronoq::redis
