// The offline migration to layout 4 (redis::MigrateTopic, scripts_migrate.cc; docs/redis.md
// "Migration from layouts 1-3") on the harness's real redis-server: topics written by nodes of
// record formats 1, 2 and 3 with messages in every state are migrated, and a node then reads the
// same messages (get, list, topic info, history) and goes on with them (pull, ack, take). Also a
// run stopped after some calls and started again, and the answer of a topic being migrated.
#include "redis/redis_migrate.h"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <map>
#include <memory>
#include <set>

#include "base/clock.h"
#include "base/scheduler.h"
#include "redis/cluster.h"
#include "redis/connection.h"
#include "redis/event_loop.h"
#include "redis/redis_backend.h"
#include "tests/testutil/redis_servers.h"
#include "tests/testutil/redis_test_options.h"
#include "tests/testutil/sync_backend.h"

namespace chronoq::redis {
namespace {

constexpr int64_t kNow = 1'700'000'040'000;
constexpr std::string_view kNs = "mig";

// A msgId of the form chronoq generates (its key id is 17 bytes, not itself).
std::string Generated(int i) { return fmt::format("{:032x}", 0xabc0000 + i); }

core::Callback Hook() {
  core::Callback cb;
  cb.url = "http://127.0.0.1:9/hook";
  cb.timeout = Millis(1000);
  return cb;
}

// What a node answers about a topic's messages, compared before and after the migration.
struct Snapshot {
  std::map<std::string, std::pair<core::MessageRecord, core::MsgStatus>> messages;
  core::TopicInfo info;
  std::map<int, std::vector<std::string>> listed;  // by status (0: 1-3 together)
  std::map<std::string, std::vector<core::HistoryEntry>> history;
};

class RedisMigrateTest : public ::testing::TestWithParam<int> {
 protected:
  void SetUp() override {
    Status s = redis_.Start();
    ASSERT_TRUE(s.ok()) << s.ToString();
    Result<testutil::RedisConn> c = testutil::RedisConn::Connect(redis_.port());
    ASSERT_TRUE(c.has_value()) << c.error().ToString();
    raw_ = std::make_unique<testutil::RedisConn>(std::move(*c));
    ConnectionOptions co = testutil::TestConnectionOptions(redis_.port());
    conn_ = std::make_unique<RedisConnection>(&loop_, co);
    sink_ = std::make_unique<SingleServer>(conn_.get());
    StartNode(GetParam());
  }
  void TearDown() override {
    b_.reset();
    backend_.reset();
  }
  // A node of namespace kNs writing records in `format`.
  void StartNode(int format) {
    b_.reset();
    backend_.reset();
    RedisBackendOptions o;
    o.ns = std::string(kNs);
    o.record_format = format;
    backend_ = std::make_unique<RedisBackend>(o, sink_.get(), &clock_, &scheduler_);
    b_ = std::make_unique<testutil::SyncBackend>(backend_.get());
  }
  std::string Prefix(const std::string& topic) const {
    return fmt::format("cq:{{{}:{}}}:", kNs, topic);
  }
  testutil::RedisReply Raw(const std::vector<std::string>& args) {
    Result<testutil::RedisReply> r = raw_->Command(args);
    EXPECT_TRUE(r.has_value() && !r->is_error()) << args[0];
    return r.has_value() ? *r : testutil::RedisReply{};
  }
  void Advance(Millis d) { clock_.Advance(d); }
  core::NewMessage Msg(const std::string& topic, const std::string& id, Millis delay) {
    core::NewMessage m;
    m.topic = topic;
    m.msg_id = id;
    m.payload = "body of " + id;
    m.delay = delay;
    return m;
  }
  void Send(core::NewMessage m) { ASSERT_TRUE(b_->Send(std::move(m)).has_value()); }
  Result<MigrateResult> Migrate(const std::string& topic, MigrateOptions o = {}) {
    return MigrateTopic(*sink_, clock_, std::string(kNs), topic, o);
  }

