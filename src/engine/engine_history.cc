// Message history of the Engine (engine.h, core/history.h): each change of a message of a topic
// with history on appends its entries to the message's stored history in the change's own batch
// (read, append, cap, write: the history is one `meta` value per message, docs/storage-format.md),
// so a history never misses or invents a change that was (not) committed. The history is deleted
// with the record (release, redrive, the retention purge). When no topic has history on, nothing
// of this runs (any_history_).
#include <fmt/format.h>

#include "engine/engine.h"

namespace chronoq::engine {

void Engine::NoteHistoryTopics() {
  bool any = false;
  for (const auto& [topic, c] : configs_) any = any || c.history.value_or(false);
  if (const core::TopicDefaults* d = topic_defaults_.load(); d != nullptr) {
    for (const auto& [topic, c] : d->file()) any = any || c.history.value_or(false);
  }
  any_history_.store(any, std::memory_order_relaxed);
}

void Engine::RecordHistory(Batch& batch, const core::MessageRecord* before,
                           const core::MessageRecord& after, core::HistoryCause cause) {
  const core::EffectiveTopicConfig config = ConfigOf(after.topic);
  if (!config.history) return;
  std::vector<core::HistoryEntry> added =
      core::HistoryOf(before, after, clock_->Now(), options_.node, config.dead_letter_topic, cause);
  if (added.empty()) return;
  std::optional<core::StoredHistory> stored;
  if (before != nullptr) {
    // A read error or a corrupt value starts the history again rather than fail the change.
    Result<std::optional<std::string>> value = store_->GetHistory(after.topic, after.msg_id);
    if (value.has_value() && *value) {
      Result<core::StoredHistory> decoded = core::DecodeHistory(**value);
      if (decoded.has_value()) stored = std::move(*decoded);
    }
  } else if (cause == core::HistoryCause::kRedriven) {
    // Back from its dead-letter topic: the history of its first life goes on (while its ended
    // record is retained in the source topic).
    Result<std::optional<std::string>> value = store_->GetHistory(after.topic, after.msg_id);
    if (value.has_value() && *value) {
      Result<core::StoredHistory> decoded = core::DecodeHistory(**value);
      if (decoded.has_value()) {
        stored = std::move(*decoded);
        stored->seq = after.seq;
      }
    }
  }
  store_->PutHistory(
      batch, after.topic, after.msg_id,
      core::EncodeHistory(core::AppendHistory(std::move(stored), after.seq, std::move(added),
                                              options_.history_max_entries)));
}

void Engine::GetHistory(std::string topic, std::string msg_id,
                        Callback<Result<std::vector<core::HistoryEntry>>> done) {
  if (!ConfigOf(topic).history) return done(core::HistoryOff(topic));
  Get(topic, msg_id,
      [this, topic, msg_id, done = std::move(done)](Result<core::Message> m) mutable {
        if (!m.has_value()) return done(m.error());
        Result<std::optional<std::string>> value = store_->GetHistory(topic, msg_id);
        if (!value.has_value()) return done(value.error());
        std::vector<core::HistoryEntry> out;
        if (*value) {
          Result<core::StoredHistory> h = core::DecodeHistory(**value);
          if (!h.has_value()) return done(h.error());
          // A history of an older message under this msgId is not this one's.
          if (h->seq == m->record.seq) out = std::move(h->entries);
        }
        done(core::HistoryAsOf(std::move(out), m->record, clock_->Now(), options_.node));
      });
}

}  // namespace chronoq::engine
