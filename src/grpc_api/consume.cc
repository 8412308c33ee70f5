// Consume: a bidirectional stream with credit over the service's long polls. The first request
// subscribes (topic, credit, ack timeout); while the messages sent on the stream and not yet
// acked or nacked on it are fewer than the credit, one long poll for the difference is parked
// in the service (the same parking, waking and caps as longPollingMsg), and what it answers is
// written to the stream. Acks and nacks on the stream are one AckBatch each, answered on the
// stream, and give their credit back. A stream that ends (the client leaves, its deadline, a bad
// request, the server's shutdown) cancels its parked poll; the messages it was sent and did not
// ack wait for their ack deadline like any delivery.
//
// Concurrency: gRPC's reactions, the service's answers (on backend or scheduler threads) and the
// shutdown all change the stream's state under its lock; only Pump() calls gRPC (StartRead,
// StartWrite, Finish), one thread at a time and never under the lock (gRPC may run a reaction
// inline). Finish is the last call Pump makes on the reactor, which gRPC deletes after OnDone;
// the state (Stream) lives on while a service answer or timer still holds it.
#include <fmt/format.h>
#include <grpcpp/grpcpp.h>
#include <grpcpp/support/server_callback.h>

#include <algorithm>
#include <chrono>
#include <deque>
#include <optional>
#include <string>
#include <unordered_set>

#include "base/log.h"
#include "base/mutex.h"
#include "base/thread_annotations.h"
#include "chronoq/v1/delay_queue.grpc.pb.h"
#include "grpc_api/api_context.h"
#include "grpc_api/convert.h"

namespace chronoq::grpc_api {
namespace {

using Reactor = grpc::ServerBidiReactor<v1::ConsumeRequest, v1::ConsumeResponse>;

// How long one parked poll of a stream waits (the service clamps it to
// max-long-polling-timeout-millis); when it times out empty the stream parks again.
constexpr int64_t kPollMillis = 24 * 3600 * 1000;
// A poll answered empty sooner than this (the parking caps were reached) is retried after
// kRetryDelay, not at once.
constexpr Millis kEarlyEmpty{1000};
constexpr Millis kRetryDelay{200};
// No message is taken for a stream this close to its deadline (it could not be written in time).
constexpr std::chrono::milliseconds kDeadlineMargin{20};

grpc::Status ToGrpc(const Status& s) {
  return grpc::Status(static_cast<grpc::StatusCode>(GrpcCode(s.code())), s.message());
}

grpc::Status BadRequest(std::string sentence) {
  return grpc::Status(grpc::StatusCode::INVALID_ARGUMENT, std::move(sentence));
}

class Stream : public std::enable_shared_from_this<Stream> {
 public:
  Stream(ApiContext* ctx, service::Session session, std::chrono::system_clock::time_point deadline,
         Reactor* reactor)
      : ctx_(ctx),
        session_(std::move(session)),
        start_(std::chrono::steady_clock::now()),
        deadline_(deadline - kDeadlineMargin),
        reactor_(reactor) {
    ctx_->stats->StreamOpened();
  }

  // Registers the stream and reads the subscription.
  void Start() CQ_EXCLUDES(mu_) {
    std::weak_ptr<Stream> weak = weak_from_this();
    const uint64_t id = ctx_->streams->Add([weak] {
      if (auto s = weak.lock()) s->End(grpc::Status::OK);
    });
    {
      base::MutexLock lock(mu_);
      registration_ = id;
      want_read_ = true;
    }
    if (id == 0) End(grpc::Status::OK);  // the server is stopping
    Pump();
  }

  void OnReadDone(bool ok) CQ_EXCLUDES(mu_) {
    Next next;
    {
      base::MutexLock lock(mu_);
      reading_ = false;
      if (end_) return;
      if (!ok) {
        // The client closed its side (or the stream broke: OnCancel says so then). Subscribed,
        // it goes on receiving (up to its credit, as nothing can ack any more) until it cancels
        // or its deadline passes: `grpcurl -d '{"subscribe":...}'` receives `credit` messages.
        if (subscribed_) return;
        next.end = grpc::Status::OK;
      } else {
        next = Take();
      }
    }
    if (next.end) return End(std::move(*next.end));
    if (next.ack) {
      session_.AckBatch(
          std::move(*next.ack),
          [self = shared_from_this()](Result<std::vector<service::AckResult>> res) mutable {
            self->OnAcked(std::move(res));
          });
    } else {
      Poll();
    }
    Pump();
  }

