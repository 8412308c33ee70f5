// Topic configuration of the Engine (engine.h; API-EXTENSIONS.md section 4).
#include "engine/engine.h"

namespace chronoq::engine {

core::EffectiveTopicConfig Engine::ConfigOf(const std::string& topic) const {
  static const core::TopicDefaults kServerOnly;
  const core::TopicDefaults* d = topic_defaults_.load();
  return (d != nullptr ? *d : kServerOnly).Resolve(topic, core::TopicConfig{});
}

void Engine::SetTopicConfig(std::string, core::TopicConfig,
                            Callback<Result<core::TopicConfig>> done) {
  done(Internal("setTopicConfig is not implemented yet on this storage"));
}

void Engine::GetTopicConfig(std::string, Callback<Result<core::TopicConfig>> done) {
  done(core::TopicConfig{});
}

void Engine::DeleteTopicConfig(std::string, Callback<Status> done) {
  done(Internal("deleteTopicConfig is not implemented yet on this storage"));
}

void Engine::Purge(std::string, std::optional<core::MsgStatus>, Callback<Result<int64_t>> done) {
  done(Internal("purgeTopic is not implemented yet on this storage"));
}

void Engine::Redrive(backend::RedriveRequest, Callback<Result<int64_t>> done) {
  done(Internal("redriveMsg is not implemented yet on this storage"));
}

}  // namespace chronoq::engine
