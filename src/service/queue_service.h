// QueueService: the queue's rules, once, below every protocol. HTTP (and later gRPC and the
// dashboard) decode their wire format into the requests of service/requests.h, call one method
// here and encode what comes back; nothing a user relies on is decided above this layer:
//
//   - validation: every value against core::Limits, with the sentences of core/validation.h;
//   - defaults: a value left out (or out of its range where API.md says it falls back) gets the
//     topic's configuration, which falls back on the config file's [topics.<name>] table and
//     the server default (core/topic_config.h); the service owns those node-local layers and
//     hands them to the backend, which resolves the stored layer over them atomically with each
//     operation; batches and long-poll timeouts are clamped to the limits;
//   - long polls: parking, waking, the parking caps (service/long_poll.h);
//   - counting: every event is recorded once (service/recorder.h), for getMonitorData and for
//     the Prometheus counters, whichever protocol or backend caused it;
//   - the node's online/offline state (health).
//
// A refused request never reaches the backend and changes nothing. Errors are Status codes of
// base/status.h: kInvalidArgument (a value out of its limits, with a sentence naming it),
// kNotFound / kInvalidState (API.md's 404 cases), kUnavailable / kIOError / kInternal (storage);
// each protocol maps them in one table (http/error_map.h).
//
// Operation: asynchronous like the backend: each call's `done` is called exactly once, inline
// (validation errors, inline backends) or later on another thread.
//
// Lifecycle: construct over a backend (it registers itself as the backend's ReadyListener and
// EventSink), serve, Shutdown() (parked long polls answer empty), stop the scheduler, destroy
// (it unregisters). REQUIRES: backend, clock and scheduler outlive it.
//
// Thread-safety: all methods are thread-safe.
#pragma once

#include <array>
#include <atomic>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "backend/queue_backend.h"
#include "base/clock.h"
#include "base/mutex.h"
#include "base/scheduler.h"
#include "core/callback.h"
#include "core/limits.h"
#include "core/topic_config.h"
#include "metrics/monitor.h"
#include "metrics/registry.h"
#include "service/import.h"
#include "service/long_poll.h"
#include "service/push_lane.h"
#include "service/push_metrics.h"
#include "service/push_scheduler.h"
#include "service/recorder.h"
#include "service/requests.h"

namespace chronoq::service {

using backend::Callback;
using Messages = std::vector<core::Message>;

// getTopicConfig's answer: every field's effective value and the layer it came from.
struct TopicConfigView {
  std::string topic;
  core::EffectiveTopicConfig config;
  std::array<core::ConfigSource, core::kTopicFieldCount> sources{};  // by core::TopicField
};

struct ServiceOptions {
  core::Limits limits;
  core::Defaults defaults;
  // The config file's [topics.<name>] tables (core/topic_config.h, layer 2), checked.
  std::map<std::string, core::TopicConfig, std::less<>> topic_files{};
  // push-allowed-targets: what a callback may reach (docs/push.md); empty: push is off.
  core::TargetAllowlist push_allowed{};
  Millis monitor_interval{60'000};  // monitor-interval-seconds
  size_t metrics_max_topics = 1000;
  // Push delivery: the transports (null: push-lane messages wait; the app gives one), and the
  // scheduler's limits. REQUIRES: the transport outlives the service; stop it between Shutdown()
  // and the service's destruction.
  PushTransport* push_transport = nullptr;
  PushOptions push{};
};

class QueueService {
 public:
  QueueService(backend::QueueBackend* backend, const base::Clock* clock, base::Scheduler* scheduler,
               ServiceOptions options);
  ~QueueService();
  QueueService(const QueueService&) = delete;
  QueueService& operator=(const QueueService&) = delete;

