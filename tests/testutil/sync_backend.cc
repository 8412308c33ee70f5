#include "tests/testutil/sync_backend.h"

#include <utility>

#include "tests/testutil/await.h"

namespace chronoq::testutil {
namespace {

template <typename T, typename Start>
T Wait(Start start) {
  return Await<T>(std::move(start));
}

}  // namespace

Result<core::Message> SyncBackend::Send(const std::string& topic, const std::string& msg_id,
                                        const std::string& payload, Millis delay, Millis ttl,
                                        int32_t max_retry) {
  return Send(core::NewMessage{topic, msg_id, payload, delay, ttl, max_retry});
}

Result<core::Message> SyncBackend::Send(core::NewMessage m) {
  Result<backend::Sent> sent = SendFull(std::move(m));
  if (!sent.has_value()) return sent.error();
  return std::move(sent->message);
}

Result<backend::Sent> SyncBackend::SendFull(core::NewMessage m) {
  return Wait<Result<backend::Sent>>([&](auto cb) { b_->Send(std::move(m), std::move(cb)); });
}

Result<std::vector<core::Message>> SyncBackend::Pull(const std::string& topic, int32_t batch,
                                                     Millis ack_timeout) {
  return Wait<Result<std::vector<core::Message>>>([&](auto cb) {
    b_->Pull(backend::PullRequest{topic, batch, ack_timeout}, std::move(cb));
  });
}

Result<backend::PushTake> SyncBackend::TakePush(const std::string& topic, int32_t max,
                                                Millis lease_margin) {
  return Wait<Result<backend::PushTake>>(
      [&](auto cb) { b_->TakePush(topic, max, lease_margin, std::move(cb)); });
}

Status SyncBackend::Ack(const std::string& topic, const std::string& msg_id, bool ack) {
  return Wait<Status>([&](auto cb) { b_->Ack(topic, msg_id, ack, std::move(cb)); });
}

Status SyncBackend::Delete(const std::string& topic, const std::string& msg_id, bool release) {
  return Wait<Status>([&](auto cb) { b_->Delete(topic, msg_id, release, std::move(cb)); });
}

Result<core::Message> SyncBackend::Get(const std::string& topic, const std::string& msg_id) {
  return Wait<Result<core::Message>>([&](auto cb) { b_->Get(topic, msg_id, std::move(cb)); });
}

Result<core::TopicInfo> SyncBackend::Info(const std::string& topic) {
  return Wait<Result<core::TopicInfo>>([&](auto cb) { b_->GetTopicInfo(topic, std::move(cb)); });
}

Result<std::vector<core::TopicInfo>> SyncBackend::List() {
  return Wait<Result<std::vector<core::TopicInfo>>>(
      [&](auto cb) { b_->ListTopics(std::move(cb)); });
}

Result<std::vector<Result<backend::Sent>>> SyncBackend::SendBatchItems(
    std::vector<core::NewMessage> msgs) {
  return Wait<Result<std::vector<Result<backend::Sent>>>>(
      [&](auto cb) { b_->SendBatch(std::move(msgs), std::move(cb)); });
}

Result<std::vector<backend::Sent>> SyncBackend::SendBatch(std::vector<core::NewMessage> msgs) {
  Result<std::vector<Result<backend::Sent>>> items = SendBatchItems(std::move(msgs));
  if (!items.has_value()) return items.error();
  std::vector<backend::Sent> out;
  out.reserve(items->size());
  for (Result<backend::Sent>& item : *items) {
    if (!item.has_value()) return item.error();
    out.push_back(std::move(item).value());
  }
  return out;
}

Result<std::vector<Status>> SyncBackend::AckBatch(const std::string& topic,
                                                  std::vector<backend::AckItem> items) {
  return Wait<Result<std::vector<Status>>>(
      [&](auto cb) { b_->AckBatch(topic, std::move(items), std::move(cb)); });
}

Result<core::Message> SyncBackend::Update(const std::string& topic, const std::string& msg_id,
                                          core::MessageUpdate update) {
  return Wait<Result<core::Message>>([&](auto cb) {
    b_->Update(backend::UpdateRequest{topic, msg_id, std::move(update)}, std::move(cb));
  });
}

Result<core::Message> SyncBackend::Touch(const std::string& topic, const std::string& msg_id,
                                         Millis ack_timeout) {
  return Wait<Result<core::Message>>(
      [&](auto cb) { b_->Touch(topic, msg_id, ack_timeout, std::move(cb)); });
}

Result<core::Message> SyncBackend::Count(const std::string& topic, const std::string& msg_id,
                                         int64_t count) {
  return Wait<Result<core::Message>>(
      [&](auto cb) { b_->Count(topic, msg_id, count, std::move(cb)); });
}

Result<backend::ListPage> SyncBackend::ListMsg(backend::ListRequest req) {
  return Wait<Result<backend::ListPage>>([&](auto cb) { b_->List(std::move(req), std::move(cb)); });
}

Result<std::vector<core::Message>> SyncBackend::Pull(backend::PullRequest req) {
  return Wait<Result<std::vector<core::Message>>>(
      [&](auto cb) { b_->Pull(std::move(req), std::move(cb)); });
}

Result<core::TopicConfig> SyncBackend::SetTopicConfig(const std::string& topic,
                                                      core::TopicConfig change) {
  return Wait<Result<core::TopicConfig>>(
      [&](auto cb) { b_->SetTopicConfig(topic, std::move(change), std::move(cb)); });
}

Result<core::TopicConfig> SyncBackend::GetTopicConfig(const std::string& topic) {
  return Wait<Result<core::TopicConfig>>(
      [&](auto cb) { b_->GetTopicConfig(topic, std::move(cb)); });
}

Result<std::vector<core::HistoryEntry>> SyncBackend::History(const std::string& topic,
                                                             const std::string& msg_id) {
  return Wait<Result<std::vector<core::HistoryEntry>>>(
      [&](auto cb) { b_->GetHistory(topic, msg_id, std::move(cb)); });
}

Status SyncBackend::DeleteTopicConfig(const std::string& topic) {
  return Wait<Status>([&](auto cb) { b_->DeleteTopicConfig(topic, std::move(cb)); });
}

Result<int64_t> SyncBackend::Purge(const std::string& topic,
                                   std::optional<core::MsgStatus> status) {
  return Wait<Result<int64_t>>([&](auto cb) { b_->Purge(topic, status, std::move(cb)); });
}

Result<int64_t> SyncBackend::Redrive(backend::RedriveRequest req) {
  return Wait<Result<int64_t>>([&](auto cb) { b_->Redrive(std::move(req), std::move(cb)); });
}

}  // namespace chronoq::testutil
