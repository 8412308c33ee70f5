// PushCall and PushOutcome: one attempt to deliver one message to a push target (an HTTP URL, a
// gRPC method or a Kafka topic; docs/api-extensions.md section 5), and what came of it. Plain
// values: the scheduler builds a PushCall from a message and its effective `callback`, hands it
// to a Pusher (push/pusher.h) and acks or retries the message by the PushOutcome.
//
// Idempotency: every attempt carries the message id (HTTP header `X-Chronoq-Msg-Id`, gRPC
// metadata `x-chronoq-msg-id`, Kafka record header and, when `key` is empty, record key), the
// chronoq topic (`x-chronoq-topic`) and the 1-based attempt number (`x-chronoq-attempt`), so a
// receiver can drop the duplicates that at-least-once delivery allows.
//
// Thread-safety: value types; the functions are pure and thread-safe.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "base/status.h"
#include "base/time.h"

namespace chronoq::push {

enum class Kind { kHttp, kGrpc, kKafka };

// How much of a message's lease an attempt leaves, after its timeout, for writing its outcome
// (PushCall::outcome_reserve): a call that succeeds at the last moment of its timeout is acked
// by the scheduler after it, and the ack must land before the lease ends, or another node may
// take the message meanwhile and push it again without any failure. The write is one storage
// call (a RocksDB group commit or a Redis round trip: milliseconds), but it may wait behind the
// topic's previous outcome write, a slow fsync, a Redis write's wait for its replicas or a
// failover, and on Redis another node judges the lease's end by its own clock, which may run
// ahead of this node's. One second covers all of that with room; it is half the scheduler's
// lease margin (service::PushOptions::lease_margin, 2 s:
// a lease is the callback's timeout plus the margin), so a call may still wait up to one second
// for its start (a starved node, a target at its in-flight limit) before it is handed back.
inline constexpr std::chrono::milliseconds kOutcomeReserve{1000};

// "http", "grpc", "kafka".
std::string_view KindName(Kind kind);

struct PushCall {
  Kind kind = Kind::kHttp;
  std::string msg_id;   // idempotency key (see above)
  std::string topic;    // the chronoq topic
  int32_t attempt = 1;  // 1-based
  // The whole call: connect, send and answer (HTTP, gRPC deadline), or the broker's
  // acknowledgement (Kafka message timeout). Time spent queued behind the target's in-flight
  // limit is not counted. At least 1 ms.
  std::chrono::milliseconds timeout{5000};
  // The end of the lease the store holds the message by for this attempt, on the Pusher's clock
  // (PusherOptions::clock). The call starts only while now + timeout + outcome_reserve <=
  // lease_end, when it is admitted and again when it leaves its target's queue; otherwise it is
  // answered busy and lease_short without an attempt. So an attempt never outlives its lease,
  // and its outcome (the ack of a success) still has outcome_reserve to reach the store before
  // the lease ends: after that another attempt, on this node or another, may push the message
  // too. kTimeMax: no lease.
  TimePoint lease_end = kTimeMax;
  // The part of the lease kept, after the call's timeout, for writing the attempt's outcome (see
  // lease_end and kOutcomeReserve).
  std::chrono::milliseconds outcome_reserve = kOutcomeReserve;

  // kHttp: "http[s]://host[:port][/path][?query]".
  std::string url;
  std::string method = "POST";
  // Sent as given, after ours; they replace User-Agent and content_type, and are dropped when
  // named Host, Content-Length, Transfer-Encoding, Connection or X-Chronoq-*.
  std::vector<std::pair<std::string, std::string>> headers;
  std::string content_type;  // empty: no Content-Type header

  // kGrpc: "host:port" and "/pkg.Service/Method"; `body` is the request message's bytes.
  std::string grpc_target;
  std::string grpc_method;

  // kKafka: "host1:9092,host2:9092", the Kafka topic, the record key (empty: msg_id).
  std::string brokers;
  std::string kafka_topic;
  std::string key;

  // HTTP request body / gRPC request bytes / Kafka record value.
  std::string body;
};

struct PushOutcome {
  // The target accepted the message: HTTP 2xx, gRPC OK, Kafka acknowledged with acks=all.
  bool ok = false;
  // The call was not attempted (the target's in-flight and queue limits are full, the Pusher
  // is shutting down, or its lease is too short): the scheduler should not count it as an
  // attempt. Implies !ok.
  bool busy = false;
  // Not attempted because the message's lease (PushCall::lease_end) ends before the call's
  // timeout would: the node took it too long ago (starved, or its target's queue was long).
  // Implies busy.
  bool lease_short = false;
  // When !ok, one sentence for the message's `lastError`: "HTTP 500 Internal Server Error:
  // <answer snippet>", "connection refused to 127.0.0.1:9", "timed out after 5000 ms",
  // "gRPC UNAVAILABLE: <message>", "Kafka _MSG_TIMED_OUT: <text>", "target h:p busy: ...".
  std::string error;
  // HTTP status code when an answer came (0 otherwise); gRPC status code when the call ended
  // (-1 otherwise). For metrics and tests.
  int code = 0;
  // From the start of the attempt (after any wait in the target's queue) to its outcome.
  std::chrono::microseconds latency{0};
  // Time spent waiting in the target's queue before the attempt started.
  std::chrono::microseconds queued{0};
};

// The isolation unit of a call, also the label of per-target metrics: "host:port" of an HTTP
// URL (port 80, or 443 for https, when absent), the gRPC target, the Kafka brokers string. For an
// HTTP URL that does not parse, the URL itself.
std::string TargetKey(const PushCall& call);

// The parts of an HTTP URL as the transport uses them.
struct HttpUrl {
  bool tls = false;    // https
  std::string host;    // without brackets for IPv6 literals
  uint16_t port = 80;  // 443 by default for https
  std::string target;  // origin form: "/path?query", "/" when absent
};
// Parses "http[s]://host[:port][/path][?query][#fragment]" by core::ParseCallbackUrl's rules (the
// ones a send's callback is checked by; the host lower-cased, the fragment dropped);
// kInvalidArgument with its sentence otherwise.
Status ParseHttpUrl(std::string_view url, HttpUrl* out);

// Checks the fields a call of its kind needs (a parsable http(s):// URL and an HTTP method token;
// a gRPC "host:port" target and a "/Service/Method" method; Kafka brokers and topic), and a
// positive timeout. kInvalidArgument with a sentence naming the field otherwise. Pusher::Push
// runs it too and fails such a call at once (not busy).
Status ValidatePushCall(const PushCall& call);

}  // namespace chronoq::push