  // Topic "t" (history on, dead letters to "dlq") with messages in every state, "dlq" with the
  // dead letters, "push" with a push lane. Answers the msgIds of "t".
  std::vector<std::string> Fill() {
    core::TopicConfig cfg;
    cfg.history = true;
    cfg.dead_letter_topic = "dlq";
    EXPECT_TRUE(b_->SetTopicConfig("t", cfg).has_value());
    std::vector<std::string> ids;
    auto send = [&](core::NewMessage m) {
      ids.push_back(m.msg_id);
      Send(std::move(m));
    };
    // Waiting.
    send(Msg("t", "waiting", Millis(60'000)));
    send(Msg("t", Generated(1), Millis(90'000)));  // a generated msgId: its key id is not itself
    core::NewMessage prio_waiting = Msg("t", "prio-waiting", Millis(30'000));
    prio_waiting.priority = 3;
    send(prio_waiting);
    core::NewMessage counted = Msg("t", "counted", Millis(3'600'000));
    counted.count_trigger = 3;
    send(counted);
    // Delivered now: one to time out with no delivery left, one acked, one nacked, one to time
    // out and be ready again.
    core::NewMessage once = Msg("t", Generated(3), Millis(0));
    once.max_retry = 0;
    send(once);
    send(Msg("t", "to-ack", Millis(0)));
    send(Msg("t", "to-nack", Millis(0)));
    send(Msg("t", Generated(4), Millis(0)));
    Result<std::vector<core::Message>> pulled = b_->Pull("t", 4, Millis(20'000));
    EXPECT_TRUE(pulled.has_value() && pulled->size() == 4u);
    EXPECT_TRUE(b_->Ack("t", "to-ack").ok());
    EXPECT_TRUE(b_->Ack("t", "to-nack", /*ack=*/false).ok());
    // Ready, of two levels; one to run out of time, one deleted, one whose count is reached.
    send(Msg("t", "ready", Millis(0)));
    core::NewMessage prio = Msg("t", Generated(2), Millis(0));
    prio.priority = 7;
    send(prio);
    core::NewMessage short_lived = Msg("t", "expires", Millis(0));
    short_lived.ttl = Millis(2'000);
    send(short_lived);
    send(Msg("t", "to-delete", Millis(0)));
    EXPECT_TRUE(b_->Delete("t", "to-delete").ok());
    core::NewMessage count_reached = Msg("t", "count-reached", Millis(3'600'000));
    count_reached.count_trigger = 1;
    send(count_reached);
    EXPECT_TRUE(b_->Count("t", "counted").has_value());
    EXPECT_TRUE(b_->Count("t", "count-reached").has_value());
    Advance(Millis(25'000));  // Generated(3)'s only delivery timed out; "expires" ran out
    EXPECT_TRUE(b_->Info("t").has_value());  // ends them: dead letters into "dlq"
    // Generated(2) (priority 7) delivered, in flight.
    pulled = b_->Pull("t", 1, Millis(60'000));
    EXPECT_TRUE(pulled.has_value() && pulled->size() == 1u);
    // The push lane.
    core::TopicConfig push;
    push.callback = std::optional<core::Callback>(Hook());
    EXPECT_TRUE(b_->SetTopicConfig("push", push).has_value());
    Send(Msg("push", "p1", Millis(0)));
    Send(Msg("push", "p2", Millis(0)));
    Send(Msg("push", "p3", Millis(10'000)));
    EXPECT_TRUE(b_->TakePush("push", 1, Millis(100)).has_value());
    return ids;
  }

  Snapshot Take(const std::string& topic, const std::vector<std::string>& ids) {
    Snapshot s;
    for (const std::string& id : ids) {
      Result<core::Message> m = b_->Get(topic, id);
      EXPECT_TRUE(m.has_value()) << topic << "/" << id << ": " << m.error().ToString();
      if (m.has_value()) s.messages[id] = {m->record, m->status};
      Result<std::vector<core::HistoryEntry>> h = b_->History(topic, id);
      if (h.has_value()) s.history[id] = *h;
    }
    Result<core::TopicInfo> info = b_->Info(topic);
    EXPECT_TRUE(info.has_value());
    if (info.has_value()) s.info = *info;
    for (int st : {0, 1, 2, 3, 4, 5, 6, 7}) {
      backend::ListRequest req;
      req.topic = topic;
      if (st != 0) req.status = static_cast<core::MsgStatus>(st);
      req.limit = 3;  // several pages: the cursors work across the layouts' walks
      do {
        Result<backend::ListPage> page = b_->ListMsg(req);
        EXPECT_TRUE(page.has_value()) << st;
        if (!page.has_value()) break;
        for (const core::Message& m : page->messages) s.listed[st].push_back(m.record.msg_id);
        req.cursor = page->next_cursor;
      } while (!req.cursor.empty());
    }
    return s;
  }
  std::vector<std::string> Ids(const std::string& topic) {
    std::vector<std::string> out;
    backend::ListRequest req;
    req.topic = topic;
    req.limit = 1000;
    for (int st : {1, 2, 3, 4, 5, 6, 7}) {
      req.status = static_cast<core::MsgStatus>(st);
      Result<backend::ListPage> page = b_->ListMsg(req);
      if (page.has_value()) {
        for (const core::Message& m : page->messages) out.push_back(m.record.msg_id);
      }
    }
    return out;
  }
  void ExpectSame(const Snapshot& before, const Snapshot& after) {
    ASSERT_EQ(before.messages.size(), after.messages.size());
    for (const auto& [id, m] : before.messages) {
      auto it = after.messages.find(id);
      ASSERT_NE(it, after.messages.end()) << id;
      EXPECT_EQ(it->second.first, m.first) << id;
      EXPECT_EQ(it->second.second, m.second) << id;
    }
    EXPECT_EQ(after.info, before.info);
    EXPECT_EQ(after.listed, before.listed);
    EXPECT_EQ(after.history, before.history);
  }
  // Layout 4's bookkeeping against what its sets hold: 'qn' n<l> is the members of level l's
  // buckets, 'w' the pending entries outside E; no key of layouts 1-3 is left.
  void ExpectLayout4(const std::string& topic) {
    const std::string p = Prefix(topic);
    EXPECT_EQ(Raw({"GET", p + "lay"}).str, "4");
    testutil::RedisReply keys = Raw({"KEYS", p + "*"});
    for (const testutil::RedisReply& k : keys.elements) {
      const std::string name = k.str.substr(p.size());
      EXPECT_FALSE(name.starts_with("r:")) << k.str;
      EXPECT_FALSE(name == "e" || name == "pl" || name == "p" || name == "d") << k.str;
      EXPECT_FALSE(name.size() <= 3 && (name[0] == 'p' || name[0] == 'd' || name[0] == 'x'))
          << k.str;
    }
    testutil::RedisReply check =
        Raw({"EVAL",
             "local P, bad = KEYS[1], {}\n"
             "local ls = redis.call('SMEMBERS', P..'ql')\n"
             "ls[#ls+1] = '0'\n"
             "local w = 0\n"
             "for _, l in ipairs(ls) do\n"
             "  local n = 0\n"
             "  for _, im in ipairs(redis.call('ZRANGE', P..'qi'..l, 0, -1)) do\n"
             "    local k = P..'q'..l..':'..string.sub(im, 15)\n"
             "    for _, m in ipairs(redis.call('ZRANGE', k, 0, -1)) do\n"
             "      n = n + 1\n"
             "      if not redis.call('ZSCORE', P..'E', m) then w = w + 1 end\n"
             "    end\n"
             "  end\n"
             "  local want = tonumber(redis.call('HGET', P..'qn', 'n'..l) or '0')\n"
             "  if n ~= want then bad[#bad+1] = 'n'..l..' '..want..' holds '..n end\n"
             "end\n"
             "local want = tonumber(redis.call('HGET', P..'qn', 'w') or '0')\n"
             "if w ~= want then bad[#bad+1] = 'w '..want..' counts '..w end\n"
             "return table.concat(bad, '; ')",
             "1", p});
    EXPECT_EQ(check.str, "") << topic;
  }

  testutil::RedisStandalone redis_;
  std::unique_ptr<testutil::RedisConn> raw_;
  base::ManualClock clock_{FromEpochMs(kNow)};
  base::ManualScheduler scheduler_{&clock_};
  EventLoop loop_;
  std::unique_ptr<RedisConnection> conn_;
  std::unique_ptr<CommandSink> sink_;
  std::unique_ptr<RedisBackend> backend_;
  std::unique_ptr<testutil::SyncBackend> b_;
};

TEST_P(RedisMigrateTest, EveryStateOfEveryRecordFormatReadsTheSameAfterTheMigration) {
  const std::vector<std::string> ids = Fill();
  const std::vector<std::string> dlq_ids = Ids("dlq");
  ASSERT_EQ(dlq_ids.size(), 2u);  // "expires" and Generated(3)
  const std::vector<std::string> push_ids = {"p1", "p2", "p3"};
  const Snapshot t = Take("t", ids), dlq = Take("dlq", dlq_ids), push = Take("push", push_ids);
  // Every state is there.
  std::set<core::MsgStatus> states;
  for (const auto& [id, m] : t.messages) states.insert(m.second);
  EXPECT_EQ(states.size(), 7u);
  ASSERT_FALSE(t.history.at(Generated(1)).empty());

  for (const std::string topic : {"t", "dlq", "push"}) {
    Result<MigrateResult> r = Migrate(topic);
    ASSERT_TRUE(r.has_value()) << r.error().ToString();
    EXPECT_EQ(r->outcome, MigrateResult::Outcome::kDone);
    EXPECT_EQ(r->calls, 1);
    ExpectLayout4(topic);
  }
  EXPECT_EQ(Migrate("t")->moved, 0);  // a second run finds it done
  EXPECT_EQ(Migrate("nothing-here")->outcome, MigrateResult::Outcome::kNoTopic);
  EXPECT_EQ(Raw({"EXISTS", Prefix("nothing-here") + "lay"}).integer, 0);

  // A node of this build (whatever its format) reads the same, from layout 4.
  ExpectSame(t, Take("t", ids));
  ExpectSame(dlq, Take("dlq", dlq_ids));
  ExpectSame(push, Take("push", push_ids));

  // And goes on: the delivery in flight is acked, the ready ones are pulled and acked, the
  // push lane's next message is taken, time runs out for the waiting ones as it would have.
  std::string in_flight;
  for (const auto& [id, m] : t.messages) {
    if (m.second == core::MsgStatus::kConsuming) in_flight = id;
  }
  ASSERT_FALSE(in_flight.empty());
  EXPECT_TRUE(b_->Ack("t", in_flight).ok());
  EXPECT_EQ(b_->Get("t", in_flight)->status, core::MsgStatus::kConsumeOk);
  Result<std::vector<core::Message>> ready = b_->Pull("t", 100, Millis(10'000));
  ASSERT_TRUE(ready.has_value());
  EXPECT_EQ(static_cast<int64_t>(ready->size()), t.info.ready);
  for (const core::Message& m : *ready) EXPECT_TRUE(b_->Ack("t", m.record.msg_id).ok());
  Result<backend::PushTake> taken = b_->TakePush("push", 10, Millis(100));
  ASSERT_TRUE(taken.has_value());
  ASSERT_EQ(taken->messages.size(), 1u);
  EXPECT_EQ(taken->messages[0].record.msg_id, "p2");
  Advance(Millis(95'000));
  Result<core::TopicInfo> info = b_->Info("t");
  ASSERT_TRUE(info.has_value());
  EXPECT_EQ(info->waiting, 1);  // "counted", an hour ahead
  EXPECT_EQ(info->ready, t.info.waiting - 1);
  EXPECT_EQ(b_->Get("t", Generated(1))->status, core::MsgStatus::kReady);
  ExpectLayout4("t");
}

TEST_P(RedisMigrateTest, ARunStoppedAfterSomeCallsFinishesWhenStartedAgain) {
  std::vector<core::NewMessage> batch;
  std::vector<std::string> ids;
  for (int i = 0; i < 2'500; ++i) {
    ids.push_back(i % 2 == 0 ? Generated(i) : fmt::format("client-{}", i));
    core::NewMessage m = Msg("big", ids.back(), Millis(i % 3 == 0 ? 0 : 1'000 * (i % 7 + 1)));
    m.priority = i % 4 == 0 ? 2 : 0;
    batch.push_back(std::move(m));
    if (batch.size() == 250) {
      ASSERT_TRUE(b_->SendBatch(std::move(batch)).has_value());
      batch.clear();
    }
  }
  ASSERT_TRUE(b_->Pull("big", 300, Millis(60'000)).has_value());
  for (int i = 0; i < 300; i += 3) ASSERT_TRUE(b_->Delete("big", ids[i]).ok());
  const Snapshot before = Take("big", ids);

  MigrateOptions o;
  o.batch = 400;
  o.max_calls = 3;
  Result<MigrateResult> part = Migrate("big", o);
  ASSERT_TRUE(part.has_value()) << part.error().ToString();
  EXPECT_EQ(part->outcome, MigrateResult::Outcome::kStopped);
  EXPECT_EQ(part->moved, 1'200);
  EXPECT_EQ(Raw({"GET", Prefix("big") + "lay"}).str, "m");

  // Meanwhile the topic answers every request with code 503 and why.
  Result<core::Message> got = b_->Get("big", ids[1]);
  ASSERT_FALSE(got.has_value());
  EXPECT_EQ(got.error().code(), Errc::kTryLater);
  EXPECT_EQ(got.error().message(),
            "topic 'big' is being migrated to redis-format 4 (chronoq redis-migrate); try again "
            "when the migration is done");
  EXPECT_EQ(b_->Send(Msg("big", "new", Millis(0))).error().code(), Errc::kTryLater);
  EXPECT_EQ(b_->Pull("big", 1).error().code(), Errc::kTryLater);
  EXPECT_EQ(b_->Info("big").error().code(), Errc::kTryLater);

  o.max_calls = 0;
  Result<MigrateResult> rest = Migrate("big", o);
  ASSERT_TRUE(rest.has_value()) << rest.error().ToString();
  EXPECT_EQ(rest->outcome, MigrateResult::Outcome::kDone);
  EXPECT_EQ(part->moved + rest->moved, 2'500);
  ExpectLayout4("big");
  ExpectSame(before, Take("big", ids));
  // Every message is there once: the ready and delivered ones pulled after their deadline.
  Advance(Millis(120'000));
  std::set<std::string> seen;
  for (;;) {
    Result<std::vector<core::Message>> p = b_->Pull("big", 500, Millis(60'000));
    ASSERT_TRUE(p.has_value());
    if (p->empty()) break;
    for (const core::Message& m : *p) EXPECT_TRUE(seen.insert(m.record.msg_id).second);
  }
  EXPECT_EQ(seen.size(), 2'500u - 100u);
}

// Messages ended before issue 14 left only their record (with its expiry), in no ended set:
// the migration finds them by their keys and moves them too, so get still answers them after
// it, until their retention is over. Also in calls of one message (the walk over the keys
// resumes from its cursor).
TEST_P(RedisMigrateTest, RecordsEndedBeforeIssue14AreMigratedAndStillFound) {
  for (const int64_t batch : {1000, 1}) {
    const std::string topic = fmt::format("pre14-{}", batch);
    const std::string p = Prefix(topic);
    const std::vector<std::string> ended = {"acked", Generated(20), "deleted"};
    for (const std::string& id : ended) Send(Msg(topic, id, Millis(0)));
    Send(Msg(topic, "waits", Millis(60'000)));
    ASSERT_EQ(b_->Pull(topic, 2)->size(), 2u);
    ASSERT_TRUE(b_->Ack(topic, "acked").ok());
    ASSERT_TRUE(b_->Ack(topic, Generated(20)).ok());
    ASSERT_TRUE(b_->Delete(topic, "deleted").ok());
    // As the scripts before issue 14 left them: no ended set, the records expiring.
    Raw({"DEL", p + "x4", p + "x7"});
    for (const std::string& id : ended) Raw({"PEXPIRE", p + "r:" + id, "300000"});
    Advance(Millis(1'000));

    MigrateOptions o;
    o.batch = batch;
    Result<MigrateResult> r = Migrate(topic, o);
    ASSERT_TRUE(r.has_value()) << r.error().ToString();
    EXPECT_EQ(r->outcome, MigrateResult::Outcome::kDone);
    EXPECT_EQ(r->moved, 4);
    ExpectLayout4(topic);  // no record key left
    EXPECT_EQ(Raw({"ZCARD", p + "X4"}).integer, 2);
    EXPECT_EQ(Raw({"ZCARD", p + "X7"}).integer, 1);
    EXPECT_EQ(b_->Get(topic, "acked")->status, core::MsgStatus::kConsumeOk);
    EXPECT_EQ(b_->Get(topic, Generated(20))->status, core::MsgStatus::kConsumeOk);
    EXPECT_EQ(b_->Get(topic, Generated(20))->record.payload, "body of " + Generated(20));
    EXPECT_EQ(b_->Get(topic, "deleted")->status, core::MsgStatus::kDelete);
    EXPECT_EQ(b_->Get(topic, "waits")->status, core::MsgStatus::kWaiting);
    Advance(Millis(300'000));  // their retention is over, as their expiry would have been
    EXPECT_FALSE(b_->Get(topic, "acked").has_value());
  }
}

// The pending messages of a call go into their buckets together (one ZADD per bucket, not one
// per message), and the buckets, their counts and the waiting count come out exact.
TEST_P(RedisMigrateTest, PendingMessagesGoIntoTheirBucketsTogether) {
  std::vector<core::NewMessage> batch;
  for (int i = 0; i < 2'000; ++i) {
    core::NewMessage m = Msg("many", Generated(100 + i), Millis(1'000 * (i % 50 + 1)));
    if (i % 5 == 0) m.priority = 1;
    batch.push_back(std::move(m));
    if (batch.size() == 250) {
      ASSERT_TRUE(b_->SendBatch(std::move(batch)).has_value());
      batch.clear();
    }
  }
  auto zadds = [&]() -> int64_t {
    const std::string info = Raw({"INFO", "commandstats"}).str;
    const size_t at = info.find("cmdstat_zadd:calls=");
    return at == std::string::npos ? 0 : std::stoll(info.substr(at + 19));
  };
  const int64_t before = zadds();
  MigrateOptions o;
  o.batch = 2'000;
  Result<MigrateResult> r = Migrate("many", o);
  ASSERT_TRUE(r.has_value()) << r.error().ToString();
  EXPECT_EQ(r->moved, 2'000);
  EXPECT_LT(zadds() - before, 300);  // about one per bucket of 32 and one per new bucket
  ExpectLayout4("many");
  EXPECT_EQ(b_->Info("many")->waiting, 2'000);
  Advance(Millis(51'000));
  std::set<std::string> seen;
  for (;;) {
    Result<std::vector<core::Message>> got = b_->Pull("many", 100);
    ASSERT_TRUE(got.has_value());
    if (got->empty()) break;
    for (const core::Message& m : *got) EXPECT_TRUE(seen.insert(m.record.msg_id).second);
  }
  EXPECT_EQ(seen.size(), 2'000u);
}

TEST_P(RedisMigrateTest, OutboxEntriesAreRenamedWithTheirInboxMarkers) {
  // An entry left by a node that died between writing it and removing it, after the dead
  // letter was stored: its marker is in the target's inbox.
  Send(Msg("src", "x", Millis(0)));
  const std::string old_member = fmt::format("{:016d}{}", 7, Generated(9));
  const std::string p = Prefix("src");
  Raw({"HSET", p + "ob:" + old_member,
       "k",    "dl",
       "id",   Generated(9),
       "to",   "dlq2",
       "p",    "body",
       "pr",   "0",
       "le",   "",
       "ds",   "5",
       "dr",   "0",
       "de",   std::to_string(kNow),
       "cb",   ""});
  Raw({"ZADD", p + "ob", std::to_string(kNow), old_member});
  const std::string score = std::to_string(kNow + 2'592'000'000);
  Raw({"ZADD", Prefix("dlq2") + "in", score, "src\n" + old_member});

  Result<MigrateResult> r = Migrate("src");
  ASSERT_TRUE(r.has_value()) << r.error().ToString();
  const std::string member = Layout4Member(7, Generated(9));
  EXPECT_EQ(member.size(), 6u + 1u + 17u);
  testutil::RedisReply ob = Raw({"ZRANGE", p + "ob", "0", "-1"});
  ASSERT_EQ(ob.elements.size(), 1u);
  EXPECT_EQ(ob.elements[0].str, member);
  EXPECT_EQ(Raw({"HGET", p + "ob:" + member, "id"}).str, Generated(9));
  EXPECT_EQ(Raw({"EXISTS", p + "ob:" + old_member}).integer, 0);
  EXPECT_EQ(Raw({"ZSCORE", Prefix("dlq2") + "in", "src\n" + member}).str, score);
}

// On a 3-master Cluster: a topic and its dead-letter topic in other slots, an abandoned outbox
// entry whose inbox marker is in the other slot.
TEST(RedisMigrateClusterTest, TopicsInOtherSlotsMigrateWithTheirOutboxMarkers) {
  testutil::RedisCluster* cluster = testutil::SharedDeployment<testutil::RedisCluster>();
  ASSERT_NE(cluster, nullptr);
  base::ManualClock clock{FromEpochMs(kNow)};
  base::ManualScheduler scheduler{&clock};
  EventLoop loop;
  std::vector<RedisEndpoint> seeds;
  for (uint16_t p : cluster->ports()) seeds.push_back({"127.0.0.1", p});
  ConnectionOptions co = testutil::TestConnectionOptions(seeds.front().port);
  Result<std::unique_ptr<RedisClusterClient>> sink = RedisClusterClient::Connect(&loop, co, seeds);
  ASSERT_TRUE(sink.has_value()) << sink.error().ToString();
  RedisBackendOptions o;
  o.ns = "mig-cluster";
  RedisBackend backend(o, sink->get(), &clock, &scheduler);
  testutil::SyncBackend b(&backend);
  auto raw = [&](const std::vector<std::string>& args) {
    Result<testutil::RedisReply> r = cluster->Command(args);
    EXPECT_TRUE(r.has_value() && !r->is_error()) << args[0];
    return r.has_value() ? *r : testutil::RedisReply{};
  };

  core::TopicConfig cfg;
  cfg.dead_letter_topic = "dl";
  ASSERT_TRUE(b.SetTopicConfig("src", cfg).has_value());
  ASSERT_TRUE(b.Send("src", "a1", "one", Millis(0)).has_value());
  ASSERT_TRUE(b.Send("src", Generated(1), "two", Millis(60'000)).has_value());
  ASSERT_TRUE(b.Send("src", "a3", "three", Millis(0), Millis(1'000)).has_value());
  ASSERT_EQ(b.Pull("src", 1)->size(), 1u);  // a1, in flight
  clock.Advance(Millis(2'000));
  ASSERT_TRUE(b.Info("src").has_value());  // a3 ends: its dead letter goes to "dl"
  ASSERT_EQ(b.Get("dl", "a3")->status, core::MsgStatus::kReady);
  const std::string old_member = fmt::format("{:016d}{}", 9, "gone");
  raw({"HSET", "cq:{mig-cluster:src}:ob:" + old_member, "k", "dl", "id", "gone", "to", "dl"});
  raw({"ZADD", "cq:{mig-cluster:src}:ob", std::to_string(kNow), old_member});
  raw({"ZADD", "cq:{mig-cluster:dl}:in", "4000000000000", "src\n" + old_member});

  for (const std::string topic : {"src", "dl"}) {
    Result<MigrateResult> r = MigrateTopic(**sink, clock, "mig-cluster", topic, {});
    ASSERT_TRUE(r.has_value()) << r.error().ToString();
    EXPECT_EQ(r->outcome, MigrateResult::Outcome::kDone);
    EXPECT_EQ(raw({"GET", "cq:{mig-cluster:" + topic + "}:lay"}).str, "4");
  }
  EXPECT_EQ(raw({"ZSCORE", "cq:{mig-cluster:dl}:in", "src\n" + Layout4Member(9, "gone")}).str,
            "4000000000000");
  EXPECT_EQ(b.Get("src", Generated(1))->status, core::MsgStatus::kWaiting);
  EXPECT_EQ(b.Get("src", "a3")->status, core::MsgStatus::kExpire);
  EXPECT_TRUE(b.Ack("src", "a1").ok());
  Result<std::vector<core::Message>> dl = b.Pull("dl", 10);
  ASSERT_TRUE(dl.has_value());
  ASSERT_EQ(dl->size(), 1u);
  EXPECT_EQ((*dl)[0].record.msg_id, "a3");
}

INSTANTIATE_TEST_SUITE_P(Formats, RedisMigrateTest, ::testing::Values(1, 2, 3),
                         [](const auto& info) { return fmt::format("Format{}", info.param); });

}  // namespace
}  // namespace chronoq::redis