  // Stores a message, or answers the in-life one with the same msgId (Sent::existing).
  // Send, SendBatch, Pull and LongPoll answer callback header values masked
  // (MaskCallbackHeaders, service/masking.h): no caller needs the real ones there, and masking
  // where the answer is built spares Session a wrapper of its own per answer.
  // `req` by reference: taken apart, not moved from layer to layer.
  void Send(SendRequest&& req, Callback<Result<backend::Sent>> done);
  // Delivers up to `batch` consumable messages now (an empty list when none is).
  void Pull(PullRequest req, Callback<Result<Messages>> done);
  // Waits up to the long-poll timeout for consumable messages; answers at once when some are,
  // or when the parking caps are reached (with what one pull finds). `alive` tells whether the
  // client is still there (nullptr: assume it is); a client that left takes nothing. The
  // ticket cancels the wait (CancelLongPoll) when the client goes away; null when the request was
  // refused by validation (cancelling a ticket already answered does nothing).
  LongPollTicket LongPoll(LongPollRequest req, std::function<bool()> alive,
                          Callback<Result<Messages>> done);
  void CancelLongPoll(const LongPollTicket& ticket);
  // ack=true: done; ack=false: deliver again now (or end it on its last delivery), keeping the
  // reason as the message's lastError.
  void Ack(AckRequest req, Callback<Status> done);

  // --- API-EXTENSIONS.md sections 2-3 (queue_service_manage.cc)
  // Each item is checked and answered on its own (in input order); the accepted ones are stored
  // in one atomic write. The whole batch is refused (kInvalidArgument, nothing stored) when the
  // topic is invalid, it has no items or more than max-send-batch, or a msgId repeats.
  void SendBatch(SendBatchRequest req, Callback<Result<std::vector<Result<backend::Sent>>>> done);
  // SendBatch's check of the number of items, for a protocol to refuse a batch before decoding
  // its items.
  Status CheckSendBatchSize(size_t n) const;
  // Acks and nacks in one write; one result per id (acks first, then nacks, each in input
  // order). Refused whole when there is no id, more than max-pull-batch, or an id repeats.
  void AckBatch(AckBatchRequest req, Callback<Result<std::vector<AckResult>>> done);
  void Update(UpdateRequest req, Callback<Result<core::Message>> done);
  void Touch(TouchRequest req, Callback<Result<core::Message>> done);
  void Count(CountRequest req, Callback<Result<core::Message>> done);
  void List(ListRequest req, Callback<Result<backend::ListPage>> done);
  void Delete(DeleteRequest req, Callback<Status> done);
  void Get(MessageRef req, Callback<Result<core::Message>> done);
  void GetTopicInfo(std::string topic, Callback<Result<core::TopicInfo>> done);
  void ListTopics(Callback<Result<std::vector<core::TopicInfo>>> done);
  // --- API-EXTENSIONS.md section 4 (queue_service_topics.cc)
  // Merges the given fields into the topic's stored configuration; answers the effective one.
  // kInvalidArgument when no field is given or one is out of range.
  void SetTopicConfig(TopicConfigRequest req, Callback<Result<TopicConfigView>> done);
  void GetTopicConfig(std::string topic, Callback<Result<TopicConfigView>> done);
  // Back to the config file's and the server's values.
  void DeleteTopicConfig(std::string topic, Callback<Status> done);
  // Answers how many in-life messages were deleted.
  void Purge(PurgeRequest req, Callback<Result<int64_t>> done);
  // Answers how many dead letters went back to their source topics.
  void Redrive(RedriveRequest req, Callback<Result<int64_t>> done);
  const core::TopicDefaults& topic_defaults() const { return topic_defaults_; }
  // --- importMsgBatch (queue_service_import.cc, docs/api-extensions.md "Export and import")
  // Checks each item (a refused one answers why, with a sentence naming the field) and stores
  // the others with their state, one atomic write per topic; an item whose topic and msgId an
  // earlier item of the request has is skipped. Answers one outcome per item, in
  // input order. The whole request is refused (kInvalidArgument) when it has no item or more
  // than max-send-batch; a failed write fails the whole call.
  void Import(ImportRequest req, Callback<Result<std::vector<Result<ImportOutcome>>>> done);
  const core::Limits& limits() const { return options_.limits; }

