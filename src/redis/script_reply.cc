#include "redis/script_reply.h"

#include <fmt/format.h>

#include <charconv>

namespace chronoq::redis {

using core::MessageRecord;
using core::MsgStatus;

std::string Ms(TimePoint t) { return std::to_string(ToEpochMs(t)); }

int64_t ToInt(const std::string& s) {
  int64_t v = 0;
  std::from_chars(s.data(), s.data() + s.size(), v);
  return v;
}

std::string Str(const RedisReply& r) {
  return r.type == RedisReply::Type::kInteger ? std::to_string(r.integer) : r.str;
}

MessageRecord ParseRecord(const std::string& topic, const std::vector<RedisReply>& e, size_t at) {
  MessageRecord r;
  r.topic = topic;
  r.msg_id = Str(e[at]);
  r.payload = Str(e[at + 1]);
  r.produce_time = FromEpochMs(ToInt(Str(e[at + 2])));
  r.trigger_time = FromEpochMs(ToInt(Str(e[at + 3])));
  r.expire_time = FromEpochMs(ToInt(Str(e[at + 4])));
  r.max_retry = static_cast<int32_t>(ToInt(Str(e[at + 5])));
  r.retry = ToInt(Str(e[at + 6]));
  r.phase = static_cast<core::Phase>(ToInt(Str(e[at + 7])));
  r.end_status = static_cast<MsgStatus>(ToInt(Str(e[at + 8])));
  r.visible_at = FromEpochMs(ToInt(Str(e[at + 9])));
  r.ended_at = FromEpochMs(ToInt(Str(e[at + 10])));
  r.seq = static_cast<uint64_t>(ToInt(Str(e[at + 11])));
  r.priority = static_cast<int32_t>(ToInt(Str(e[at + 12])));
  r.count_trigger = ToInt(Str(e[at + 13]));
  r.count = ToInt(Str(e[at + 14]));
  r.last_error = Str(e[at + 15]);
  if (r.phase != core::Phase::kEnded) r.end_status = MsgStatus::kWaiting;
  if (r.phase == core::Phase::kDelivered) r.retry_interval = Millis(ToInt(Str(e[at + 16])));
  if (std::string dt = Str(e[at + 17]); !dt.empty()) {
    r.dead_letter = core::DeadLetter{std::move(dt), static_cast<MsgStatus>(ToInt(Str(e[at + 18]))),
                                     ToInt(Str(e[at + 19])), FromEpochMs(ToInt(Str(e[at + 20])))};
  }
  r.callback = CallbackOfBytes(Str(e[at + 21]));
  r.push = Str(e[at + 22]) == "1";
  return r;
}

std::string CallbackBytes(const core::CallbackRef& cb) {
  return cb ? core::EncodeCallback(*cb) : std::string();
}

std::optional<core::Callback> CallbackOfBytes(std::string_view bytes) {
  if (bytes.empty()) return std::nullopt;
  Result<core::Callback> cb = core::DecodeCallback(bytes);
  if (!cb.has_value()) return std::nullopt;
  return std::move(*cb);
}

std::string EncodeLocalConfig(const core::EffectiveTopicConfig& c) {
  return fmt::format("{}\n{}\n{}\n{}\n{}\n{}\n{}\n{}", c.capacity, c.ttl.count(), c.max_retry,
                     c.ack_timeout.count(), c.retry_interval.count(), c.paused ? 1 : 0,
                     c.dead_letter_topic, c.history ? 1 : 0);
}

core::TopicConfig ParseStoredConfig(const RedisReply& pairs) {
  core::TopicConfig c;
  const auto& e = pairs.elements;
  for (size_t i = 0; i + 1 < e.size(); i += 2) {
    const std::string& name = e[i].str;
    const std::string value = Str(e[i + 1]);
    if (name == "cap") c.capacity = ToInt(value);
    if (name == "ttl") c.ttl = Millis(ToInt(value));
    if (name == "mr") c.max_retry = static_cast<int32_t>(ToInt(value));
    if (name == "at") c.ack_timeout = Millis(ToInt(value));
    if (name == "ri") c.retry_interval = Millis(ToInt(value));
    if (name == "dlt") c.dead_letter_topic = value;
    if (name == "pz") c.paused = value == "1";
    if (name == "cb") c.callback = CallbackOfBytes(value);
    if (name == "hs") c.history = value == "1";
  }
  return c;
}

std::vector<std::string> StoredConfigArgs(const core::TopicConfig& c) {
  std::vector<std::string> out;
  auto add = [&out](const char* name, std::string value) {
    out.push_back(name);
    out.push_back(std::move(value));
  };
  if (c.capacity) add("cap", std::to_string(*c.capacity));
  if (c.ttl) add("ttl", std::to_string(c.ttl->count()));
  if (c.max_retry) add("mr", std::to_string(*c.max_retry));
  if (c.ack_timeout) add("at", std::to_string(c.ack_timeout->count()));
  if (c.retry_interval) add("ri", std::to_string(c.retry_interval->count()));
  if (c.dead_letter_topic) add("dlt", *c.dead_letter_topic);
  if (c.paused) add("pz", *c.paused ? "1" : "0");
  if (c.callback) add("cb", CallbackBytes(*c.callback));
  if (c.history) add("hs", *c.history ? "1" : "0");
  return out;
}

Status Unexpected(const RedisReply& r, std::string_view what) {
  if (r.is_error()) return Internal(fmt::format("redis refused {}: {}", what, r.str));
  return Internal(fmt::format("unexpected redis reply to {}", what));
}

Status BatchReplyError(const Result<RedisReply>& r, size_t items, std::string_view what) {
  if (!r.has_value()) return r.error();
  if (r->type != RedisReply::Type::kArray || r->elements.size() != items + 1) {
    return Unexpected(*r, what);
  }
  return Status::Ok();
}

Status NotFoundError(const std::string& topic, const std::string& msg_id) {
  return NotFound(fmt::format("message '{}' not found in topic '{}'", msg_id, topic));
}

Status MoveOutcome(const RedisReply& item, const std::string& topic, const std::string& msg_id,
                   const core::Event& event, TimePoint now, std::string_view what) {
  const auto& e = item.elements;
  if (item.type != RedisReply::Type::kArray || e.empty()) return Unexpected(item, what);
  if (e[0].str == "NF") return NotFoundError(topic, msg_id);
  if (e[0].str == "IS" && e.size() == 1 + kRecordFields) {
    Result<MessageRecord> next = core::Apply(ParseRecord(topic, e, 1), event, now);
    return next.has_value() ? InvalidState(fmt::format("message '{}' cannot be {}", msg_id, what))
                            : next.error();
  }
  if (e[0].str == "OK") return Status::Ok();
  return Unexpected(item, what);
}

}  // namespace chronoq::redis
