// Topic configuration and purge of the Redis backend (redis_backend.h; API-EXTENSIONS.md section
// 4). The stored layer is the hash `cfg` in the topic's own slot: every script of the topic reads
// it atomically over the node-local layers the node sends (Eval), so a change made through one
// node holds on every node from the next operation on.
#include <fmt/format.h>

#include "redis/redis_backend.h"
#include "redis/script_reply.h"

namespace chronoq::redis {

namespace {

// Purge deletes at most this many messages per script call, so other topics' scripts (Redis
// runs one at a time) wait at most one bounded call.
constexpr int kPurgeBatch = 1000;

}  // namespace

core::EffectiveTopicConfig RedisBackend::LocalConfigOf(const std::string& topic) const {
  const core::TopicDefaults* d = topic_defaults_.load();
  return (d != nullptr ? *d : core::TopicDefaults::ServerOnly())
      .Resolve(topic, core::TopicConfig{});
}

void RedisBackend::Resumed(const std::string& topic) {
  News(topic);
  NotifyReady(topic);
  if (PushWatched(topic)) NotifyPush(topic);
  // Nodes act on the push part only for a topic they watch for push work.
  Publish(topic, kPubPullReady | kPubPushReady, "");
}

void RedisBackend::SetTopicConfig(std::string topic, core::TopicConfig change,
                                  backend::Callback<Result<core::TopicConfig>> done) {
  auto set = [this, topic, args = StoredConfigArgs(change),
              done = std::move(done)](Status listed) mutable {
    if (!listed.ok()) return done(std::move(listed));
    Eval(kConfigSetScript, topic, std::move(args),
         AfterReplicas(topic, [this, topic, done = std::move(done)](Result<RedisReply> r) mutable {
           if (!r.has_value()) return done(r.error());
           const auto& e = r->elements;
           if (r->type != RedisReply::Type::kArray || e.size() != 3) {
             return done(Unexpected(*r, "setTopicConfig"));
           }
           if (Str(e[0]) == "1" && Str(e[1]) != "1") Resumed(topic);
           done(ParseStoredConfig(e[2]));
         }));
  };
  // A topic given a callback sends its messages to the push lane from now on: it is in the push
  // set before any send can see the callback, so every node watches it (docs/redis.md).
  if (change.callback && change.callback->has_value()) {
    return EnsurePushListed(topic, /*force=*/true, std::move(set));
  }
  set(Status::Ok());
}

void RedisBackend::GetTopicConfig(std::string topic,
                                  backend::Callback<Result<core::TopicConfig>> done) {
  Eval(kConfigGetScript, topic, {}, [done = std::move(done)](Result<RedisReply> r) mutable {
    if (!r.has_value()) return done(r.error());
    if (r->type != RedisReply::Type::kArray || r->elements.size() != 1) {
      return done(Unexpected(*r, "getTopicConfig"));
    }
    done(ParseStoredConfig(r->elements[0]));
  });
}

void RedisBackend::DeleteTopicConfig(std::string topic, backend::Callback<Status> done) {
  Eval(kConfigDeleteScript, topic, {},
       AfterReplicas(topic, [this, topic, done = std::move(done)](Result<RedisReply> r) mutable {
         if (!r.has_value()) return done(r.error());
         const auto& e = r->elements;
         if (r->type != RedisReply::Type::kArray || e.size() != 2) {
           return done(Unexpected(*r, "deleteTopicConfig"));
         }
         if (Str(e[0]) == "1" && Str(e[1]) != "1") Resumed(topic);
         done(Status::Ok());
       }));
}

void RedisBackend::Purge(std::string topic, std::optional<core::MsgStatus> status,
                         backend::Callback<Result<int64_t>> done) {
  PurgeStep(std::move(topic), status, "", 0, std::move(done));
}

void RedisBackend::PurgeStep(std::string topic, std::optional<core::MsgStatus> status,
                             std::string position, int64_t deleted,
                             backend::Callback<Result<int64_t>> done) {
  const TimePoint now = clock_->Now();
  // The position is "<score>:<seq>", as the previous call answered it.
  const size_t colon = position.find(':');
  std::vector<std::string> args = {Ms(now),
                                   std::to_string(options_.retention.count()),
                                   std::to_string(status ? static_cast<int>(*status) : 0),
                                   std::to_string(kPurgeBatch),
                                   position.substr(0, colon),
                                   colon == std::string::npos ? "" : position.substr(colon + 1)};
  Eval(kPurgeScript, topic, std::move(args),
       AfterReplicas(topic, [this, topic, status, deleted,
                             done = std::move(done)](Result<RedisReply> r) mutable {
         if (!r.has_value()) return done(r.error());
         const auto& e = r->elements;
         if (r->type != RedisReply::Type::kArray || e.size() != 2) {
           return done(Unexpected(*r, "purgeTopic"));
         }
         const int64_t n = e[0].integer;
         // Each call moves the position forward past what it examined, so the walk ends
         // (unless sends keep adding entries ahead of it faster than it walks).
         std::string next = Str(e[1]);
         if (!next.empty()) {
           return PurgeStep(std::move(topic), status, std::move(next), deleted + n,
                            std::move(done));
         }
         done(deleted + n);
       }));
}

}  // namespace chronoq::redis
