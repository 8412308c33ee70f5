// RedisBackend::List (listMsg, API-EXTENSIONS.md section 3): one script per page
// (scripts_list.cc). The cursor is the script's position, "<status>:<level>:<score>:<seq>": the
// status being walked, the priority level (READY only; 10..19 in the push lane), and the sorted-set
// score and seq of the last entry examined (both empty at the start of a status).
#include <fmt/format.h>

#include <charconv>
#include <cmath>

#include "redis/redis_backend.h"
#include "redis/script_reply.h"

namespace chronoq::redis {

using backend::Callback;
using core::Message;
using core::MsgStatus;

namespace {

bool AllDigits(std::string_view s) {
  return !s.empty() && s.find_first_not_of("0123456789") == std::string_view::npos;
}

// The cursor's fields as the script takes them, or why it is not one this backend made for
// a walk over `walk` (the statuses' digits).
Result<std::vector<std::string>> ParseCursor(std::string_view cursor, std::string_view walk) {
  auto bad = [&](std::string_view why) {
    return InvalidArgument(fmt::format("cursor is not valid: {}", why));
  };
  std::vector<std::string> parts;
  size_t from = 0;
  for (;;) {
    const size_t colon = cursor.find(':', from);
    parts.emplace_back(cursor.substr(from, colon - from));
    if (colon == std::string_view::npos) break;
    from = colon + 1;
  }
  if (parts.size() != 4) return bad("it does not have the four fields this server makes");
  const std::string& st = parts[0];
  if (st.size() != 1 || walk.find(st[0]) == std::string_view::npos) {
    return bad(fmt::format("status '{}' is not one of this listing's ({})", st, walk));
  }
  // Levels 0..9, and 10..19 for the push lane (lua_common.h).
  if (parts[1].empty() || parts[1].size() > 2 || !AllDigits(parts[1]) || ToInt(parts[1]) > 19) {
    return bad("the priority level is not 0..19");
  }
  if (!parts[2].empty()) {
    // A sorted-set score as Redis prints it: an integer, or a double in exponent form.
    double score = 0;
    const std::string& s = parts[2];
    auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), score);
    if (ec != std::errc() || end != s.data() + s.size() || !std::isfinite(score) ||
        s.find_first_not_of("0123456789.e+-") != std::string::npos) {
      return bad("the position is not a number");
    }
  }
  if (!parts[3].empty() && (!AllDigits(parts[3]) || parts[3].size() > 16)) {
    return bad("the sequence number is not one");
  }
  if (parts[2].empty() && !parts[3].empty()) return bad("a sequence number without a position");
  return parts;
}

}  // namespace

void RedisBackend::List(backend::ListRequest req, Callback<Result<backend::ListPage>> done) {
  const TimePoint now = clock_->Now();
  const std::string walk =
      req.status.has_value() ? std::to_string(static_cast<int>(*req.status)) : "123";
  std::vector<std::string> args = {Ms(now), std::to_string(options_.retention.count()),
                                   std::to_string(std::max(1, req.limit)), walk};
  if (req.cursor.empty()) {
    args.insert(args.end(), {"", "", "", ""});
  } else {
    Result<std::vector<std::string>> c = ParseCursor(req.cursor, walk);
    if (!c.has_value()) return done(c.error());
    for (std::string& f : *c) args.push_back(std::move(f));
  }
  const std::string topic = req.topic;
  Eval(kListScript, topic, std::move(args),
       [topic, now, done = std::move(done)](Result<RedisReply> r) mutable {
         if (!r.has_value()) return done(r.error());
         const auto& e = r->elements;
         if (r->type != RedisReply::Type::kArray || e.empty() ||
             (e.size() - 1) % kRecordFields != 0) {
           return done(Unexpected(*r, "listMsg"));
         }
         backend::ListPage page;
         page.next_cursor = Str(e[0]);
         page.messages.reserve((e.size() - 1) / kRecordFields);
         for (size_t i = 1; i < e.size(); i += kRecordFields) {
           core::MessageRecord rec = ParseRecord(topic, e, i);
           const MsgStatus st = core::StatusAt(rec, now);
           page.messages.push_back(Message{std::move(rec), st});
         }
         done(std::move(page));
       });
}

}  // namespace chronoq::redis
