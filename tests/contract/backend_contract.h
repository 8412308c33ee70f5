// The backend contract suite: one set of value-parameterized GoogleTest cases that every
// QueueBackend must pass (the embedded engine over each Store, and the Redis backend). It checks
// the behaviour of backend/queue_backend.h and docs/API.md sections 4-5 at the backend level.
//
// Adding a backend: implement BackendHarness (the backend plus a ManualClock and ManualScheduler
// that drive its notion of time) and a BackendFactory, then, in a *_test.cc of this folder:
//
//   MyFactory factory;
//   INSTANTIATE_TEST_SUITE_P(My, BackendContractTest,
//                            ::testing::Values(static_cast<BackendFactory*>(&factory)),
//                            contract::FactoryName);
//
// The fixture and cases live in backend_contract_*_test.cc; a test binary compiles those plus its
// instantiation. Time is never slept on: tests advance the harness's scheduler (which runs the
// backend's timers at their due times) or, to check that what clients read is true before any
// background work ran, only its clock.
#pragma once

#include <gtest/gtest.h>

#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "backend/queue_backend.h"
#include "base/clock.h"
#include "base/scheduler.h"
#include "tests/testutil/sync_backend.h"

namespace chronoq::contract {

struct HarnessOptions {
  TimePoint start = FromEpochMs(1'700'000'040'000);
  Millis retention{300'000};         // end-life-msg-expire-millis
  Millis topic_inactive{1'800'000};  // topic-inactive-millis
};

// One fresh, empty backend instance whose time the test controls.
class BackendHarness {
 public:
  virtual ~BackendHarness() = default;
  virtual backend::QueueBackend* backend() = 0;
  // The clock the backend reads "now" from; starts at HarnessOptions::start.
  virtual base::ManualClock* clock() = 0;
  // The scheduler the backend's timers run on (it advances clock()).
  virtual base::ManualScheduler* scheduler() = 0;
  // Returns once every effect of the calls made so far (ready notifications included) has
  // happened. Backends that do everything inline need nothing.
  virtual void Settle() {}
  // Stops the backend and starts a new one over the same stored data (the embedded engine
  // reopened over its store, a new Redis backend over the same keyspace), keeping clock() and
  // scheduler(); backend() then answers the new one. False when this harness cannot restart
  // (nothing changed then). The fixture re-registers its listener.
  virtual bool Restart() { return false; }
};

class BackendFactory {
 public:
  virtual ~BackendFactory() = default;
  virtual std::string name() const = 0;  // [A-Za-z0-9_]+, used in test names
  virtual std::unique_ptr<BackendHarness> Make(const HarnessOptions& options) = 0;
};

std::string FactoryName(const ::testing::TestParamInfo<BackendFactory*>& info);

// Records OnReady and OnPushReady calls. Thread-safe.
class RecordingListener final : public backend::ReadyListener {
 public:
  void OnReady(std::string_view topic) override;
  void OnPushReady(std::string_view topic) override;
  std::vector<std::string> Take();      // the OnReady calls so far, cleared
  std::vector<std::string> TakePush();  // the OnPushReady calls so far, cleared

 private:
  std::mutex mu_;
  std::vector<std::string> calls_;
  std::vector<std::string> push_calls_;
};

class BackendContractTest : public ::testing::TestWithParam<BackendFactory*> {
 protected:
  void SetUp() override;
  void TearDown() override;

  const HarnessOptions& options() const { return options_; }
  TimePoint Now() { return h_->clock()->Now(); }
  TimePoint Start() const { return options_.start; }
  TimePoint At(int64_t ms) const { return options_.start + Millis(ms); }
  // Advances time by `ms`, running the backend's timers at their due times.
  void Advance(int64_t ms);
  void AdvanceTo(TimePoint t);
  // Moves only the clock: no timer runs (the backend's background work lags behind).
  void AdvanceClockOnly(int64_t ms);
  std::vector<std::string> ReadyCalls();
  // The OnPushReady calls so far (issue 16), cleared.
  std::vector<std::string> PushReadyCalls();
  // Issue 16: advances `ms` - 1 (nothing of `topic`'s push lane can be taken yet), then 1 more
  // (OnPushReady is told for `topic`). Defined in backend_contract_push_test.cc.
  void ExpectPushDueAfter(const std::string& topic, int64_t ms);

