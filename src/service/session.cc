#include "service/session.h"

#include "core/scope.h"
#include "core/validation.h"
#include "service/masking.h"

namespace chronoq::service {

Session::Session(QueueService* service, const auth::Caller& caller)
    : service_(service), ns_(caller.anonymous ? std::string() : caller.ns) {}

Status Session::In(std::string_view param, std::string& topic) const {
  if (topic.find(core::kScopeSeparator) != std::string::npos) {
    // Never a client's name: refused with the sentence of a name holding a control character.
    return core::ValidateTopicParam(param, topic, service_->limits());
  }
  if (!ns_.empty()) topic = core::ScopedTopic(ns_, topic);
  return Status::Ok();
}

void Session::Out(std::string& topic) const {
  if (std::optional<std::string_view> t = core::ClientTopic(ns_, topic)) {
    if (t->size() != topic.size()) topic = std::string(*t);
  }
}

void Session::Out(core::Message& m) const {
  MaskCallbackHeaders(m);
  Named(m);
}

void Session::Named(core::Message& m) const {
  if (ns_.empty()) return;
  Out(m.record.topic);
  if (m.record.dead_letter) Out(m.record.dead_letter->topic);
}

core::Message AsItsClientsSeeIt(const core::Message& m) {
  std::string_view ns;
  std::string_view topic;
  if (!core::SplitScopedTopic(m.record.topic, &ns, &topic) || ns.empty()) return m;
  core::Message shown = m;
  shown.record.topic = std::string(topic);
  if (shown.record.dead_letter) {
    if (std::optional<std::string_view> source =
            core::ClientTopic(ns, m.record.dead_letter->topic)) {
      shown.record.dead_letter->topic = std::string(*source);
    }
  }
  return shown;
}

namespace {

// An error sentence in client names: the service names the internal topic ("... in topic
// 'shop\x1Forders'"); the client knows it as "orders".
void Clean(const std::string& ns, Status& s) {
  if (s.ok()) return;
  const std::string prefix = ns + core::kScopeSeparator;
  const std::string& msg = s.message();
  if (msg.find(prefix) == std::string::npos) return;
  std::string out;
  size_t from = 0;
  for (size_t at = msg.find(prefix); at != std::string::npos; at = msg.find(prefix, from)) {
    out.append(msg, from, at - from);
    from = at + prefix.size();
  }
  out.append(msg, from);
  s = Status(s.code(), std::move(out));
}
template <typename T>
void Clean(const std::string& ns, Result<T>& r) {
  if (r.has_value()) return;
  Status s = r.error();
  Clean(ns, s);
  r = Result<T>(std::move(s));
}

// A callback that puts its answer (value and error sentence) in client names, with `map`, before
// `done` sees it. For answers holding messages: `map` runs in the unnamed namespace too, since
// their callback header values are masked in every namespace (Session::Out).
template <typename T, typename Map>
Callback<T> ShownIn(const std::string& ns, Callback<T> done, Map map) {
  return [ns, done = std::move(done), map = std::move(map)](T v) mutable {
    if (!ns.empty()) Clean(ns, v);
    map(v);
    done(std::move(v));
  };
}

// As ShownIn, for answers that need names mapped only: `done` itself in the unnamed namespace.
template <typename T, typename Map>
Callback<T> MappedIn(const std::string& ns, Callback<T> done, Map map) {
  if (ns.empty()) return done;
  return ShownIn(ns, std::move(done), std::move(map));
}

template <typename T>
Callback<T> CleanedIn(const std::string& ns, Callback<T> done) {
  return MappedIn(ns, std::move(done), [](T&) {});
}

}  // namespace

#define CQ_SESSION_IN(param, topic)             \
  if (Status in = In(param, topic); !in.ok()) { \
    return done(std::move(in));                 \
  }

// Send, SendBatch, Pull and LongPoll: the service masks callback header values where it builds
// these answers (QueueService::Send), so only names remain to map here, and in the unnamed
// namespace `done` goes to the service as it is: no wrapper, no heap allocation per answer.
void Session::Send(SendRequest&& req, Callback<Result<backend::Sent>> done) const {
  CQ_SESSION_IN("topic", req.topic);
  service_->Send(std::move(req),
                 MappedIn(ns_, std::move(done), [s = *this](Result<backend::Sent>& r) {
                   if (r.has_value()) s.Named(r->message);
                 }));
}

void Session::Pull(PullRequest req, Callback<Result<Messages>> done) const {
  CQ_SESSION_IN("topic", req.topic);
  service_->Pull(std::move(req), MappedIn(ns_, std::move(done), [s = *this](Result<Messages>& r) {
                   if (r.has_value()) {
                     for (core::Message& m : *r) s.Named(m);
                   }
                 }));
}

LongPollTicket Session::LongPoll(LongPollRequest req, std::function<bool()> alive,
                                 Callback<Result<Messages>> done) const {
  if (Status in = In("topic", req.pull.topic); !in.ok()) {
    done(std::move(in));
    return nullptr;
  }
  return service_->LongPoll(std::move(req), std::move(alive),
                            MappedIn(ns_, std::move(done), [s = *this](Result<Messages>& r) {
                              if (r.has_value()) {
                                for (core::Message& m : *r) s.Named(m);
                              }
                            }));
}

void Session::Ack(AckRequest req, Callback<Status> done) const {
  CQ_SESSION_IN("topic", req.ref.topic);
  service_->Ack(std::move(req), CleanedIn(ns_, std::move(done)));
}

void Session::SendBatch(SendBatchRequest req,
                        Callback<Result<std::vector<Result<backend::Sent>>>> done) const {
  CQ_SESSION_IN("topic", req.topic);
  service_->SendBatch(
      std::move(req),
      MappedIn(ns_, std::move(done), [s = *this](Result<std::vector<Result<backend::Sent>>>& r) {
        if (!r.has_value()) return;
        for (Result<backend::Sent>& item : *r) {
          if (item.has_value()) s.Named(item->message);
          Clean(s.ns(), item);
        }
      }));
}

void Session::AckBatch(AckBatchRequest req, Callback<Result<std::vector<AckResult>>> done) const {
  CQ_SESSION_IN("topic", req.topic);
  service_->AckBatch(std::move(req),
                     MappedIn(ns_, std::move(done), [ns = ns_](Result<std::vector<AckResult>>& r) {
                       if (!r.has_value()) return;
                       for (AckResult& a : *r) Clean(ns, a.status);
                     }));
}

namespace {
template <typename S>
Callback<Result<core::Message>> MessageOut(const std::string& ns, S s,
                                           Callback<Result<core::Message>> done) {
  return ShownIn(ns, std::move(done), [s = std::move(s)](Result<core::Message>& r) {
    if (r.has_value()) s(*r);
  });
}
}  // namespace

void Session::Update(UpdateRequest req, Callback<Result<core::Message>> done) const {
  CQ_SESSION_IN("topic", req.ref.topic);
  service_->Update(std::move(req),
                   MessageOut(
                       ns_, [s = *this](core::Message& m) { s.Out(m); }, std::move(done)));
}

void Session::Touch(TouchRequest req, Callback<Result<core::Message>> done) const {
  CQ_SESSION_IN("topic", req.ref.topic);
  service_->Touch(std::move(req),
                  MessageOut(
                      ns_, [s = *this](core::Message& m) { s.Out(m); }, std::move(done)));
}

void Session::Count(CountRequest req, Callback<Result<core::Message>> done) const {
  CQ_SESSION_IN("topic", req.ref.topic);
  service_->Count(std::move(req),
                  MessageOut(
                      ns_, [s = *this](core::Message& m) { s.Out(m); }, std::move(done)));
}

void Session::Get(MessageRef req, Callback<Result<core::Message>> done) const {
  CQ_SESSION_IN("topic", req.topic);
  service_->Get(std::move(req),
                MessageOut(
                    ns_, [s = *this](core::Message& m) { s.Out(m); }, std::move(done)));
}

void Session::List(ListRequest req, Callback<Result<backend::ListPage>> done) const {
  CQ_SESSION_IN("topic", req.topic);
  const bool reveal = req.reveal_callback_headers;
  service_->List(std::move(req),
                 ShownIn(ns_, std::move(done), [s = *this, reveal](Result<backend::ListPage>& r) {
                   if (!r.has_value()) return;
                   for (core::Message& m : r->messages) {
                     reveal ? s.Named(m) : s.Out(m);
                   }
                 }));
}

void Session::Delete(DeleteRequest req, Callback<Status> done) const {
  CQ_SESSION_IN("topic", req.ref.topic);
  service_->Delete(std::move(req), CleanedIn(ns_, std::move(done)));
}

void Session::GetTopicInfo(std::string topic, Callback<Result<core::TopicInfo>> done) const {
  CQ_SESSION_IN("topic", topic);
  service_->GetTopicInfo(std::move(topic),
                         MappedIn(ns_, std::move(done), [s = *this](Result<core::TopicInfo>& r) {
                           if (r.has_value()) s.Out(r->topic);
                         }));
}

void Session::ListTopics(Callback<Result<std::vector<core::TopicInfo>>> done) const {
  service_->ListTopics(
      [ns = ns_, done = std::move(done)](Result<std::vector<core::TopicInfo>> r) mutable {
        if (r.has_value()) {
          std::vector<core::TopicInfo> mine;
          mine.reserve(r->size());
          for (core::TopicInfo& t : *r) {
            std::optional<std::string_view> name = core::ClientTopic(ns, t.topic);
            if (!name) continue;  // another namespace's
            if (name->size() != t.topic.size()) t.topic = std::string(*name);
            mine.push_back(std::move(t));
          }
          *r = std::move(mine);
        }
        done(std::move(r));
      });
}

namespace {
template <typename S>
Callback<Result<TopicConfigView>> ViewOut(const std::string& ns, S s,
                                          Callback<Result<TopicConfigView>> done) {
  return MappedIn(ns, std::move(done), [s = std::move(s)](Result<TopicConfigView>& r) {
    if (r.has_value()) s(*r);
  });
}
}  // namespace

void Session::SetTopicConfig(TopicConfigRequest req, Callback<Result<TopicConfigView>> done) const {
  CQ_SESSION_IN("topic", req.topic);
  if (req.dead_letter_topic && !req.dead_letter_topic->empty()) {
    CQ_SESSION_IN("deadLetterTopic", *req.dead_letter_topic);
  }
  service_->SetTopicConfig(std::move(req), ViewOut(
                                               ns_,
                                               [s = *this](TopicConfigView& v) {
                                                 s.Out(v.topic);
                                                 s.Out(v.config.dead_letter_topic);
                                               },
                                               std::move(done)));
}

void Session::GetTopicConfig(std::string topic, Callback<Result<TopicConfigView>> done) const {
  CQ_SESSION_IN("topic", topic);
  service_->GetTopicConfig(std::move(topic), ViewOut(
                                                 ns_,
                                                 [s = *this](TopicConfigView& v) {
                                                   s.Out(v.topic);
                                                   s.Out(v.config.dead_letter_topic);
                                                 },
                                                 std::move(done)));
}

void Session::DeleteTopicConfig(std::string topic, Callback<Status> done) const {
  CQ_SESSION_IN("topic", topic);
  service_->DeleteTopicConfig(std::move(topic), CleanedIn(ns_, std::move(done)));
}

void Session::Purge(PurgeRequest req, Callback<Result<int64_t>> done) const {
  CQ_SESSION_IN("topic", req.topic);
  service_->Purge(std::move(req), CleanedIn(ns_, std::move(done)));
}

void Session::Redrive(RedriveRequest req, Callback<Result<int64_t>> done) const {
  CQ_SESSION_IN("topic", req.topic);
  service_->Redrive(std::move(req), CleanedIn(ns_, std::move(done)));
}

void Session::GetMsgHistory(MessageRef req,
                            Callback<Result<std::vector<core::HistoryEntry>>> done) const {
  CQ_SESSION_IN("topic", req.topic);
  service_->GetMsgHistory(std::move(req), CleanedIn(ns_, std::move(done)));
}

#undef CQ_SESSION_IN

}  // namespace chronoq::service