  void OnWriteDone(bool ok) CQ_EXCLUDES(mu_) {
    {
      base::MutexLock lock(mu_);
      writing_ = false;
    }
    // A failed write ends the stream; if it had ended already (EndStreams, a cancel) while the
    // write was in flight, this Pump is the one that calls Finish, which waited for the write.
    if (!ok) End(grpc::Status(grpc::StatusCode::CANCELLED, "the stream broke"));
    Pump();
  }

  void OnCancel() { End(grpc::Status(grpc::StatusCode::CANCELLED, "the client went away")); }

  void OnDone() CQ_EXCLUDES(mu_) {
    uint64_t id = 0;
    {
      base::MutexLock lock(mu_);
      id = registration_;
    }
    if (id != 0) ctx_->streams->Remove(id);
    ctx_->stats->StreamClosed();
  }

  // Ends the stream with `status` (the first end wins): its poll is cancelled, nothing more is
  // written, and Finish follows the write in flight.
  void End(grpc::Status status) CQ_EXCLUDES(mu_) {
    service::LongPollTicket ticket;
    {
      base::MutexLock lock(mu_);
      if (end_) return;
      end_ = std::move(status);
      gone_.store(true);
      ticket = std::move(ticket_);
      out_.clear();  // sent by the service, not written: they wait for their ack deadline
    }
    if (ticket) ctx_->service->CancelLongPoll(ticket);
    Pump();
  }

 private:
  // What a request read from the client asks for, decided under the lock and done after.
  struct Next {
    std::optional<grpc::Status> end;              // end the stream so
    std::optional<service::AckBatchRequest> ack;  // ack on the stream
    // Neither: read on and poll (a subscription, more credit).
  };

  // The request in in_: checks it against the stream's state, applies a subscription or more
  // credit, and says what to do next.
  Next Take() CQ_REQUIRES(mu_) {
    auto bad = [](std::string sentence) { return Next{BadRequest(std::move(sentence)), {}}; };
    const bool first = !subscribed_;
    switch (in_.kind_case()) {
      case v1::ConsumeRequest::kSubscribe: {
        const v1::ConsumeRequest::Subscribe& s = in_.subscribe();
        if (!first) return bad("subscribe is given twice on one Consume stream");
        if (s.credit() < 1) {
          return bad(fmt::format("credit must be at least 1, got {}", s.credit()));
        }
        // The service checks the topic at the first poll: a bad one ends the stream with its
        // sentence.
        subscribed_ = true;
        send_metadata_ = true;
        topic_ = s.topic();
        credit_ = s.credit();
        if (s.has_ack_timeout_millis()) ack_timeout_ = s.ack_timeout_millis();
        break;
      }
      case v1::ConsumeRequest::kAck: {
        if (first) return bad("the first request of a Consume stream must be a subscribe");
        const std::string& topic = in_.ack().topic();
        if (!topic.empty() && topic != topic_) {
          return bad(fmt::format("ack.topic is '{}' but the stream consumes '{}'; leave it empty",
                                 topic.substr(0, 64), topic_));
        }
        service::AckBatchRequest req = FromProto(in_.ack());
        req.topic = topic_;
        want_read_ = true;
        return Next{std::nullopt, std::move(req)};
      }
      case v1::ConsumeRequest::kAddCredit:
        if (first) return bad("the first request of a Consume stream must be a subscribe");
        if (in_.add_credit() < 1) {
          return bad(fmt::format("add_credit must be at least 1, got {}", in_.add_credit()));
        }
        credit_ = std::min<int64_t>(credit_ + in_.add_credit(), INT32_MAX);
        break;
      case v1::ConsumeRequest::KIND_NOT_SET:
        return bad("a Consume request must set one of subscribe, ack or add_credit");
    }
    want_read_ = true;
    return Next{};
  }