  // Asserting helpers: they fail the test on an unexpected error.
  core::Message Send(const std::string& topic, const std::string& id, int64_t delay_ms,
                     int64_t ttl_ms = 3'600'000, int32_t max_retry = 10,
                     const std::string& payload = "payload");
  std::vector<core::Message> Pull(const std::string& topic, int32_t batch = 1,
                                  int64_t ack_timeout_ms = 30'000);
  std::vector<std::string> PullIds(const std::string& topic, int32_t batch = 1,
                                   int64_t ack_timeout_ms = 30'000);
  core::Message Get(const std::string& topic, const std::string& id);
  core::MsgStatus StatusOf(const std::string& topic, const std::string& id);
  core::TopicInfo Info(const std::string& topic);
  std::vector<core::TopicInfo> List();
  std::vector<std::string> ListNames();
  // The error code of a call expected to fail (kOk when it succeeded).
  Errc GetError(const std::string& topic, const std::string& id);

  // Issue 14's operations (API-EXTENSIONS.md sections 2-3).
  // A message to send: `delay_ms` from now, with a priority; other fields as Send's defaults.
  static core::NewMessage NewMsg(const std::string& topic, const std::string& id, int64_t delay_ms,
                                 int32_t priority = 0, const std::string& payload = "payload");
  core::Message SendMsg(core::NewMessage m);
  // Sends every message without waiting for each answer (so a backend that batches writes,
  // like the engine's group commit, takes many at once), then waits for all; answers in input
  // order. Each must succeed.
  std::vector<core::Message> SendAll(std::vector<core::NewMessage> msgs);
  // Acks (true) or nacks (false) every id without waiting for each answer; each must succeed.
  void AckAll(const std::string& topic, const std::vector<std::pair<std::string, bool>>& acks);
  // One listMsg page; it must succeed.
  backend::ListPage ListPage(const std::string& topic, std::optional<core::MsgStatus> status,
                             int32_t limit, const std::string& cursor = "");
  // Every page of a walk, concatenated (at most `max_pages` pages).
  std::vector<core::Message> ListWalk(const std::string& topic,
                                      std::optional<core::MsgStatus> status, int32_t limit,
                                      int max_pages = 100'000);
  std::vector<std::string> ListWalkIds(const std::string& topic,
                                       std::optional<core::MsgStatus> status, int32_t limit = 1000);
  // Restarts the backend (BackendHarness::Restart); false when the harness cannot.
  bool Restart();

  // Issue 15 (API-EXTENSIONS.md section 4).
  // Replaces the node-local layers (the config file's tables over `server`) the backend resolves
  // stored configurations over. Call between operations (the backend reads them under its own
  // locks only).
  void SetNodeLayers(core::Defaults server,
                     std::map<std::string, core::TopicConfig, std::less<>> file);
  // setTopicConfig; it must succeed. Answers the stored layer.
  core::TopicConfig SetConfig(const std::string& topic, core::TopicConfig change);
  core::TopicConfig GetConfig(const std::string& topic);
  // Issue 21 (backend_contract_history_test.cc): history on for `topic` (with c's other fields);
  // getMsgHistory, which must succeed.
  void HistoryOn(const std::string& topic, core::TopicConfig c = {});
  std::vector<core::HistoryEntry> History(const std::string& topic, const std::string& id);

  HarnessOptions options_;
  std::unique_ptr<BackendHarness> h_;
  std::unique_ptr<testutil::SyncBackend> b_;
  RecordingListener listener_;
  core::TopicDefaults node_layers_;  // handed to every backend instance (SetTopicDefaults)
};

}  // namespace chronoq::contract
