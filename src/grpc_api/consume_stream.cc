// Consume (consume_stream.h): a bidirectional stream with credit over the service's long polls.
// The first request subscribes (topic, credit, ack timeout); while the messages sent on the
// stream and not yet acked or nacked on it are fewer than the credit, one long poll for the
// difference is parked in the service (the same parking, waking and caps as longPollingMsg), and
// what it answers is written to the stream. Acks and nacks on the stream are one AckBatch each,
// answered on the stream, and give their credit back. A stream that ends (the client leaves, its
// deadline, a bad request, the server's shutdown) cancels its parked poll; the messages it was
// sent and did not ack wait for their ack deadline like any delivery.
//
// Concurrency: the engine's reports, the service's answers (on backend or scheduler threads) and
// the shutdown all change the stream's state under its lock; only Pump() calls the transport
// (ReadRequest, WriteResponse, FinishCall), one thread at a time and never under the lock (an
// engine may report inline). FinishCall is the last call Pump makes on the transport; the state
// (Stream) lives on while a service answer or timer still holds it.
#include "grpc_api/consume_stream.h"

#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <deque>
#include <optional>
#include <string>
#include <unordered_set>

#include "base/mutex.h"
#include "base/thread_annotations.h"
#include "chronoq/v1/delay_queue.pb.h"
#include "grpc_api/convert.h"

namespace chronoq::grpc_api {
namespace {

// How long one parked poll of a stream waits (the service clamps it to
// max-long-polling-timeout-millis); when it times out empty the stream parks again.
constexpr int64_t kPollMillis = 24 * 3600 * 1000;
// A poll answered empty sooner than this (the parking caps were reached) is retried after
// kRetryDelay, not at once.
constexpr Millis kEarlyEmpty{1000};
constexpr Millis kRetryDelay{200};
// No message is taken for a stream this close to its deadline (it could not be written in time).
constexpr std::chrono::milliseconds kDeadlineMargin{20};

// gRPC status codes used here.
constexpr int kOk = 0;
constexpr int kCancelled = 1;
constexpr int kInvalidArgument = 3;

// How a stream ends: a gRPC status code and its sentence.
struct Ending {
  int code = kOk;
  std::string message;
};

Ending FromStatus(const Status& s) { return Ending{GrpcCode(s.code()), s.message()}; }

Ending BadRequest(std::string sentence) { return Ending{kInvalidArgument, std::move(sentence)}; }

class Stream final : public ConsumeStream, public std::enable_shared_from_this<Stream> {
 public:
  Stream(const ApiContext* ctx, service::Session session,
         std::chrono::system_clock::time_point deadline, ConsumeTransport* transport)
      : ctx_(ctx),
        session_(std::move(session)),
        start_(std::chrono::steady_clock::now()),
        deadline_(deadline == std::chrono::system_clock::time_point::max()
                      ? deadline
                      : deadline - kDeadlineMargin),
        transport_(transport) {
    ctx_->stats->StreamOpened();
  }

  // Registers the stream and reads the subscription.
  void Start() override CQ_EXCLUDES(mu_) {
    std::weak_ptr<Stream> weak = weak_from_this();
    const uint64_t id = ctx_->streams->Add([weak] {
      if (auto s = weak.lock()) s->Stop(Ending{});
    });
    {
      base::MutexLock lock(mu_);
      registration_ = id;
      want_read_ = true;
    }
    if (id == 0) Stop(Ending{});  // the server is stopping
    Pump();
  }

  void OnReadDone(bool ok) override CQ_EXCLUDES(mu_) {
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
        next.end = Ending{};
      } else {
        next = Take();
      }
    }
    if (next.end) return Stop(std::move(*next.end));
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

  void OnWriteDone(bool ok) override CQ_EXCLUDES(mu_) {
    {
      base::MutexLock lock(mu_);
      writing_ = false;
    }
    // A failed write ends the stream; if it had ended already (EndStreams, a cancel) while the
    // write was in flight, this Pump is the one that calls Finish, which waited for the write.
    if (!ok) Stop(Ending{kCancelled, "the stream broke"});
    Pump();
  }

  void OnCancel() override { Stop(Ending{kCancelled, "the client went away"}); }

  void OnDone() override CQ_EXCLUDES(mu_) {
    uint64_t id = 0;
    {
      base::MutexLock lock(mu_);
      id = registration_;
    }
    if (id != 0) ctx_->streams->Remove(id);
    ctx_->stats->StreamClosed();
  }