  // Parks one long poll for the credit left, unless one is parked or none is left.
  void Poll() CQ_EXCLUDES(mu_) {
    service::LongPollRequest req;
    uint64_t gen = 0;
    {
      base::MutexLock lock(mu_);
      const int64_t left = credit_ - static_cast<int64_t>(unacked_.size());
      if (end_ || !subscribed_ || polling_ || left <= 0) return;
      polling_ = true;
      gen = ++poll_gen_;
      req.pull.topic = topic_;
      req.pull.batch = static_cast<int32_t>(std::min<int64_t>(left, INT32_MAX));
      req.pull.ack_timeout_millis = ack_timeout_;
      req.timeout_millis = kPollMillis;
    }
    std::weak_ptr<Stream> weak = weak_from_this();
    const TimePoint start = ctx_->clock->Now();
    service::LongPollTicket ticket = session_.LongPoll(
        std::move(req),
        [weak] {
          auto s = weak.lock();
          return s != nullptr && !s->gone_.load() &&
                 std::chrono::system_clock::now() < s->deadline_;
        },
        [self = shared_from_this(), start](Result<service::Messages> res) mutable {
          self->OnPolled(std::move(res), start);
        });
    bool cancel = false;
    {
      base::MutexLock lock(mu_);
      // Still the poll in flight (it may have been answered, and another parked, inline).
      if (polling_ && poll_gen_ == gen) {
        ticket_ = ticket;
        cancel = end_.has_value();
      }
    }
    if (cancel && ticket) ctx_->service->CancelLongPoll(ticket);
  }

  void OnPolled(Result<service::Messages> res, TimePoint start) CQ_EXCLUDES(mu_) {
    {
      base::MutexLock lock(mu_);
      polling_ = false;
      ticket_.reset();
      if (end_) return;
      if (!res.has_value()) {
        lock.Unlock();
        return End(ToGrpc(res.error()));
      }
      if (res->empty()) {
        if (ctx_->clock->Now() - start < kEarlyEmpty) {
          lock.Unlock();
          std::weak_ptr<Stream> weak = weak_from_this();
          ctx_->scheduler->Schedule(ctx_->clock->Now() + kRetryDelay, [weak] {
            if (auto s = weak.lock()) s->Poll();
          });
          return;
        }
      }
      for (core::Message& m : *res) {
        unacked_.insert(m.record.msg_id);
        ToProto(m, out_.emplace_back().mutable_message());
      }
    }
    Poll();
    Pump();
  }

  void OnAcked(Result<std::vector<service::AckResult>> res) CQ_EXCLUDES(mu_) {
    {
      base::MutexLock lock(mu_);
      if (end_) return;
      if (!res.has_value()) {
        lock.Unlock();
        return End(ToGrpc(res.error()));
      }
      // Acked, nacked or refused (its deadline passed, say): the client holds it no more.
      for (const service::AckResult& r : *res) unacked_.erase(r.msg_id);
      ToProto(*res, out_.emplace_back().mutable_acked());
    }
    Poll();
    Pump();
  }

  // Makes the gRPC calls the state asks for; see the file comment.
  void Pump() CQ_EXCLUDES(mu_) {
    std::shared_ptr<Stream> hold = shared_from_this();
    base::MutexLock lock(mu_);
    if (pumping_ || reactor_ == nullptr) return;  // the pumping thread sees the change
    pumping_ = true;
    for (;;) {
      Reactor* r = reactor_;
      // The initial metadata goes out when the subscription is read (on gRPC's thread), not
      // with the first message: gRPC 1.51 completed a stream's first write 80-90 ms late when
      // it carried the metadata and was started on another thread (the scheduler's), holding
      // up the messages behind it (docs/benchmarks.md, issue 17).
      if (send_metadata_ && !end_) {
        send_metadata_ = false;
        lock.Unlock();
        r->StartSendInitialMetadata();
        lock.Lock();
      } else if (want_read_ && !reading_ && !end_) {
        want_read_ = false;
        reading_ = true;
        lock.Unlock();
        r->StartRead(&in_);
        lock.Lock();
      } else if (!writing_ && !out_.empty() && !end_) {
        current_ = std::move(out_.front());
        out_.pop_front();
        writing_ = true;
        lock.Unlock();
        r->StartWrite(&current_);
        lock.Lock();
      } else if (end_ && !writing_) {
        reactor_ = nullptr;
        grpc::Status status = *end_;
        lock.Unlock();
        ctx_->stats->Record(Method::kConsume, status.error_code(),
                            std::chrono::duration_cast<std::chrono::nanoseconds>(
                                std::chrono::steady_clock::now() - start_)
                                .count());
        r->Finish(std::move(status));
        return;  // the reactor's last call; pumping_ stays set
      } else {
        pumping_ = false;
        return;
      }
    }
  }