  // --- API-EXTENSIONS.md section 8 (queue_service_data.cc)
  // Online backup of the backend's store into `dir` (backend::QueueBackend::Backup).
  void Backup(std::string dir, Callback<Result<backend::BackupInfo>> done);
  // getMsgHistory: the recorded transitions of a message (backend::QueueBackend::GetHistory).
  void GetMsgHistory(MessageRef req, Callback<Result<std::vector<core::HistoryEntry>>> done);

  // camellia's getMonitorData: the statistics of the last completed interval.
  metrics::MonitorSnapshot MonitorData();

  // GET /metrics: the queue's families (each topic's depth read from the backend now, the event
  // counters, the lateness histograms, the parked long polls), then every collector of
  // `others` (may be null). `done` gets the Prometheus text.
  void Scrape(const metrics::Registry* others, UniqueFunction<void(std::string)> done);

  // Health (camellia's /camellia/health/*): a node set offline keeps serving requests but tells
  // load balancers to stop sending them.
  void SetOnline(bool online) CQ_EXCLUDES(online_mu_);
  bool online() const { return online_.load(); }
  // `fn(online)` is called at each change of the switch from now on (gRPC's health service
  // follows it), on the thread that flips it, under a lock: it must not call back into the
  // service. No call runs after RemoveOnlineWatcher(id) returns.
  uint64_t AddOnlineWatcher(std::function<void(bool)> fn) CQ_EXCLUDES(online_mu_);
  void RemoveOnlineWatcher(uint64_t id) CQ_EXCLUDES(online_mu_);

  // Answers every parked long poll with an empty list; later long polls answer at once. Stops
  // taking push work and waits up to `push_grace` for the pushes in flight (the rest are
  // pushed again when their leases end).
  void Shutdown(Millis push_grace = Millis(0));

  // Push delivery figures (null without a push transport).
  const PushScheduler* push_scheduler() const { return push_.get(); }
  const PushMetrics& push_metrics() const { return push_metrics_; }

  const LongPollWaiters& long_polls() const { return waiters_; }
  // The Prometheus counters the service records into, for the dashboard's history to sample.
  metrics::QueueProbe& probe() { return recorder_.probe(); }

 private:
  // The first failing check of a message reference, or OK.
  Status CheckRef(const MessageRef& ref) const;
  // The checked message of a send (topic aside), or the first error.
  // The message's fields are moved out of `req` into `*out` (no copy of the request or the
  // message on the way).
  Status CheckSend(SendRequest& req, const std::string& topic, core::NewMessage* out) const;
  // Delivered messages as a pull's or a long poll's answer shows them (counted, masked).
  void Shown(Messages& delivered, bool long_poll);

  TopicConfigView ViewOf(const std::string& topic, const core::TopicConfig& stored) const;

  backend::QueueBackend* const backend_;
  const base::Clock* const clock_;
  const ServiceOptions options_;
  const core::TopicDefaults topic_defaults_;  // handed to the backend
  // The backend's ReadyListener: the pull lane wakes long polls, the push lane the scheduler.
  class Lanes final : public backend::ReadyListener {
   public:
    Lanes(LongPollWaiters* waiters, PushScheduler* push) : waiters_(waiters), push_(push) {}
    void OnReady(std::string_view topic) override { waiters_->OnReady(topic); }
    void OnPushReady(std::string_view topic) override {
      if (push_ != nullptr) push_->Wake(topic);
    }

   private:
    LongPollWaiters* const waiters_;
    PushScheduler* const push_;
  };

  Recorder recorder_;
  LongPollWaiters waiters_;
  PushMetrics push_metrics_;
  BackendPushLane push_lane_;
  std::unique_ptr<PushScheduler> push_;  // null without a push transport
  Lanes lanes_;
  std::atomic<bool> online_{true};
  base::Mutex online_mu_;
  std::map<uint64_t, std::function<void(bool)>> online_watchers_ CQ_GUARDED_BY(online_mu_);
  uint64_t next_online_watcher_ CQ_GUARDED_BY(online_mu_) = 1;
};

}  // namespace chronoq::service
