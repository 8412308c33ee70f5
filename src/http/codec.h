// The JSON bodies of the camellia API (API.md sections 2-4): message objects, lists, topic info,
// monitor data, and both error layers. Pure functions.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "core/message.h"
#include "core/topic_info.h"
#include "metrics/monitor.h"

namespace chronoq::http {

// {"code":C,"msg":M,"delayMsg":{...}|null}
std::string EncodeMessageAnswer(int code, std::string_view msg, const core::Message* m);
// {"code":C,"msg":M,"delayMsgList":[...]|null}
std::string EncodeMessageListAnswer(int code, std::string_view msg,
                                    const std::vector<core::Message>* list);
// {"code":C,"msg":M}
std::string EncodeStatusAnswer(int code, std::string_view msg);
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
