#include "http/codec.h"

#include <array>
#include <charconv>
#include <cstdint>
#include <cstring>

#include "base/check.h"
#include "base/json_string.h"
#include "http/callback_json.h"
#include "http/json_writer.h"

namespace chronoq::http {
namespace {

// The two decimal digits of each value below 100.
constexpr std::array<char, 200> kDigitPairs = [] {
  std::array<char, 200> t{};
  for (int v = 0; v < 100; ++v) {
    t[2 * v] = static_cast<char>('0' + v / 10);
    t[2 * v + 1] = static_cast<char>('0' + v % 10);
  }
  return t;
}();

// Writes v < 10^8 as exactly eight digits (leading zeros kept), two at a time.
void PutEightDigits(char* p, uint32_t v) {
  const uint32_t hi = v / 10'000;
  const uint32_t lo = v % 10'000;
  std::memcpy(p, &kDigitPairs[2 * (hi / 100)], 2);
  std::memcpy(p + 2, &kDigitPairs[2 * (hi % 100)], 2);
  std::memcpy(p + 4, &kDigitPairs[2 * (lo / 100)], 2);
  std::memcpy(p + 6, &kDigitPairs[2 * (lo % 100)], 2);
}

// v in decimal, as std::to_chars writes it, at `p` (room for 20 characters): the thirteen digits
// of a time in epoch milliseconds (2001 to 2286) and a single digit without to_chars' length
// loop, anything else through it.
char* PutDecimal(char* p, int64_t v) {
  if (v >= 1'000'000'000'000 && v < 10'000'000'000'000) {
    const auto u = static_cast<uint64_t>(v);
    const auto top = static_cast<uint32_t>(u / 100'000'000);  // five digits
    p[0] = static_cast<char>('0' + top / 10'000);
    std::memcpy(p + 1, &kDigitPairs[2 * (top % 10'000 / 100)], 2);
    std::memcpy(p + 3, &kDigitPairs[2 * (top % 100)], 2);
    PutEightDigits(p + 5, static_cast<uint32_t>(u % 100'000'000));
    return p + 13;
  }
  if (v >= 0 && v < 10) {
    *p = static_cast<char>('0' + v);
    return p + 1;
  }
  return std::to_chars(p, p + 20, v).ptr;
}

// Number members (`,"key":value`) written into a buffer on the stack, appended at once.
class NumberMembers {
 public:
  template <size_t N>
  void Add(const char (&key_text)[N], int64_t v) {
    static_assert(N - 1 <= kKeyMax, "NumberMembers: key text too long");
    CQ_DCHECK(used_ + kKeyMax + 20 <= sizeof(buf_), "NumberMembers: more members than room");
    std::memcpy(buf_ + used_, key_text, N - 1);
    used_ += N - 1;
    used_ = static_cast<size_t>(PutDecimal(buf_ + used_, v) - buf_);
  }
  std::string_view text() const { return {buf_, used_}; }

 private:
  static constexpr size_t kKeyMax = 24;
  char buf_[6 * (kKeyMax + 20)];  // six members, each a key and an int64 (at most 20 characters)
  size_t used_ = 0;
};

// The six numbers every message has, each with its key: `,"produceTime":..,"status":S`.
NumberMembers CommonNumbers(const core::Message& m) {
  const core::MessageRecord& r = m.record;
  NumberMembers nums;
  nums.Add(",\"produceTime\":", ToEpochMs(r.produce_time));
  nums.Add(",\"triggerTime\":", ToEpochMs(r.trigger_time));
  nums.Add(",\"expireTime\":", ToEpochMs(r.expire_time));
  nums.Add(",\"maxRetry\":", r.max_retry);
  nums.Add(",\"retry\":", r.retry);
  nums.Add(",\"status\":", static_cast<int>(m.status));
  return nums;
}

void WriteMessage(JsonWriter& w, const core::Message& m, bool export_fields = false) {
  const core::MessageRecord& r = m.record;
  // The members every message has, appended as text (every send answers one, every pull one per
  // message): the same bytes as a Str or Num call per member, at a third of the instructions.
  std::string& out = w.BeginObject().MembersText();
  out += "\"topic\":";
  AppendJsonString(out, r.topic);
  out += ",\"msgId\":";
  AppendJsonString(out, r.msg_id);
  out += ",\"msg\":";
  AppendJsonString(out, r.payload);
  // The six numbers in one append.
  out.append(CommonNumbers(m).text());
  // Extension fields (API-EXTENSIONS.md section 1) only when they differ from their default, so
  // that a camellia-style message stays byte-identical.
  if (r.priority != 0) w.Num("priority", r.priority);
  if (r.count_trigger != 0) w.Num("countTrigger", r.count_trigger);
  if (r.count != 0) w.Num("count", r.count);
  if (!r.last_error.empty()) w.Str("lastError", r.last_error);
  // Push delivery (docs/push.md): `attempts` counts push attempts (as `retry` does deliveries).
  if (r.push) w.Key("push").Bool(true).Num("attempts", r.retry);
  if (r.callback) {
    w.Key("callback");
    WriteCallbackJson(w, *r.callback);
  }
  if (r.dead_letter) {
    const core::DeadLetter& d = *r.dead_letter;
    w.Key("deadLetter")
        .BeginObject()
        .Str("topic", d.topic)
        .Num("status", static_cast<int>(d.status))
        .Num("retry", d.retry)
        .Num("endTime", ToEpochMs(d.end_time))
        .EndObject();
  }
  // listMsg export=true (docs/api-extensions.md "Export and import"): what `chronoq import`
  // needs beyond the message object to restore the state exactly.
  if (export_fields && r.phase == core::Phase::kPending) {
    w.Num("visibleTime", ToEpochMs(r.visible_at));
  } else if (export_fields && r.phase == core::Phase::kDelivered) {
    w.Num("ackDeadline", ToEpochMs(r.ack_deadline()));
    if (r.retry_interval.count() != 0) w.Num("retryIntervalMillis", r.retry_interval.count());
  }
  w.EndObject();
}

void WriteTopicInfo(JsonWriter& w, const core::TopicInfo& t) {
  w.BeginObject().Key("topic").String(t.topic).Key("waitingQueueSize").Int(t.waiting);
  w.Key("waitingQueueInfo").BeginObject();
  for (int i = 0; i < core::kBucketCount; ++i) w.Key(core::kBucketNames[i]).Int(t.buckets[i]);
  w.EndObject();
  w.Key("readyQueueSize").Int(t.ready).Key("ackQueueSize").Int(t.consuming).EndObject();
}

void WriteGaps(JsonWriter& w, std::string_view key, const std::vector<metrics::GapStats>& gaps) {
  w.Key(key).BeginArray();
  for (const auto& g : gaps) {
    w.BeginObject()
        .Str("topic", g.topic)
        .Num("count", g.count)
        .Key("avg")
        .Double(g.avg)
        .Num("max", g.max)
        .EndObject();
  }
  w.EndArray();
}

JsonWriter Head(int code, std::string_view msg) {
  JsonWriter w;
  std::string& out = w.BeginObject().MembersText();
  if (code == 200 && msg == "success") {  // most answers
    out += R"("code":200,"msg":"success")";
  } else {
    JsonWriter::AppendInt(out, "\"code\":", code);
    out += ",\"msg\":";
    AppendJsonString(out, msg);
  }
  return w;
}

// A message's answer when it has only the members every message has (no extension field set)
// and its three strings need no escaping: what every plain send answers. The same bytes as
// Head + WriteMessage, written through a pointer into a buffer sized once (the general path
// appends member by member, a capacity check and a call each). Empty when it does not apply.
std::string DirectSuccessAnswer(const core::Message& m) {
  const core::MessageRecord& r = m.record;
  if (r.priority != 0 || r.count_trigger != 0 || r.count != 0 || !r.last_error.empty() || r.push ||
      r.callback || r.dead_letter) {
    return {};
  }
  if (base::JsonPlainPrefix(r.topic) != r.topic.size() ||
      base::JsonPlainPrefix(r.msg_id) != r.msg_id.size() ||
      base::JsonPlainPrefix(r.payload) != r.payload.size()) {
    return {};
  }
  static constexpr std::string_view kHead = R"({"code":200,"msg":"success","delayMsg":{"topic":")";
  static constexpr std::string_view kMsgId = R"(","msgId":")";
  static constexpr std::string_view kMsg = R"(","msg":")";
  const NumberMembers nums = CommonNumbers(m);
  const std::string_view parts[] = {kHead,     r.topic, kMsgId,      r.msg_id, kMsg,
                                    r.payload, "\"",    nums.text(), "}}"};
  size_t size = 0;
  for (std::string_view part : parts) size += part.size();
  std::string out(size, '\0');
  char* p = out.data();
  for (std::string_view part : parts) {
    std::memcpy(p, part.data(), part.size());
    p += part.size();
  }
  return out;
}

}  // namespace

std::string EncodeMessageObject(const core::Message& m) {
  JsonWriter w;
  WriteMessage(w, m);
  return w.Take();
}

std::string EncodeMessageAnswer(int code, std::string_view msg, const core::Message* m) {
  if (m != nullptr && code == 200 && msg == "success") {
    if (std::string out = DirectSuccessAnswer(*m); !out.empty()) return out;
  }
  JsonWriter w = Head(code, msg);
  w.Key("delayMsg");
  if (m != nullptr) {
    WriteMessage(w, *m);
  } else {
    w.Null();
  }
  return w.EndObject().Take();
}

std::string EncodeMessageListAnswer(int code, std::string_view msg,
                                    const std::vector<core::Message>* list) {
  JsonWriter w = Head(code, msg);
  w.Key("delayMsgList");
  if (list != nullptr) {
    w.BeginArray();
    for (const auto& m : *list) WriteMessage(w, m);
    w.EndArray();
  } else {
    w.Null();
  }
  return w.EndObject().Take();
}

std::string EncodeListPageAnswer(const std::vector<core::Message>& list,
                                 std::string_view next_cursor, bool export_fields) {
  JsonWriter w = Head(200, "success");
  w.Key("delayMsgList").BeginArray();
  for (const auto& m : list) WriteMessage(w, m, export_fields);
  w.EndArray().Key("nextCursor");
  if (next_cursor.empty()) {
    w.Null();
  } else {
    w.String(next_cursor);
  }
  return w.EndObject().Take();
}

std::string EncodeSendBatchAnswer(const std::vector<ItemAnswer>& items) {
  JsonWriter w = Head(200, "success");
  w.Key("results").BeginArray();
  for (const ItemAnswer& a : items) {
    w.BeginObject().Num("code", a.code).Str("msg", a.msg);
    if (a.message != nullptr) {
      w.Key("delayMsg");
      WriteMessage(w, *a.message);
      if (a.existing) w.Key("existing").Bool(true);
    }
    w.EndObject();
  }
  return w.EndArray().EndObject().Take();
}

std::string EncodeAckBatchAnswer(const std::vector<AckItemAnswer>& items) {
  JsonWriter w = Head(200, "success");
  w.Key("results").BeginArray();
  for (const AckItemAnswer& a : items) {
    w.BeginObject()
        .Str("msgId", a.msg_id)
        .Key("ack")
        .Bool(a.ack)
        .Num("code", a.code)
        .Str("msg", a.msg)
        .EndObject();
  }
  return w.EndArray().EndObject().Take();
}

std::string EncodeTopicConfigAnswer(int code, std::string_view msg,
                                    const service::TopicConfigView* c) {
  JsonWriter w = Head(code, msg);
  w.Key("topicConfig");
  if (c == nullptr) return w.Null().EndObject().Take();
  const core::EffectiveTopicConfig& e = c->config;
  w.BeginObject()
      .Str("topic", c->topic)
      .Num("capacity", e.capacity)
      .Num("ttlMillis", e.ttl.count())
      .Num("maxRetry", e.max_retry)
      .Num("ackTimeoutMillis", e.ack_timeout.count())
      .Num("retryIntervalMillis", e.retry_interval.count())
      .Str("deadLetterTopic", e.dead_letter_topic)
      .Key("paused")
      .Bool(e.paused)
      .Key("callback");
  if (e.callback) {
    WriteCallbackJson(w, *e.callback);
  } else {
    w.Null();
  }
  w.Key("history").Bool(e.history);
  w.Key("sources").BeginObject();
  for (int f = 0; f < core::kTopicFieldCount; ++f) {
    w.Str(core::TopicFieldName(static_cast<core::TopicField>(f)),
          core::ConfigSourceName(c->sources[f]));
  }
  return w.EndObject().EndObject().EndObject().Take();
}

std::string EncodeCountAnswer(std::string_view key, int64_t n) {
  return Head(200, "success").Num(key, n).EndObject().Take();
}

std::string EncodeStatusAnswer(int code, std::string_view msg) {
  return Head(code, msg).EndObject().Take();
}

std::string EncodeNullAnswer(int code, std::string_view msg,
                             std::initializer_list<std::string_view> null_keys) {
  JsonWriter w = Head(code, msg);
  for (std::string_view k : null_keys) w.Key(k).Null();
  return w.EndObject().Take();
}

std::string EncodeTopicInfoAnswer(int code, std::string_view msg, const core::TopicInfo* info) {
  JsonWriter w = Head(code, msg);
  w.Key("data");
  if (info != nullptr) {
    WriteTopicInfo(w, *info);
  } else {
    w.Null();
  }
  return w.EndObject().Take();
}

std::string EncodeTopicListAnswer(const std::vector<core::TopicInfo>& list) {
  JsonWriter w = Head(200, "success");
  w.Key("data").BeginArray();
  for (const auto& t : list) WriteTopicInfo(w, t);
  w.EndArray();
  return w.EndObject().Take();
}

std::string EncodeMonitorAnswer(const metrics::MonitorSnapshot& s) {
  using metrics::MonitorCounter;
  JsonWriter w = Head(200, "success");
  w.Key("data").BeginObject().Key("requestStatsList").BeginArray();
  for (const auto& r : s.request_stats) {
    w.BeginObject()
        .Str("topic", r.topic)
        .Num("sendMsg", r.get(MonitorCounter::kSendMsg))
        .Num("pullMsg", r.get(MonitorCounter::kPullMsg))
        .Num("deleteMsg", r.get(MonitorCounter::kDeleteMsg))
        .Num("ackMsg", r.get(MonitorCounter::kAckMsg))
        .Num("getMsg", r.get(MonitorCounter::kGetMsg))
        .Num("triggerMsgReady", r.get(MonitorCounter::kTriggerMsgReady))
        .Num("triggerMsgEndLife", r.get(MonitorCounter::kTriggerMsgEndLife))
        .Num("triggerMsgTimeout", r.get(MonitorCounter::kTriggerMsgTimeout))
        .EndObject();
  }
  w.EndArray();
  WriteGaps(w, "pullMsgTimeGapStatsList", s.pull_gaps);
  WriteGaps(w, "readyQueueTimeGapStatsList", s.ready_gaps);
  return w.EndObject().EndObject().Take();
}

std::string_view ReasonPhrase(int http_status) {
  switch (http_status) {
    case 200:
      return "OK";
    case 304:
      return "Not Modified";
    case 400:
      return "Bad Request";
    case 401:
      return "Unauthorized";
    case 403:
      return "Forbidden";
    case 404:
      return "Not Found";
    case 405:
      return "Method Not Allowed";
    case 408:
      return "Request Timeout";
    case 413:
      return "Payload Too Large";
    case 429:
      return "Too Many Requests";
    case 431:
      return "Request Header Fields Too Large";
    case 500:
      return "Internal Server Error";
    case 503:
      return "Service Unavailable";
    default:
      return "Error";
  }
}

std::string EncodeRequestError(int http_status, std::string_view msg, std::string_view path) {
  JsonWriter w;
  w.BeginObject()
      .Num("code", http_status)
      .Str("msg", msg)
      .Num("status", http_status)
      .Str("error", ReasonPhrase(http_status))
      .Str("path", path)
      .EndObject();
  return w.Take();
}

}  // namespace chronoq::http
