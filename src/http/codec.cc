#include "http/codec.h"

#include "http/json_writer.h"

namespace chronoq::http {
namespace {

void WriteMessage(JsonWriter& w, const core::Message& m) {
  const core::MessageRecord& r = m.record;
  w.BeginObject()
      .Key("topic").String(r.topic)
      .Key("msgId").String(r.msg_id)
      .Key("msg").String(r.payload)
      .Key("produceTime").Int(ToEpochMs(r.produce_time))
      .Key("triggerTime").Int(ToEpochMs(r.trigger_time))
      .Key("expireTime").Int(ToEpochMs(r.expire_time))
      .Key("maxRetry").Int(r.max_retry)
      .Key("retry").Int(r.retry)
      .Key("status").Int(static_cast<int>(m.status))
      .EndObject();
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
        .Key("topic").String(g.topic)
        .Key("count").Int(g.count)
        .Key("avg").Double(g.avg)
        .Key("max").Int(g.max)
        .EndObject();
  }
  w.EndArray();
}

JsonWriter Head(int code, std::string_view msg) {
  JsonWriter w;
  w.BeginObject().Key("code").Int(code).Key("msg").String(msg);
  return w;
}

}  // namespace

std::string EncodeMessageAnswer(int code, std::string_view msg, const core::Message* m) {
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

std::string EncodeStatusAnswer(int code, std::string_view msg) {
  return Head(code, msg).EndObject().Take();
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
        .Key("topic").String(r.topic)
        .Key("sendMsg").Int(r.get(MonitorCounter::kSendMsg))
        .Key("pullMsg").Int(r.get(MonitorCounter::kPullMsg))
        .Key("deleteMsg").Int(r.get(MonitorCounter::kDeleteMsg))
        .Key("ackMsg").Int(r.get(MonitorCounter::kAckMsg))
        .Key("getMsg").Int(r.get(MonitorCounter::kGetMsg))
        .Key("triggerMsgReady").Int(r.get(MonitorCounter::kTriggerMsgReady))
        .Key("triggerMsgEndLife").Int(r.get(MonitorCounter::kTriggerMsgEndLife))
        .Key("triggerMsgTimeout").Int(r.get(MonitorCounter::kTriggerMsgTimeout))
        .EndObject();
  }
  w.EndArray();
  WriteGaps(w, "pullMsgTimeGapStatsList", s.pull_gaps);
  WriteGaps(w, "readyQueueTimeGapStatsList", s.ready_gaps);
  return w.EndObject().EndObject().Take();
}

std::string_view ReasonPhrase(int http_status) {
  switch (http_status) {
    case 200: return "OK";
    case 400: return "Bad Request";
    case 404: return "Not Found";
    case 405: return "Method Not Allowed";
    case 408: return "Request Timeout";
    case 413: return "Payload Too Large";
    case 431: return "Request Header Fields Too Large";
    case 500: return "Internal Server Error";
    case 503: return "Service Unavailable";
    default: return "Error";
  }
}

std::string EncodeRequestError(int http_status, std::string_view msg, std::string_view path) {
  JsonWriter w;
  w.BeginObject()
      .Key("code").Int(http_status)
      .Key("msg").String(msg)
      .Key("status").Int(http_status)
      .Key("error").String(ReasonPhrase(http_status))
      .Key("path").String(path)
      .EndObject();
  return w.Take();
}

}  // namespace chronoq::http
