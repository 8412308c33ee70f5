#include "grpc_api/convert.h"

#include <algorithm>
#include <utility>

#include "chronoq/v1/delay_queue.pb.h"

namespace chronoq::grpc_api {
namespace {

template <typename T, typename P>
std::optional<T> Opt(bool has, P value) {
  return has ? std::optional<T>(static_cast<T>(value)) : std::nullopt;
}

// The proto's callback as the core value (ValidateCallback, in the service, judges it).
Result<core::Callback> FromProto(const v1::Callback& p) {
  core::Callback cb;
  switch (p.target_case()) {
    case v1::Callback::kHttp: {
      cb.type = core::CallbackType::kHttp;
      cb.url = p.http().url();
      if (!p.http().method().empty()) cb.method = p.http().method();
      for (const auto& [k, v] : p.http().headers()) cb.headers.emplace_back(k, v);
      std::sort(cb.headers.begin(), cb.headers.end());  // a proto map has no order
      cb.raw_body = p.http().raw_body();
      break;
    }
    case v1::Callback::kGrpc:
      cb.type = core::CallbackType::kGrpc;
      cb.target = p.grpc().target();
      cb.method = p.grpc().method();
      cb.base64 = p.grpc().base64();
      break;
    case v1::Callback::kKafka:
      cb.type = core::CallbackType::kKafka;
      cb.method.clear();
      cb.brokers = p.kafka().brokers();
      cb.kafka_topic = p.kafka().topic();
      cb.key = p.kafka().key();
      break;
    case v1::Callback::TARGET_NOT_SET:
      return InvalidArgument("callback has no target: set one of http, grpc or kafka");
  }
  if (p.has_timeout_millis()) cb.timeout = Millis(p.timeout_millis());
  if (p.has_retry_interval_millis()) cb.retry_interval = Millis(p.retry_interval_millis());
  return cb;
}

void ToProto(const core::Callback& cb, v1::Callback* out) {
  switch (cb.type) {
    case core::CallbackType::kHttp: {
      v1::Callback::Http* h = out->mutable_http();
      h->set_url(cb.url);
      h->set_method(cb.method);
      for (const auto& [k, v] : cb.headers) (*h->mutable_headers())[k] = v;
      h->set_raw_body(cb.raw_body);
      break;
    }
    case core::CallbackType::kGrpc:
      out->mutable_grpc()->set_target(cb.target);
      out->mutable_grpc()->set_method(cb.method);
      out->mutable_grpc()->set_base64(cb.base64);
      break;
    case core::CallbackType::kKafka:
      out->mutable_kafka()->set_brokers(cb.brokers);
      out->mutable_kafka()->set_topic(cb.kafka_topic);
      out->mutable_kafka()->set_key(cb.key);
      break;
  }
  out->set_timeout_millis(cb.timeout.count());
  if (cb.retry_interval) out->set_retry_interval_millis(cb.retry_interval->count());
}

}  // namespace

int GrpcCode(Errc code) {
  switch (code) {
    case Errc::kOk:
      return 0;
    case Errc::kInvalidArgument:
      return 3;
    case Errc::kNotFound:
      return 5;
    case Errc::kAlreadyExists:
      return 6;
    case Errc::kResourceExhausted:
      return 8;
    case Errc::kInvalidState:
      return 9;
    case Errc::kConflict:
      return 10;
    case Errc::kUnavailable:
    case Errc::kTryLater:
    case Errc::kTimeout:
      return 14;
    case Errc::kIOError:
    case Errc::kCorruption:
    case Errc::kInternal:
      return 13;
  }
  return 13;
}

service::SendRequest FromProto(const v1::SendRequest& p, Status* error) {
  service::SendRequest s;
  s.topic = p.topic();
  s.msg_id = p.msg_id();
  s.msg = p.msg();
  s.delay_millis = Opt<int64_t>(p.has_delay_millis(), p.delay_millis());
  s.trigger_time = Opt<int64_t>(p.has_trigger_time(), p.trigger_time());
  s.ttl_millis = Opt<int64_t>(p.has_ttl_millis(), p.ttl_millis());
  s.max_retry = Opt<int32_t>(p.has_max_retry(), p.max_retry());
  s.priority = Opt<int64_t>(p.has_priority(), p.priority());
  s.count_trigger = Opt<int64_t>(p.has_count_trigger(), p.count_trigger());
  if (p.has_callback()) {
    Result<core::Callback> cb = FromProto(p.callback());
    if (cb.has_value()) {
      s.callback = std::move(*cb);
    } else if (error->ok()) {
      *error = cb.error();
    }
  }
  return s;
}

service::SendRequest FromProtoItem(const v1::SendRequest& p, const std::string& batch_topic,
                                   Status* unreadable) {
  if (!p.topic().empty() && p.topic() != batch_topic) {
    *unreadable = InvalidArgument("topic is given once for the whole batch, not per message");
  }
  return FromProto(p, unreadable);
}

service::AckBatchRequest FromProto(const v1::AckRequest& p) {
  service::AckBatchRequest a;
  a.topic = p.topic();
  a.ack.assign(p.ack().begin(), p.ack().end());
  a.nack.assign(p.nack().begin(), p.nack().end());
  a.reason = p.reason();
  return a;
}

Result<service::TopicConfigRequest> FromProto(const v1::TopicConfig& p) {
  service::TopicConfigRequest c;
  if (p.has_callback()) {
    // An empty Callback message removes the topic's callback (HTTP: callback="").
    if (p.callback().target_case() == v1::Callback::TARGET_NOT_SET) {
      c.callback = std::optional<core::Callback>();
    } else {
      Result<core::Callback> cb = FromProto(p.callback());
      if (!cb.has_value()) return cb.error();
      c.callback = std::move(*cb);
    }
  }
  c.topic = p.topic();
  c.capacity = Opt<int64_t>(p.has_capacity(), p.capacity());
  c.ttl_millis = Opt<int64_t>(p.has_ttl_millis(), p.ttl_millis());
  c.max_retry = Opt<int64_t>(p.has_max_retry(), p.max_retry());
  c.ack_timeout_millis = Opt<int64_t>(p.has_ack_timeout_millis(), p.ack_timeout_millis());
  c.retry_interval_millis = Opt<int64_t>(p.has_retry_interval_millis(), p.retry_interval_millis());
  if (p.has_dead_letter_topic()) c.dead_letter_topic = p.dead_letter_topic();
  if (p.has_paused()) c.paused = p.paused();
  if (p.has_history()) c.history = p.history();
  return c;
}

void ToProto(const core::Message& m, v1::Message* out) {
  const core::MessageRecord& r = m.record;
  out->set_topic(r.topic);
  out->set_msg_id(r.msg_id);
  out->set_msg(r.payload);
  out->set_produce_time(ToEpochMs(r.produce_time));
  out->set_trigger_time(ToEpochMs(r.trigger_time));
  out->set_expire_time(ToEpochMs(r.expire_time));
  out->set_max_retry(r.max_retry);
  out->set_retry(r.retry);
  out->set_status(static_cast<int32_t>(m.status));
  out->set_priority(r.priority);
  out->set_count_trigger(r.count_trigger);
  out->set_count(r.count);
  if (r.callback) ToProto(*r.callback, out->mutable_callback());
  if (r.push) {
    out->set_push(true);
    out->set_attempts(r.retry);
  }
  out->set_last_error(r.last_error);
  if (r.dead_letter) {
    v1::DeadLetter* d = out->mutable_dead_letter();
    d->set_topic(r.dead_letter->topic);
    d->set_status(static_cast<int32_t>(r.dead_letter->status));
    d->set_retry(r.dead_letter->retry);
    d->set_end_time(ToEpochMs(r.dead_letter->end_time));
  }
}

void ToProto(const core::TopicInfo& t, v1::TopicInfoResponse* out) {
  out->set_topic(t.topic);
  out->set_waiting(t.waiting);
  out->set_ready(t.ready);
  out->set_consuming(t.consuming);
  for (int i = 0; i < core::kBucketCount; ++i) {
    (*out->mutable_waiting_buckets())[std::string(core::kBucketNames[i])] = t.buckets[i];
  }
}

void ToProto(const service::TopicConfigView& v, v1::TopicConfig* out) {
  const core::EffectiveTopicConfig& c = v.config;
  out->set_topic(v.topic);
  out->set_capacity(c.capacity);
  out->set_ttl_millis(c.ttl.count());
  out->set_max_retry(c.max_retry);
  out->set_ack_timeout_millis(c.ack_timeout.count());
  out->set_retry_interval_millis(c.retry_interval.count());
  out->set_dead_letter_topic(c.dead_letter_topic);
  out->set_paused(c.paused);
  out->set_history(c.history);
  if (c.callback) ToProto(*c.callback, out->mutable_callback());
  for (int f = 0; f < core::kTopicFieldCount; ++f) {
    (*out->mutable_sources())[std::string(core::TopicFieldName(static_cast<core::TopicField>(f)))] =
        std::string(core::ConfigSourceName(v.sources[f]));
  }
}

void ToProto(const std::vector<service::AckResult>& results, v1::AckResponse* out) {
  for (const service::AckResult& r : results) {
    v1::AckResult* a = out->add_results();
    a->set_msg_id(r.msg_id);
    a->set_ack(r.ack);
    a->set_code(GrpcCode(r.status.code()));
    if (!r.status.ok()) a->set_msg(r.status.message());
  }
}

void ToProto(const metrics::MonitorSnapshot& s, v1::MonitorData* out) {
  using metrics::MonitorCounter;
  for (const metrics::RequestStats& r : s.request_stats) {
    v1::MonitorData::RequestStats* o = out->add_request_stats_list();
    o->set_topic(r.topic);
    o->set_send_msg(r.get(MonitorCounter::kSendMsg));
    o->set_pull_msg(r.get(MonitorCounter::kPullMsg));
    o->set_delete_msg(r.get(MonitorCounter::kDeleteMsg));
    o->set_ack_msg(r.get(MonitorCounter::kAckMsg));
    o->set_get_msg(r.get(MonitorCounter::kGetMsg));
    o->set_trigger_msg_ready(r.get(MonitorCounter::kTriggerMsgReady));
    o->set_trigger_msg_end_life(r.get(MonitorCounter::kTriggerMsgEndLife));
    o->set_trigger_msg_timeout(r.get(MonitorCounter::kTriggerMsgTimeout));
  }
  auto gaps = [](const std::vector<metrics::GapStats>& in, auto* list) {
    for (const metrics::GapStats& g : in) {
      v1::MonitorData::GapStats* o = list->Add();
      o->set_topic(g.topic);
      o->set_count(g.count);
      o->set_avg(g.avg);
      o->set_max(g.max);
    }
  };
  gaps(s.pull_gaps, out->mutable_pull_msg_time_gap_stats_list());
  gaps(s.ready_gaps, out->mutable_ready_queue_time_gap_stats_list());
}

}  // namespace chronoq::grpc_api
