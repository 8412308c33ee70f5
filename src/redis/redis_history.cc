// Message history on Redis (core/history.h, docs/redis.md "Message history"): the scripts that
// change a record of a topic with history on append its entries to the list 'h:<msgId>' in the
// same script (lua_common.h, CQ_LUA_HISTORY); getMsgHistory reads it with the record.
#include <fmt/format.h>

#include <charconv>

#include "redis/redis_backend.h"
#include "redis/script_reply.h"

namespace chronoq::redis {

std::string HistoryArgs(Millis retention, int64_t max_entries, std::string_view node) {
  std::string name(node);
  for (char& c : name) {
    if (c == '\n') c = ' ';
  }
  return fmt::format("\n{} {} {}", retention.count(), max_entries, name);
}

namespace {

// The next space-separated decimal of `in` (consumed with its space).
bool Number(std::string_view& in, int64_t* v) {
  auto [end, ec] = std::from_chars(in.data(), in.data() + in.size(), *v);
  if (ec != std::errc() || end == in.data() + in.size() || *end != ' ') return false;
  in.remove_prefix(static_cast<size_t>(end - in.data()) + 1);
  return true;
}

}  // namespace

std::vector<core::HistoryEntry> ParseHistory(const RedisReply& list, uint64_t seq) {
  std::vector<core::HistoryEntry> out;
  for (const RedisReply& item : list.elements) {
    // '<seq> <time> <event> <attempt> <node length> <node><reason>'
    std::string_view in = item.str;
    int64_t s = 0, time = 0, event = 0, attempt = 0, node_len = 0;
    if (!Number(in, &s) || !Number(in, &time) || !Number(in, &event) || !Number(in, &attempt) ||
        !Number(in, &node_len) || node_len < 0 || static_cast<size_t>(node_len) > in.size()) {
      continue;
    }
    if (static_cast<uint64_t>(s) != seq) continue;
    core::HistoryEntry e;
    e.time = FromEpochMs(time);
    e.event = static_cast<core::HistoryEvent>(event);
    e.attempt = attempt;
    e.node = std::string(in.substr(0, static_cast<size_t>(node_len)));
    e.reason = std::string(in.substr(static_cast<size_t>(node_len)));
    out.push_back(std::move(e));
  }
  return out;
}

void RedisBackend::GetHistory(std::string topic, std::string msg_id,
                              backend::Callback<Result<std::vector<core::HistoryEntry>>> done) {
  const TimePoint now = clock_->Now();
  std::vector<std::string> args = {msg_id, Ms(now), std::to_string(options_.retention.count())};
  Eval(kHistoryScript, topic, std::move(args),
       [this, topic, msg_id, now, done = std::move(done)](Result<RedisReply> r) mutable {
         if (!r.has_value()) return done(r.error());
         const auto& e = r->elements;
         if (r->type != RedisReply::Type::kArray || e.empty()) {
           return done(Unexpected(*r, "getMsgHistory"));
         }
         if (e[0].str == "OFF") return done(core::HistoryOff(topic));
         if (e[0].str == "NF") return done(NotFoundError(topic, msg_id));
         if (e[0].str != "OK" || e.size() != 2 + kRecordFields) {
           return done(Unexpected(*r, "getMsgHistory"));
         }
         const core::MessageRecord rec = ParseRecord(topic, e, 1);
         done(core::HistoryAsOf(ParseHistory(e.back(), rec.seq), rec, now, options_.node));
       });
}

}  // namespace chronoq::redis
