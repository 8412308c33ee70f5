// Session: the QueueService as one caller sees it (docs/security.md "Namespaces"). Every protocol
// (HTTP handlers, gRPC methods, Consume streams) calls the service through a Session made from
// the request's caller (auth/access.h; the protocol authenticated and authorized the request
// before, with auth::Authenticator), so that namespaces are applied in one place:
//
//   - in: a topic name the client gives (topic, deadLetterTopic) is refused when it holds the
//     scope separator (core/scope.h), with validation's sentence, for every caller (a server
//     without tokens too: that name could only be another namespace's internal name); otherwise
//     it becomes the internal name ScopedTopic(ns, name);
//   - out: a message's push callback shows its header names, each value "***" (values often
//     carry the target's credentials), in every namespace: getMsg/Get, listMsg/List, pull, long
//     poll, Consume, and the send/update answers (the send and pull answers, the hot paths, are
//     masked by QueueService where it builds them, so that the session wraps them only to map
//     names, and not at all in the unnamed namespace). Only listMsg export=true (admin; `chronoq
//     export` restores the real values: ListRequest::reveal_callback_headers) and push
//     deliveries (AsItsClientsSeeIt) carry the real values (docs/security.md "Push callbacks");
//   - out: every topic name in an answer (a message's topic and dead-letter source, topic infos,
//     a topic configuration's dead-letter topic) is the client's name again; ListTopics answers
//     only the caller's namespace.
//
// The unnamed namespace (no tokens, or a token of namespace `*`) uses names as they are: without
// tokens chronoq answers exactly as before namespaces existed (but for names no client could
// use: another namespace's internal names).
//
// listMsg cursors need nothing here: a cursor is a position inside the listed (internal) topic,
// so one crafted for another topic lists nothing of it (engine: checksummed with the topic;
// Redis: positions in the listed topic's keys only).
//
// A small value: copy it freely. REQUIRES: the service outlives the calls' answers.
// Thread-safety: as QueueService.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "auth/access.h"
#include "service/queue_service.h"

namespace chronoq::service {

class Session {
 public:
  Session(QueueService* service, const auth::Caller& caller);

  const std::string& ns() const { return ns_; }

  void Send(SendRequest&& req, Callback<Result<backend::Sent>> done) const;
  void Pull(PullRequest req, Callback<Result<Messages>> done) const;
  LongPollTicket LongPoll(LongPollRequest req, std::function<bool()> alive,
                          Callback<Result<Messages>> done) const;
  void CancelLongPoll(const LongPollTicket& ticket) const { service_->CancelLongPoll(ticket); }
  void Ack(AckRequest req, Callback<Status> done) const;
  void SendBatch(SendBatchRequest req,
                 Callback<Result<std::vector<Result<backend::Sent>>>> done) const;
  Status CheckSendBatchSize(size_t n) const { return service_->CheckSendBatchSize(n); }
  void AckBatch(AckBatchRequest req, Callback<Result<std::vector<AckResult>>> done) const;
  void Update(UpdateRequest req, Callback<Result<core::Message>> done) const;
  void Touch(TouchRequest req, Callback<Result<core::Message>> done) const;
  void Count(CountRequest req, Callback<Result<core::Message>> done) const;
  void List(ListRequest req, Callback<Result<backend::ListPage>> done) const;
  void Delete(DeleteRequest req, Callback<Status> done) const;
  void Get(MessageRef req, Callback<Result<core::Message>> done) const;
  void GetTopicInfo(std::string topic, Callback<Result<core::TopicInfo>> done) const;
  void ListTopics(Callback<Result<std::vector<core::TopicInfo>>> done) const;
  void SetTopicConfig(TopicConfigRequest req, Callback<Result<TopicConfigView>> done) const;
  void GetTopicConfig(std::string topic, Callback<Result<TopicConfigView>> done) const;
  void DeleteTopicConfig(std::string topic, Callback<Status> done) const;
  void Purge(PurgeRequest req, Callback<Result<int64_t>> done) const;
  void Redrive(RedriveRequest req, Callback<Result<int64_t>> done) const;
  void GetMsgHistory(MessageRef req, Callback<Result<std::vector<core::HistoryEntry>>> done) const;

 private:
  // The internal name of the client's `topic` (in place), or the error for a name holding the
  // scope separator.
  Status In(std::string_view param, std::string& topic) const;
  // Answers as the client sees them: a message in client names with its callback header values
  // masked (Out), or in client names only (Named: listMsg export=true).
  void Out(core::Message& m) const;
  void Named(core::Message& m) const;
  void Out(std::string& topic) const;

  QueueService* service_;
  std::string ns_;  // "" : the unnamed namespace
};

// The message as the clients of its own namespace know it: a scoped topic's client name (and its
// dead letter's source topic), never the internal "ns\x1Ftopic". For what the server sends on
// its own, outside any session: push deliveries.
core::Message AsItsClientsSeeIt(const core::Message& m);

}  // namespace chronoq::service
