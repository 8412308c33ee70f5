#include "bench/sessions.h"

#include <fmt/format.h>

#include <charconv>

#include "bench/common.h"
#include "client/json.h"

namespace chronoq::bench {

Next ProducerSession::NextRequest(std::string* out) {
  if (st_->stop || st_->next >= st_->count) return Next::Done();
  if (st_->rate > 0) {
    auto due = st_->start + std::chrono::duration_cast<SteadyClock::duration>(
                                std::chrono::duration<double>(st_->next / st_->rate));
    if (due > SteadyClock::now()) return Next::WaitUntil(due);
  }
  body_.clear();
  if (st_->batch > 1) {
    in_request_ = std::min<int64_t>(st_->batch, st_->count - st_->next);
    body_.append(st_->batch_prefix);
    for (int64_t k = 0; k < in_request_; ++k) {
      if (k > 0) body_.push_back(',');
      st_->make_item(st_->next++, &body_);
    }
    body_.append("]}");
    out->append(JsonPost(st_->endpoint, "/camellia/delayQueue/sendMsgBatch", body_));
    return Next::Send();
  }
  in_request_ = 1;
  st_->make_body(st_->next++, &body_);
  out->append(FormPost(st_->endpoint, "/camellia/delayQueue/sendMsg", body_));
  return Next::Send();
}

namespace {
// The items of a sendMsgBatch answer that were stored (or answered as existing): each carries its
// delayMsg; refused ones carry none.
int64_t StoredItems(std::string_view body) {
  int64_t n = 0;
  for (size_t at = body.find("\"delayMsg\":"); at != std::string_view::npos;
       at = body.find("\"delayMsg\":", at + 1)) {
    ++n;
  }
  return n;
}
}  // namespace

void ProducerSession::OnResponse(int status, std::string_view body,
                                 std::chrono::microseconds latency) {
  st_->latency.Record(latency.count());
  if (status == 200 && IsSuccess(body)) {
    const int64_t stored = st_->batch > 1 ? StoredItems(body) : 1;
    st_->ok += stored;
    st_->failed += in_request_ - stored;
    if (stored < in_request_ && st_->first_failure.empty()) {
      st_->first_failure = fmt::format("some items refused: {}", body.substr(0, 300));
    }
  } else {
    st_->failed += in_request_;
    if (st_->first_failure.empty()) {
      st_->first_failure = fmt::format("HTTP {} {}", status, body.substr(0, 300));
    }
  }
}

void ProducerSession::OnError(std::string_view what) {
  st_->failed += in_request_;
  if (st_->first_failure.empty()) st_->first_failure = std::string(what);
}

Next ConsumerSession::NextRequest(std::string* out) {
  if (st_->stop) return Next::Done();
  std::string body = fmt::format(
      "topic={}&batch={}&ackTimeoutMillis={}&longPollingTimeoutMillis={}",
      client::UrlEncode(st_->topic), st_->batch, st_->ack_timeout_ms, st_->long_poll_ms);
  out->append(FormPost(st_->endpoint, "/camellia/delayQueue/longPollingMsg", body));
  return Next::Send();
}

void ConsumerSession::OnResponse(int status, std::string_view body, std::chrono::microseconds) {
  int64_t now_us = NowEpochMicros();
  ++st_->pulls;
  if (status != 200 || !IsSuccess(body)) {
    ++st_->pull_failures;
    if (st_->first_failure.empty()) {
      st_->first_failure = fmt::format("HTTP {} {}", status, body.substr(0, 300));
    }
    return;
  }
  Result<client::Json> doc = client::Json::Parse(body);
  if (!doc.has_value()) {
    ++st_->pull_failures;
    return;
  }
  bool any = false;
  for (const client::Json& m : (*doc)["delayMsgList"].items()) {
    const std::string& id = m["msgId"].AsString();
    if (!RecordDelivery(*st_, id, m["triggerTime"].AsInt(), now_us)) continue;
    if (st_->ack) st_->ack_queue.push_back(id);
    any = true;
  }
  if (st_->unique >= st_->expected) st_->stop = true;
  if (any || st_->stop) {
    for (Session* a : st_->ackers) st_->loop->Poke(a);
  }
}

bool RecordDelivery(ConsumeState& st, std::string_view id, int64_t trigger_ms, int64_t now_us) {
  int64_t index = -1;
  if (id.rfind(st.id_prefix, 0) == 0) {
    std::string_view rest = id.substr(st.id_prefix.size());
    std::from_chars(rest.data(), rest.data() + rest.size(), index);
  }
  if (index < 0 || index >= st.expected) {
    ++st.foreign;
    return false;
  }
  uint8_t& seen = st.seen[static_cast<size_t>(index)];
  if (seen == 0) {
    ++st.unique;
    st.lateness.Record(now_us - trigger_ms * 1000);
  } else {
    ++st.duplicates;
  }
  if (seen < 255) ++seen;
  if (st.first_receive_us == 0) st.first_receive_us = now_us;
  st.last_receive_us = now_us;
  return true;
}

void ConsumerSession::OnError(std::string_view what) {
  ++st_->pull_failures;
  if (st_->first_failure.empty()) st_->first_failure = std::string(what);
}

Next AckerSession::NextRequest(std::string* out) {
  if (st_->ack_queue.empty()) {
    if (st_->stop) return Next::Done();
    return Next::WaitUntil(SteadyClock::now() + std::chrono::milliseconds(50));  // or a Poke
  }
  if (st_->ack_batch > 1) {
    std::string body = "{\"topic\":" + JsonString(st_->topic) + ",\"ack\":[";
    in_request_ = 0;
    while (!st_->ack_queue.empty() && in_request_ < st_->ack_batch) {
      if (in_request_++ > 0) body.push_back(',');
      body.append(JsonString(st_->ack_queue.front()));
      st_->ack_queue.pop_front();
    }
    body.append("]}");
    out->append(JsonPost(st_->endpoint, "/camellia/delayQueue/ackMsgBatch", body));
    return Next::Send();
  }
  std::string body = fmt::format("topic={}&msgId={}&ack=true", client::UrlEncode(st_->topic),
                                 client::UrlEncode(st_->ack_queue.front()));
  st_->ack_queue.pop_front();
  in_request_ = 1;
  out->append(FormPost(st_->endpoint, "/camellia/delayQueue/ackMsg", body));
  return Next::Send();
}

void AckerSession::OnResponse(int status, std::string_view body, std::chrono::microseconds) {
  if (status != 200 || !IsSuccess(body)) {
    st_->ack_failures += in_request_;
    return;
  }
  st_->last_ack_us = NowEpochMicros();
  if (st_->ack_batch <= 1) {
    ++st_->acked;
    return;
  }
  // ackMsgBatch: one result per id, each with its own code.
  int64_t ok = 0;
  for (size_t at = body.find("\"code\":200", 2); at != std::string_view::npos;
       at = body.find("\"code\":200", at + 1)) {
    ++ok;
  }
  st_->acked += ok;
  st_->ack_failures += in_request_ - ok;
}

}  // namespace chronoq::bench
