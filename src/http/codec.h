// The JSON bodies of the camellia API (API.md sections 2-4): message objects, lists, topic info,
// monitor data, and both error layers. Pure functions.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <string>
#include <string_view>
#include <vector>

#include "core/message.h"
#include "core/topic_info.h"
#include "metrics/monitor.h"
#include "service/queue_service.h"

namespace chronoq::http {

// The message object alone, {"topic":..,"msgId":..,...}: what an HTTP push target receives.
std::string EncodeMessageObject(const core::Message& m);
// {"code":C,"msg":M,"delayMsg":{...}|null}
std::string EncodeMessageAnswer(int code, std::string_view msg, const core::Message* m);
// {"code":C,"msg":M,"delayMsgList":[...]|null}
std::string EncodeMessageListAnswer(int code, std::string_view msg,
                                    const std::vector<core::Message>* list);
// {"code":C,"msg":M}
std::string EncodeStatusAnswer(int code, std::string_view msg);
// {"code":C,"msg":M,"<key>":null,...}: an error with the fields of the success shape as null
// (API.md section 2), e.g. {"results"} or {"delayMsgList","nextCursor"}.
std::string EncodeNullAnswer(int code, std::string_view msg,
                             std::initializer_list<std::string_view> null_keys);

// API-EXTENSIONS.md sections 2-3.
// listMsg: {"code":200,"msg":"success","delayMsgList":[...],"nextCursor":"..."|null (last page)}
// With export_fields (listMsg export=true, docs/api-extensions.md "Export and import"), each
// message also has visibleTime (pending) or ackDeadline and retryIntervalMillis (a delivery).
std::string EncodeListPageAnswer(const std::vector<core::Message>& list,
                                 std::string_view next_cursor, bool export_fields = false);
// One item of a sendMsgBatch answer: {"code":C,"msg":M[,"delayMsg":{...}[,"existing":true]]}.
struct ItemAnswer {
  int code = 200;
  std::string msg;
  const core::Message* message = nullptr;  // when stored or answered
  bool existing = false;  // an in-life message with that msgId answered; nothing was stored
};
// {"code":200,"msg":"success","results":[items in input order]}
std::string EncodeSendBatchAnswer(const std::vector<ItemAnswer>& items);
// One item of an ackMsgBatch answer: {"msgId":I,"ack":B,"code":C,"msg":M}.
struct AckItemAnswer {
  std::string msg_id;
  bool ack = true;
  int code = 200;
  std::string msg;
};
std::string EncodeAckBatchAnswer(const std::vector<AckItemAnswer>& items);
// API-EXTENSIONS.md section 4.
// {"code":C,"msg":M,"topicConfig":{"topic":..,"capacity":..,..,"paused":B,
//  "sources":{"capacity":"server"|"file"|"topic",..}}|null}
std::string EncodeTopicConfigAnswer(int code, std::string_view msg,
                                    const service::TopicConfigView* c);
// {"code":200,"msg":"success","<key>":N}: purgeTopic ("purged"), redriveMsg ("redriven").
std::string EncodeCountAnswer(std::string_view key, int64_t n);
// {"code":C,"msg":M,"data":{topic info}|null}
std::string EncodeTopicInfoAnswer(int code, std::string_view msg, const core::TopicInfo* info);
// {"code":200,"msg":"success","data":[{topic info}, ...]}
std::string EncodeTopicListAnswer(const std::vector<core::TopicInfo>& list);
// {"code":200,"msg":"success","data":{"requestStatsList":[...],...}}
std::string EncodeMonitorAnswer(const metrics::MonitorSnapshot& s);
// The request-error body: {"code":S,"msg":M,"status":S,"error":"<reason>","path":P}
std::string EncodeRequestError(int http_status, std::string_view msg, std::string_view path);
// "Bad Request", "Not Found", ...
std::string_view ReasonPhrase(int http_status);

}  // namespace chronoq::http
