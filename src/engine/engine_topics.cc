// Topic configuration of the Engine (engine.h; API-EXTENSIONS.md section 4): the stored layer of
// each topic, held in memory (configs_) and in the store's `meta` entries, resolved over the
// node-local layers by ConfigOf.
#include "base/log.h"
#include "engine/answer.h"
#include "engine/engine.h"

namespace chronoq::engine {

core::TopicConfig Engine::StoredConfig(const std::string& topic) const {
  base::MutexLock lock(config_mu_);
  auto it = configs_.find(topic);
  return it == configs_.end() ? core::TopicConfig{} : it->second;
}

core::EffectiveTopicConfig Engine::ConfigOf(const std::string& topic) const {
  static const core::TopicDefaults kServerOnly;
  const core::TopicDefaults* d = topic_defaults_.load();
  return (d != nullptr ? *d : kServerOnly).Resolve(topic, StoredConfig(topic));
}

Status Engine::LoadTopicConfigs() {
  std::unordered_map<std::string, core::TopicConfig> loaded;
  CQ_RETURN_IF_ERROR(store_->ScanTopicConfigs(
      [&](std::string topic, core::TopicConfig c) { loaded.emplace(std::move(topic), c); }));
  base::MutexLock lock(config_mu_);
  configs_ = std::move(loaded);
  return Status::Ok();
}

bool Engine::KnownIdle(const std::string& topic) {
  // A paused topic delivers nothing, and resuming it wakes the listener (WriteTopicConfig).
  return ConfigOf(topic).paused;
}

void Engine::WriteTopicConfig(const std::string& topic, const core::TopicConfig& after,
                              Answer<Status>& answer) {
  const bool was_paused = ConfigOf(topic).paused;
  Batch batch = store_->NewBatch();
  if (after.empty()) {
    store_->DeleteTopicConfig(batch, topic);
  } else {
    store_->PutTopicConfig(batch, topic, after);
  }
  answer.Set(Status::Ok());
  std::optional<Status> outcome;
  if (CommitFor(nullptr, std::move(batch), answer.OnDurable(), &outcome)) {
    base::MutexLock lock(config_mu_);
    if (after.empty()) {
      configs_.erase(topic);
    } else {
      configs_[topic] = after;
    }
  }
  if (was_paused && !ConfigOf(topic).paused) {
    // Resumed: parked long polls pull again.
    if (ReadyListener* l = listener_.load()) l->OnReady(topic);
  }
  if (outcome) answer.Finish(*outcome);
}

void Engine::SetTopicConfig(std::string topic, core::TopicConfig change,
                            Callback<Result<core::TopicConfig>> done) {
  // One change at a time: each is a read-modify-write of the stored layer.
  base::MutexLock lock(config_write_mu_);
  core::TopicConfig after = core::Overlay(change, StoredConfig(topic));
  Answer<Status> answer([after, done = std::move(done)](Status s) mutable {
    if (s.ok()) {
      done(after);
    } else {
      done(std::move(s));
    }
  });
  WriteTopicConfig(topic, after, answer);
}

void Engine::GetTopicConfig(std::string topic, Callback<Result<core::TopicConfig>> done) {
  done(StoredConfig(topic));
}

void Engine::DeleteTopicConfig(std::string topic, Callback<Status> done) {
  base::MutexLock lock(config_write_mu_);
  Answer<Status> answer(std::move(done));
  WriteTopicConfig(topic, core::TopicConfig{}, answer);
}

void Engine::Purge(std::string, std::optional<core::MsgStatus>, Callback<Result<int64_t>> done) {
  done(Internal("purgeTopic is not implemented yet on this storage"));
}

void Engine::Redrive(backend::RedriveRequest, Callback<Result<int64_t>> done) {
  done(Internal("redriveMsg is not implemented yet on this storage"));
}

}  // namespace chronoq::engine