  ApiContext* const ctx_;
  const service::Session session_;  // the stream's caller (authenticated when it opened)
  const std::chrono::steady_clock::time_point start_;
  std::atomic<bool> gone_{false};  // ended: a parked poll must take nothing
  // The client's deadline less kDeadlineMargin: no message is taken for the stream later.
  const std::chrono::system_clock::time_point deadline_;

  base::Mutex mu_;
  Reactor* reactor_ CQ_GUARDED_BY(mu_);  // null once Finish is called
  uint64_t registration_ CQ_GUARDED_BY(mu_) = 0;
  bool pumping_ CQ_GUARDED_BY(mu_) = false;
  bool want_read_ CQ_GUARDED_BY(mu_) = false;
  bool send_metadata_ CQ_GUARDED_BY(mu_) = false;
  bool reading_ CQ_GUARDED_BY(mu_) = false;
  bool writing_ CQ_GUARDED_BY(mu_) = false;
  std::optional<grpc::Status> end_ CQ_GUARDED_BY(mu_);
  // Read into by gRPC between StartRead and OnReadDone; written from between StartWrite and
  // OnWriteDone.
  v1::ConsumeRequest in_;
  v1::ConsumeResponse current_;
  std::deque<v1::ConsumeResponse> out_ CQ_GUARDED_BY(mu_);
  // The subscription.
  bool subscribed_ CQ_GUARDED_BY(mu_) = false;
  std::string topic_ CQ_GUARDED_BY(mu_);
  std::optional<int64_t> ack_timeout_ CQ_GUARDED_BY(mu_);
  int64_t credit_ CQ_GUARDED_BY(mu_) = 0;
  std::unordered_set<std::string> unacked_ CQ_GUARDED_BY(mu_);  // sent here, not acked here
  bool polling_ CQ_GUARDED_BY(mu_) = false;
  uint64_t poll_gen_ CQ_GUARDED_BY(mu_) = 0;
  service::LongPollTicket ticket_ CQ_GUARDED_BY(mu_);
};

class ConsumeReactor final : public Reactor {
 public:
  ConsumeReactor(ApiContext* ctx, service::Session session,
                 std::chrono::system_clock::time_point deadline)
      : stream_(std::make_shared<Stream>(ctx, std::move(session), deadline, this)) {
    stream_->Start();
  }
  void OnReadDone(bool ok) override { stream_->OnReadDone(ok); }
  void OnWriteDone(bool ok) override { stream_->OnWriteDone(ok); }
  void OnCancel() override { stream_->OnCancel(); }
  void OnDone() override {
    stream_->OnDone();
    delete this;
  }

 private:
  std::shared_ptr<Stream> stream_;
};

}  // namespace

// A stream refused by authentication: finished at once with the refusal.
class RefusedReactor final : public Reactor {
 public:
  explicit RefusedReactor(grpc::Status status) { Finish(std::move(status)); }
  void OnDone() override { delete this; }
};

Reactor* NewConsumeReactor(ApiContext* ctx, grpc::CallbackServerContext* call) {
  // Pulls and acks: consumer or admin (the same roles for both, auth/access.cc).
  auth::Decision d = Authenticate(ctx, call, auth::Operation::kPull);
  if (d.verdict != auth::Verdict::kAllowed) {
    return new RefusedReactor(
        grpc::Status(static_cast<grpc::StatusCode>(RefusalCode(d.verdict)), d.message));
  }
  return new ConsumeReactor(ctx, service::Session(ctx->service, d.caller), call->deadline());
}

}  // namespace chronoq::grpc_api
