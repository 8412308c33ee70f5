#include "redis/redis_migrate.h"

#include <fmt/format.h>

#include <future>

#include "core/topic_config.h"
#include "redis/key_id.h"
#include "redis/script_reply.h"
#include "redis/scripts.h"

namespace chronoq::redis {
namespace {

// One command, waited for; an error reply is a failure.
Result<RedisReply> Call(CommandSink& sink, const std::string& key, std::vector<std::string> args) {
  std::promise<Result<RedisReply>> p;
  std::future<Result<RedisReply>> f = p.get_future();
  const std::string what = args.empty() ? std::string() : args[0];
  sink.Command(key, std::move(args), [&p](Result<RedisReply> r) { p.set_value(std::move(r)); });
  Result<RedisReply> r = f.get();
  if (r.has_value() && r->is_error()) {
    return Status(Errc::kUnavailable, fmt::format("redis refused {}: {}", what, r->str));
  }
  return r;
}

std::string Prefix(const std::string& ns, const std::string& topic) {
  return fmt::format("cq:{{{}:{}}}:", ns, topic);
}

// An outbox member of layouts 1-3: the seq as 16 decimal digits, then the msgId.
bool OldMember(std::string_view m) {
  if (m.size() < 17) return false;
  for (size_t i = 0; i < 16; ++i) {
    if (m[i] < '0' || m[i] > '9') return false;
  }
  return true;
}

// The outbox entries of layouts 1-3 the script is about to rename have inbox markers in the
// topic they go to (their dead letter's or redrive's target: field 'to'), named after the old
// member (docs/redis.md "Repeated moves"). Each gets a copy named after the new member, with the
// same expiry score, before the rename, so that a move repeated from the renamed entry is still
// found to be a repeat.
Status CopyInboxMarkers(CommandSink& sink, const std::string& ns, const std::string& topic) {
  const std::string p = Prefix(ns, topic);
  CQ_ASSIGN_OR_RETURN(RedisReply members, Call(sink, p, {"ZRANGE", p + "ob", "0", "-1"}));
  for (const RedisReply& m : members.elements) {
    if (!OldMember(m.str)) continue;
    CQ_ASSIGN_OR_RETURN(RedisReply to, Call(sink, p, {"HGET", p + "ob:" + m.str, "to"}));
    if (to.is_nil() || to.str.empty()) continue;
    const std::string in = Prefix(ns, to.str) + "in";
    const uint64_t seq = std::stoull(m.str.substr(0, 16));
    CQ_ASSIGN_OR_RETURN(RedisReply score, Call(sink, in, {"ZSCORE", in, topic + "\n" + m.str}));
    if (score.is_nil()) continue;
    CQ_ASSIGN_OR_RETURN(
        RedisReply added,
        Call(sink, in,
             {"ZADD", in, score.str, topic + "\n" + Layout4Member(seq, m.str.substr(16))}));
  }
  return Status::Ok();
}

}  // namespace

std::string Layout4Member(uint64_t seq, std::string_view msg_id) {
  std::string kid = KeyIdOf(msg_id);
  std::string out;
  out.reserve(7 + kid.size());
  for (int shift = 40; shift >= 0; shift -= 8) out.push_back(static_cast<char>(seq >> shift));
  out.push_back(static_cast<char>(RecordBucketOf(kid)));
  return out + kid;
}

Result<MigrateResult> MigrateTopic(CommandSink& sink, const base::Clock& clock,
                                   const std::string& ns, const std::string& topic,
                                   const MigrateOptions& options) {
  if (options.batch < 1 || options.batch > 10'000) {
    return InvalidArgument(fmt::format("the batch is {}; it must be 1..10000", options.batch));
  }
  const std::string p = Prefix(ns, topic);
  // The node-local layers every script takes first (lua_common.h); the migration reads none of
  // them but the record format, 3 (layout 4 keeps format 3's records).
  const std::string local = EncodeLocalConfig(core::EffectiveTopicConfig{}) +
                            HistoryArgs(Millis(0), 0, "migrate") + "\n3";
  MigrateResult res;
  while (options.max_calls == 0 || res.calls < options.max_calls) {
    CQ_RETURN_IF_ERROR(CopyInboxMarkers(sink, ns, topic));
    CQ_ASSIGN_OR_RETURN(RedisReply r,
                        Call(sink, p,
                             {"EVAL", std::string(scripts::kMigrate), "2", p, p + "lay", local,
                              Ms(clock.Now()), std::to_string(options.batch)}));
    if (r.type != RedisReply::Type::kArray || r.elements.size() != 2) {
      return Unexpected(r, "the migration script");
    }
    ++res.calls;
    const std::string& word = r.elements[0].str;
    const int64_t moved = r.elements[1].integer;
    res.moved += moved;
    if (options.progress) options.progress(moved);
    if (word == "NONE") {
      res.outcome = MigrateResult::Outcome::kNoTopic;
      return res;
    }
    if (word == "DONE") {
      res.outcome = MigrateResult::Outcome::kDone;
      return res;
    }
  }
  res.outcome = MigrateResult::Outcome::kStopped;
  return res;
}

Result<std::vector<std::string>> NamespaceTopics(CommandSink& sink, const std::string& ns) {
  const std::string key = fmt::format("cq:{{{}}}:topics", ns);
  CQ_ASSIGN_OR_RETURN(RedisReply r, Call(sink, key, {"ZRANGE", key, "0", "-1"}));
  std::vector<std::string> out;
  for (const RedisReply& t : r.elements) out.push_back(t.str);
  return out;
}

}  // namespace chronoq::redis