  void End(int code, std::string message) override { Stop(Ending{code, std::move(message)}); }

 private:
  // End(): the first end wins; its poll is cancelled, nothing more is written, and FinishCall
  // follows the write in flight.
  void Stop(Ending status) CQ_EXCLUDES(mu_) {
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

  // What a request read from the client asks for, decided under the lock and done after.
  struct Next {
    std::optional<Ending> end;                    // end the stream so
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
        return Stop(FromStatus(res.error()));
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
        return Stop(FromStatus(res.error()));
      }
      // Acked, nacked or refused (its deadline passed, say): the client holds it no more.
      for (const service::AckResult& r : *res) unacked_.erase(r.msg_id);
      ToProto(*res, out_.emplace_back().mutable_acked());
    }
    Poll();
    Pump();
  }

  // Makes the transport calls the state asks for; see the file comment.
  void Pump() CQ_EXCLUDES(mu_) {
    std::shared_ptr<Stream> hold = shared_from_this();
    base::MutexLock lock(mu_);
    if (pumping_ || transport_ == nullptr) return;  // the pumping thread sees the change
    pumping_ = true;
    for (;;) {
      ConsumeTransport* t = transport_;
      // The initial metadata goes out when the subscription is read (on gRPC's thread), not
      // with the first message: gRPC 1.51 completed a stream's first write 80-90 ms late when
      // it carried the metadata and was started on another thread (the scheduler's), holding
      // up the messages behind it (docs/benchmarks.md, issue 17).
      if (send_metadata_ && !end_) {
        send_metadata_ = false;
        lock.Unlock();
        t->SendMetadata();
        lock.Lock();
      } else if (want_read_ && !reading_ && !end_) {
        want_read_ = false;
        reading_ = true;
        lock.Unlock();
        t->ReadRequest(&in_);
        lock.Lock();
      } else if (!writing_ && !out_.empty() && !end_) {
        current_ = std::move(out_.front());
        out_.pop_front();
        writing_ = true;
        lock.Unlock();
        t->WriteResponse(&current_);
        lock.Lock();
      } else if (end_ && !writing_) {
        transport_ = nullptr;
        Ending status = *end_;
        lock.Unlock();
        ctx_->stats->Record(Method::kConsume, status.code,
                            std::chrono::duration_cast<std::chrono::nanoseconds>(
                                std::chrono::steady_clock::now() - start_)
                                .count());
        t->FinishCall(status.code, std::move(status.message));
        return;  // the transport's last call; pumping_ stays set
      } else {
        pumping_ = false;
        return;
      }
    }
  }

  const ApiContext* const ctx_;
  const service::Session session_;  // the stream's caller (authenticated when it opened)
  const std::chrono::steady_clock::time_point start_;
  std::atomic<bool> gone_{false};  // ended: a parked poll must take nothing
  // The client's deadline less kDeadlineMargin: no message is taken for the stream later.
  const std::chrono::system_clock::time_point deadline_;

  base::Mutex mu_;
  ConsumeTransport* transport_ CQ_GUARDED_BY(mu_);  // null once FinishCall is called
  uint64_t registration_ CQ_GUARDED_BY(mu_) = 0;
  bool pumping_ CQ_GUARDED_BY(mu_) = false;
  bool want_read_ CQ_GUARDED_BY(mu_) = false;
  bool send_metadata_ CQ_GUARDED_BY(mu_) = false;
  bool reading_ CQ_GUARDED_BY(mu_) = false;
  bool writing_ CQ_GUARDED_BY(mu_) = false;
  std::optional<Ending> end_ CQ_GUARDED_BY(mu_);
  // Read into by the transport between ReadRequest and OnReadDone; written from between
  // WriteResponse and OnWriteDone.
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

}  // namespace

std::shared_ptr<ConsumeStream> NewConsumeStream(const ApiContext* ctx,
                                                std::optional<std::string_view> authorization,
                                                std::chrono::system_clock::time_point deadline,
                                                ConsumeTransport* transport) {
  // Pulls and acks: consumer or admin (the same roles for both, auth/access.cc).
  auth::Decision d = AuthenticateHeader(ctx, authorization, auth::Operation::kPull);
  if (d.verdict != auth::Verdict::kAllowed) {
    transport->FinishCall(RefusalCode(d.verdict), d.message);
    return nullptr;
  }
  return std::make_shared<Stream>(ctx, service::Session(ctx->service, d.caller), deadline,
                                  transport);
}

}  // namespace chronoq::grpc_api
