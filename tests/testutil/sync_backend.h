// SyncBackend: blocking wrappers over the asynchronous QueueBackend API, for tests. Each call
// waits for the backend's callback (which may run inline or on another thread).
#pragma once

#include <string>
#include <vector>

#include "backend/queue_backend.h"

namespace chronoq::testutil {

class SyncBackend {
 public:
  explicit SyncBackend(backend::QueueBackend* backend) : b_(backend) {}

  Result<core::Message> Send(const std::string& topic, const std::string& msg_id,
                             const std::string& payload, Millis delay,
                             Millis ttl = Millis(3'600'000), int32_t max_retry = 10);
  Result<core::Message> Send(core::NewMessage m);
  // With whether an in-life message with that id was answered instead (nothing stored).
  Result<backend::Sent> SendFull(core::NewMessage m);
  Result<std::vector<core::Message>> Pull(const std::string& topic, int32_t batch = 1,
                                          Millis ack_timeout = Millis(30'000));
  Result<std::vector<core::Message>> Pull(backend::PullRequest req);
  // The push lane (issue 16).
  Result<backend::PushTake> TakePush(const std::string& topic, int32_t max, Millis lease_margin);
  Status Ack(const std::string& topic, const std::string& msg_id, bool ack = true);
  Status Delete(const std::string& topic, const std::string& msg_id, bool release = false);
  Result<core::Message> Get(const std::string& topic, const std::string& msg_id);
  Result<core::TopicInfo> Info(const std::string& topic);
  Result<std::vector<core::TopicInfo>> List();

  // Issue 14's operations (API-EXTENSIONS.md sections 2-3).
  // Every item stored or answered; the first item refused (a full topic) fails the whole call.
  Result<std::vector<backend::Sent>> SendBatch(std::vector<core::NewMessage> msgs);
  // One answer per item.
  Result<std::vector<Result<backend::Sent>>> SendBatchItems(std::vector<core::NewMessage> msgs);
  Result<std::vector<Status>> AckBatch(const std::string& topic,
                                       std::vector<backend::AckItem> items);
  Result<core::Message> Update(const std::string& topic, const std::string& msg_id,
                               core::MessageUpdate update);
  Result<core::Message> Touch(const std::string& topic, const std::string& msg_id,
                              Millis ack_timeout);
  Result<core::Message> Count(const std::string& topic, const std::string& msg_id,
                              int64_t count = 1);
  Result<backend::ListPage> ListMsg(backend::ListRequest req);

  // Issue 15's operations (API-EXTENSIONS.md section 4).
  Result<core::TopicConfig> SetTopicConfig(const std::string& topic, core::TopicConfig change);
  Result<core::TopicConfig> GetTopicConfig(const std::string& topic);
  Status DeleteTopicConfig(const std::string& topic);
  Result<int64_t> Purge(const std::string& topic, std::optional<core::MsgStatus> status = {});
  Result<int64_t> Redrive(backend::RedriveRequest req);
  // Issue 21: getMsgHistory.
  Result<std::vector<core::HistoryEntry>> History(const std::string& topic,
                                                  const std::string& msg_id);

 private:
  backend::QueueBackend* b_;
};

}  // namespace chronoq::testutil
