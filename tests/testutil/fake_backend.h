// FakeBackend: a small in-memory backend::QueueBackend for tests of the layers above it (the
// service, the HTTP handlers), fast and with no time of its own. It keeps messages in a map and
// gives them statuses by simple rules: a send with delay <= 0 is READY, otherwise WAITING until
// the test calls MakeReady(); a pull takes READY messages in send order and makes them
// CONSUMING; ack ends a CONSUMING message, nack makes it READY again; delete ends any in-life
// one. It records every call as the layer above made it (values checked, defaults applied), can
// fail the next call with a given Status, can hold answers back until Release() (asynchronous
// completion), and lets the test play the backend's part towards the ReadyListener and the
// EventSink.
//
// Thread-safety: all methods are thread-safe; answers are given without the lock held.
#pragma once

#include <deque>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "backend/queue_backend.h"

namespace chronoq::testutil {

class FakeBackend final : public backend::QueueBackend {
 public:
  // One call as received.
  struct Call {
    // "send", "pull", "ack", "delete", "get", "info", "list", and issue 14's "send_batch",
    // "ack_batch", "update", "touch", "count", "list_msg".
    std::string op;
    std::string topic;
    std::string msg_id;
    core::NewMessage send;                // for "send"
    backend::PullRequest pull;            // for "pull"
    bool flag = false;                    // ack (for "ack"), release (for "delete")
    std::vector<core::NewMessage> batch;  // for "send_batch"
    std::vector<backend::AckItem> acks;   // for "ack_batch"
    core::MessageUpdate update;           // for "update"
    Millis ack_timeout{0};                // for "touch" (resolved)
    int64_t count = 0;                    // for "count"
    backend::ListRequest list;            // for "list_msg"
  };

  void Send(core::NewMessage m, backend::Callback<Result<backend::Sent>> done) override;
  void Pull(backend::PullRequest req,
            backend::Callback<Result<std::vector<core::Message>>> done) override;
  // The push lane is not faked: no messages.
  void TakePush(std::string topic, int32_t max, Millis lease_margin,
                backend::Callback<Result<backend::PushTake>> done) override;
  void Ack(std::string topic, std::string msg_id, bool ack,
           backend::Callback<Status> done) override;
  void Delete(std::string topic, std::string msg_id, bool release,
              backend::Callback<Status> done) override;
  void Get(std::string topic, std::string msg_id,
           backend::Callback<Result<core::Message>> done) override;
  void GetTopicInfo(std::string topic, backend::Callback<Result<core::TopicInfo>> done) override;
  void ListTopics(backend::Callback<Result<std::vector<core::TopicInfo>>> done) override;
  void SendBatch(std::vector<core::NewMessage> msgs,
                 backend::Callback<Result<std::vector<Result<backend::Sent>>>> done) override;
  void AckBatch(std::string topic, std::vector<backend::AckItem> items,
                backend::Callback<Result<std::vector<Status>>> done) override;
  void Update(backend::UpdateRequest req, backend::Callback<Result<core::Message>> done) override;
  void Touch(std::string topic, std::string msg_id, std::optional<Millis> ack_timeout,
             backend::Callback<Result<core::Message>> done) override;
  void Count(std::string topic, std::string msg_id, int64_t count,
             backend::Callback<Result<core::Message>> done) override;
  void List(backend::ListRequest req, backend::Callback<Result<backend::ListPage>> done) override;
  void SetReadyListener(backend::ReadyListener* listener) override;
  // Recorded apart from calls() (rechecks come with time, not with requests): see rechecks().
  void Recheck(const std::string& topic) override;
  void SetEventSink(backend::EventSink* sink) override;
  // Topic configuration: kept in memory, resolved like a real backend (sends, pulls and touches
  // are recorded with their defaults resolved). Purge deletes; Redrive is not faked.
  void SetTopicDefaults(const core::TopicDefaults* defaults) override;
  void SetTopicConfig(std::string topic, core::TopicConfig change,
                      backend::Callback<Result<core::TopicConfig>> done) override;
  void GetTopicConfig(std::string topic,
                      backend::Callback<Result<core::TopicConfig>> done) override;
  void DeleteTopicConfig(std::string topic, backend::Callback<Status> done) override;
  void Purge(std::string topic, std::optional<core::MsgStatus> status,
             backend::Callback<Result<int64_t>> done) override;
  void Redrive(backend::RedriveRequest req, backend::Callback<Result<int64_t>> done) override;

  // The calls so far, in order.
  std::vector<Call> calls();
  // The topics of the Recheck calls so far, in order.
  std::vector<std::string> rechecks();
  // The next call (of any operation) answers `s` and changes nothing.
  void FailNext(Status s);
  // While held, answers are kept back; Release() gives them all, in order.
  void Hold();
  void Release();
  // A WAITING message becomes READY; the listener hears of its topic.
  void MakeReady(const std::string& topic, const std::string& msg_id);
  // Plays the backend reporting what time did.
  void Emit(const std::string& topic, const backend::TopicEvents& e);
  // Whether a ReadyListener / EventSink is registered now.
  bool has_listener();
  bool has_sink();

 private:
  struct Entry {
    core::Message message;
    uint64_t order = 0;  // send order
  };
  // Stores a new message, or answers the in-life one with its id.
  backend::Sent StoreLocked(core::NewMessage m);
  template <typename Change>
  void ChangeOne(Call call, Change change, backend::Callback<Result<core::Message>> done);
  // Records the call; returns the failure to answer with, if one was asked for.
  std::optional<Status> Begin(Call call);
  void Answer(UniqueFunction<void()> answer);
  void NotifyReady(const std::string& topic);

  std::mutex mu_;
  std::vector<Call> calls_;
  std::vector<std::string> rechecks_;
  std::optional<Status> fail_next_;
  bool held_ = false;
  std::deque<UniqueFunction<void()>> pending_;
  std::map<std::pair<std::string, std::string>, Entry> messages_;
  uint64_t next_order_ = 0;
  uint64_t next_id_ = 0;
  backend::ReadyListener* listener_ = nullptr;
  backend::EventSink* sink_ = nullptr;
  const core::TopicDefaults* topic_defaults_ = nullptr;
  std::map<std::string, core::TopicConfig> configs_;
  // The topic's effective configuration. REQUIRES: mu_ held.
  core::EffectiveTopicConfig ConfigLocked(const std::string& topic) const;
};

}  // namespace chronoq::testutil
