// Engine: the embedded QueueBackend. Keeps the per-topic indexes and counts in memory (Topic) and
// the records in a Store (memory now; RocksDB by default later), and applies the pure state
// machine of core/ to every change: persist first, then update the indexes.
//
// Operation. Topics are spread over shards by name; each shard has one mutex and operations run
// inline on the caller's thread, so every callback is invoked before the call returns. Each
// topic has at most one Scheduler timer, set to the next time something happens to it (a trigger
// time or ack deadline arrives, a ttl runs out, a retention period ends, the topic turns
// inactive); there is no periodic scan. When messages become consumable the ReadyListener hears
// of it after the shard lock is released.
//
// Lifecycle: construct, use, then stop the Scheduler before destroying the Engine (timers hold a
// pointer to it). The Store, Clock, Scheduler and MonitorRecorder must outlive it.
#pragma once

#include <atomic>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

#include "base/clock.h"
#include "base/mutex.h"
#include "base/scheduler.h"
#include "base/thread_annotations.h"
#include "engine/queue_backend.h"
#include "engine/topic.h"
#include "metrics/monitor.h"
#include "storage/store.h"

namespace chronoq::engine {

struct EngineOptions {
  Millis retention{300'000};         // end-life-msg-expire-millis
  Millis topic_inactive{1'800'000};  // topic-inactive-millis
  int shards = 16;
};

class Engine final : public QueueBackend {
 public:
  Engine(EngineOptions options, storage::Store* store, const base::Clock* clock,
         base::Scheduler* scheduler, metrics::MonitorRecorder* monitor);
  ~Engine() override;

  void Send(core::NewMessage m, Callback<Result<core::Message>> done) override;
  void Pull(PullRequest req, Callback<Result<std::vector<core::Message>>> done) override;
  void Ack(std::string topic, std::string msg_id, bool ack, Callback<Status> done) override;
  void Delete(std::string topic, std::string msg_id, bool release, Callback<Status> done) override;
  void Get(std::string topic, std::string msg_id, Callback<Result<core::Message>> done) override;
  void GetTopicInfo(std::string topic, Callback<Result<core::TopicInfo>> done) override;
  void ListTopics(Callback<Result<std::vector<core::TopicInfo>>> done) override;
  void SetReadyListener(ReadyListener* listener) override { listener_.store(listener); }

 private:
  struct Slot {
    std::unique_ptr<Topic> topic;
    base::TimerId timer = 0;  // 0: none
    TimePoint timer_at = kTimeMax;
  };
  struct Shard {
    base::Mutex mu;
    std::unordered_map<std::string, Slot> topics CQ_GUARDED_BY(mu);
  };
  // What an operation observed under the lock and reports after releasing it.
  struct Effects {
    std::string topic;
    AdvanceResult advanced;  // finalized records already persisted
    int64_t ended = 0;       // ended by nack of the last delivery
    bool ready = false;      // something became consumable now
  };

  Shard& ShardFor(std::string_view topic);
  Slot* Find(Shard& shard, const std::string& topic) CQ_REQUIRES(shard.mu);
  // Moves the topic to now (never backwards) and persists what ended on the way.
  TimePoint Advance(Topic& t, Effects& fx);
  void Reschedule(Slot& slot);
  void Tick(const std::string& topic);
  void Report(Effects& fx);
  bool Listed(const Topic& t, TimePoint now) const;
  Status NotFoundError(const std::string& topic, const std::string& msg_id) const;
  // The ended record topic/msg_id still in its retention period, or kNotFound.
  Result<core::MessageRecord> FindRetained(const Topic& t, const std::string& msg_id, TimePoint now,
                                           bool with_payload);

  const EngineOptions options_;
  storage::Store* const store_;
  const base::Clock* const clock_;
  base::Scheduler* const scheduler_;
  metrics::MonitorRecorder* const monitor_;
  std::atomic<ReadyListener*> listener_{nullptr};
  std::atomic<uint64_t> next_seq_{1};
  std::vector<std::unique_ptr<Shard>> shards_;
};

}  // namespace chronoq::engine
