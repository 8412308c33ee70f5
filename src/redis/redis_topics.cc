// Topic configuration of the Redis backend (redis_backend.h; API-EXTENSIONS.md section 4).
#include "redis/redis_backend.h"

namespace chronoq::redis {

core::EffectiveTopicConfig RedisBackend::LocalConfigOf(const std::string& topic) const {
  static const core::TopicDefaults kServerOnly;
  const core::TopicDefaults* d = topic_defaults_.load();
  return (d != nullptr ? *d : kServerOnly).Resolve(topic, core::TopicConfig{});
}

void RedisBackend::SetTopicConfig(std::string, core::TopicConfig,
                                  backend::Callback<Result<core::TopicConfig>> done) {
  done(Internal("setTopicConfig is not implemented yet on this storage"));
}

void RedisBackend::GetTopicConfig(std::string, backend::Callback<Result<core::TopicConfig>> done) {
  done(core::TopicConfig{});
}

void RedisBackend::DeleteTopicConfig(std::string, backend::Callback<Status> done) {
  done(Internal("deleteTopicConfig is not implemented yet on this storage"));
}

void RedisBackend::Purge(std::string, std::optional<core::MsgStatus>,
                         backend::Callback<Result<int64_t>> done) {
  done(Internal("purgeTopic is not implemented yet on this storage"));
}

void RedisBackend::Redrive(backend::RedriveRequest, backend::Callback<Result<int64_t>> done) {
  done(Internal("redriveMsg is not implemented yet on this storage"));
}

}  // namespace chronoq::redis
