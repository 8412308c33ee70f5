// RedisBackend on a keyspace written before issue 14 (brief decision 9): records without the
// priority, count and last-error fields, pending and delivered messages in the sets 'p' and 'd'
// of the time before priority levels. Written here field by field as the send and pull scripts
// of that time wrote them; the backend of today must read, pull, list, ack and count them. And
// the record formats of redis-format (1 hash, 2 and 3 MessagePack): every node reads them all.
#include "redis/redis_backend.h"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <future>
#include <memory>

#include "base/clock.h"
#include "base/scheduler.h"
#include "redis/command_sink.h"
#include "redis/connection.h"
#include "redis/event_loop.h"
#include "redis/key_id.h"
#include "tests/testutil/redis_servers.h"
#include "tests/testutil/redis_test_options.h"
#include "tests/testutil/sync_backend.h"

namespace chronoq::redis {
namespace {

constexpr int64_t kNow = 1'700'000'040'000;

class OldKeyspaceTest : public ::testing::Test {
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
  }
  // A node of namespace "old" writing records in `format` (redis-format).
  void StartBackend(int format = 3) {
    b_.reset();
    backend_.reset();
    RedisBackendOptions o;
    o.ns = "old";
    o.record_format = format;
    backend_ = std::make_unique<RedisBackend>(o, sink_.get(), &clock_, &scheduler_);
    b_ = std::make_unique<testutil::SyncBackend>(backend_.get());
  }
  void TearDown() override {
    b_.reset();
    backend_.reset();
  }
  // How the record of `id` in topic `t` is stored: "hash" (format 1), "strings" (format 2: a
  // MessagePack array of strings), "integers" (format 3: its times are MessagePack integers).
  std::string Layout(const std::string& t, const std::string& id) {
    Result<testutil::RedisReply> r =
        raw_->Command({"EVAL",
                       "local t = redis.call('TYPE', KEYS[1]).ok\n"
                       "if t ~= 'string' then return t end\n"
                       "local v = cmsgpack.unpack(redis.call('GET', KEYS[1]))\n"
                       "return type(v[3]) == 'number' and 'integers' or 'strings'",
                       "1", "cq:{old:" + t + "}:r:" + id});
    if (!r.has_value()) return r.error().ToString();
    return r->str;
  }
  int64_t Ttl(const std::string& t, const std::string& id) {
    Result<testutil::RedisReply> r = raw_->Command({"PTTL", "cq:{old:" + t + "}:r:" + id});
    return r.has_value() ? r->integer : -3;
  }
  void Raw(const std::vector<std::string>& args) {
    Result<testutil::RedisReply> r = raw_->Command(args);
    ASSERT_TRUE(r.has_value() && !r->is_error()) << args[0];
  }
  // A record as the scripts before issue 14 left it: phase 0 pending, 1 delivered.
  void OldRecord(const std::string& id, int seq, int64_t trigger, int phase, int64_t visible,
                 int retry) {
    const std::string p = "cq:{old:t}:";
    const std::string member = fmt::format("{:016d}{}", seq, id);
    const int64_t expire = trigger + 3'600'000;
    Raw({"HSET", p + "r:" + id,
         "p",    "body " + id,
         "pt",   std::to_string(kNow - 10'000),
         "tt",   std::to_string(trigger),
         "et",   std::to_string(expire),
         "mr",   "3",
         "r",    std::to_string(retry),
         "ph",   std::to_string(phase),
         "es",   "1",
         "va",   std::to_string(visible),
         "ea",   "0",
         "sq",   std::to_string(seq)});
    Raw({"ZADD", p + (phase == 0 ? "p" : "d"), std::to_string(visible), member});
    Raw({"ZADD", p + "e", std::to_string(expire), member});
    Raw({"SET", p + "seq", std::to_string(seq)});
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

std::vector<std::string> Ids(const std::vector<core::Message>& ms) {
  std::vector<std::string> out;
  for (const core::Message& m : ms) out.push_back(m.record.msg_id);
  return out;
}

TEST_F(OldKeyspaceTest, RecordsWrittenBeforePrioritiesKeepWorking) {
  OldRecord("ready", 1, kNow - 5'000, 0, kNow - 5'000, 0);
  OldRecord("waiting", 2, kNow + 60'000, 0, kNow + 60'000, 0);
  OldRecord("consuming", 3, kNow - 8'000, 1, kNow + 20'000, 1);
  StartBackend();

  Result<core::Message> m = b_->Get("t", "ready");
  ASSERT_TRUE(m.has_value()) << m.error().ToString();
  EXPECT_EQ(m->status, core::MsgStatus::kReady);
  EXPECT_EQ(m->record.priority, 0);
  EXPECT_EQ(m->record.count_trigger, 0);
  EXPECT_EQ(m->record.count, 0);
  EXPECT_EQ(m->record.last_error, "");
  EXPECT_EQ(m->record.payload, "body ready");

  Result<core::TopicInfo> info = b_->Info("t");
  ASSERT_TRUE(info.has_value());
  EXPECT_EQ(info->waiting, 1);
  EXPECT_EQ(info->ready, 1);
  EXPECT_EQ(info->consuming, 1);

  // Listed in each status, in the default walk WAITING, READY, CONSUMING.
  Result<backend::ListPage> page = b_->ListMsg(backend::ListRequest{"t", std::nullopt, 10, ""});
  ASSERT_TRUE(page.has_value()) << page.error().ToString();
  EXPECT_EQ(Ids(page->messages), (std::vector<std::string>{"waiting", "ready", "consuming"}));
  EXPECT_EQ(page->next_cursor, "");

  // A new message of a higher priority goes first; the old one of priority 0 after it.
  core::NewMessage hi{"t", "hi", "x", Millis(0), Millis(3'600'000), 3};
  hi.priority = 7;
  ASSERT_TRUE(b_->Send(hi).has_value());
  Result<std::vector<core::Message>> got = b_->Pull("t", 10);
  ASSERT_TRUE(got.has_value()) << got.error().ToString();
  EXPECT_EQ(Ids(*got), (std::vector<std::string>{"hi", "ready"}));

  // The old delivery is nacked with a reason, pulled again, acked.
  Result<std::vector<Status>> acks = b_->AckBatch("t", {{"consuming", false, "boom"}});
  ASSERT_TRUE(acks.has_value()) << acks.error().ToString();
  EXPECT_TRUE((*acks)[0].ok()) << (*acks)[0].ToString();
  EXPECT_EQ(b_->Get("t", "consuming")->record.last_error, "boom");
  got = b_->Pull("t", 10);
  ASSERT_TRUE(got.has_value());
  EXPECT_EQ(Ids(*got), std::vector<std::string>{"consuming"});
  EXPECT_EQ((*got)[0].record.retry, 2);
  EXPECT_TRUE(b_->Ack("t", "consuming").ok());

  // The old waiting one can be updated and fires at its new time.
  core::MessageUpdate u;
  u.trigger_time = clock_.Now();
  Result<core::Message> up = b_->Update("t", "waiting", u);
  ASSERT_TRUE(up.has_value()) << up.error().ToString();
  EXPECT_EQ(up->status, core::MsgStatus::kReady);
  got = b_->Pull("t", 10);
  ASSERT_TRUE(got.has_value());
  EXPECT_EQ(Ids(*got), std::vector<std::string>{"waiting"});
}

// A mixed fleet (a rolling upgrade, then the switch of redis-format): records written by a
// node of each format are pulled, nacked, pulled again, acked and read by nodes of every
// format, and each change leaves the record in the format of the node that made it.
TEST_F(OldKeyspaceTest, EveryFormatReadsAndChangesTheRecordsOfEveryOther) {
  const char* const kLayout[] = {"", "hash", "strings", "integers"};
  for (int w = 1; w <= 3; ++w) {
    for (int r = 1; r <= 3; ++r) {
      SCOPED_TRACE(fmt::format("written in format {}, changed in format {}", w, r));
      const std::string t = fmt::format("f{}{}", w, r);
      StartBackend(w);
      ASSERT_TRUE(b_->Send(t, "a", "body a", Millis(0)).has_value());
      ASSERT_TRUE(b_->Send(t, "b", "body b", Millis(60'000)).has_value());
      EXPECT_EQ(Layout(t, "a"), kLayout[w]);

      StartBackend(r);
      Result<std::vector<core::Message>> got = b_->Pull(t, 10);
      ASSERT_TRUE(got.has_value()) << got.error().ToString();
      ASSERT_EQ(Ids(*got), std::vector<std::string>{"a"});
      EXPECT_EQ((*got)[0].record.payload, "body a");
      EXPECT_EQ((*got)[0].record.retry, 1);
      EXPECT_EQ(Layout(t, "a"), kLayout[r]);

      StartBackend(w);
      Result<std::vector<Status>> acks = b_->AckBatch(t, {{"a", false, "boom"}});
      ASSERT_TRUE(acks.has_value()) << acks.error().ToString();
      EXPECT_TRUE((*acks)[0].ok()) << (*acks)[0].ToString();
      EXPECT_EQ(Layout(t, "a"), kLayout[w]);

      StartBackend(r);
      got = b_->Pull(t, 10);
      ASSERT_TRUE(got.has_value()) << got.error().ToString();
      ASSERT_EQ(Ids(*got), std::vector<std::string>{"a"});
      EXPECT_EQ((*got)[0].record.retry, 2);
      EXPECT_EQ((*got)[0].record.last_error, "boom");
      EXPECT_EQ((*got)[0].record.payload, "body a");

      StartBackend(w);
      EXPECT_TRUE(b_->Ack(t, "a").ok());
      StartBackend(r);
      Result<core::Message> a = b_->Get(t, "a");
      ASSERT_TRUE(a.has_value()) << a.error().ToString();
      EXPECT_EQ(a->status, core::MsgStatus::kConsumeOk);
      EXPECT_GT(Ttl(t, "a"), 0);  // Redis deletes it after the retention, in every format
      Result<core::Message> b = b_->Get(t, "b");
      ASSERT_TRUE(b.has_value()) << b.error().ToString();
      EXPECT_EQ(b->status, core::MsgStatus::kWaiting);
      EXPECT_EQ(b->record.payload, "body b");
      EXPECT_EQ(b->record.trigger_time, FromEpochMs(kNow + 60'000));
    }
  }
}

// redis-format 1 writes what nodes before issue 20 read: a hash with a field per name (their
// load is HMGET of the names, the record missing when 'pt' is), every change included.
TEST_F(OldKeyspaceTest, FormatOneWritesTheHashesOfNodesBeforeIssue20) {
  StartBackend(1);
  core::NewMessage m{"t", "m", "body", Millis(0), Millis(3'600'000), 3};
  m.priority = 4;
  ASSERT_TRUE(b_->Send(m).has_value());
  ASSERT_TRUE(b_->Pull("t", 1).has_value());
  Result<std::vector<Status>> acks = b_->AckBatch("t", {{"m", false, "boom"}});
  ASSERT_TRUE(acks.has_value() && (*acks)[0].ok());
  Result<testutil::RedisReply> h = raw_->Command(
      {"HMGET", "cq:{old:t}:r:m", "p", "pt", "tt", "mr", "r", "ph", "es", "sq", "pr", "le", "ri"});
  ASSERT_TRUE(h.has_value());
  std::vector<std::string> v;
  for (const testutil::RedisReply& x : h->elements) v.push_back(x.is_nil() ? "(nil)" : x.str);
  EXPECT_EQ(v, (std::vector<std::string>{"body", std::to_string(kNow), std::to_string(kNow), "3",
                                         "1", "0", "1", "1", "4", "boom", "(nil)"}));
  EXPECT_TRUE(b_->Delete("t", "m").ok());
  EXPECT_EQ(Layout("t", "m"), "hash");
  EXPECT_GT(Ttl("t", "m"), 0);
}

// Layout 4 (docs/redis.md "Format 4", build step 4): a node with format 4 (a test-only switch;
// the config refuses it) creates new topics in layout 4: records as fields of the hash buckets
// 'b:<n>' named by key id (src/redis/key_id.h, the same bytes and bucket the scripts compute),
// pending messages in listpack buckets, no key per message; a topic that exists keeps its layout;
// a node of format 2 serves a layout-4 topic fully (one script serves either layout).
TEST_F(OldKeyspaceTest, FormatFourCreatesTopicsInLayoutFourThatEveryNodeServes) {
  StartBackend(3);
  ASSERT_TRUE(b_->Send("old3", "x", "body", Millis(0)).has_value());
  StartBackend(4);
  const std::string gen = "0123456789abcdef0123456789abcdef";
  ASSERT_TRUE(b_->Send("t4", gen, "generated", Millis(0)).has_value());
  ASSERT_TRUE(b_->Send("t4", "client-id", "client", Millis(60'000)).has_value());
  ASSERT_TRUE(b_->Send("old3", "y", "body", Millis(0)).has_value());
  const std::string p = "cq:{old:t4}:";
  EXPECT_EQ(raw_->Command({"GET", p + "lay"})->str, "4");
  EXPECT_TRUE(raw_->Command({"GET", "cq:{old:old3}:lay"})->is_nil());
  EXPECT_EQ(Layout("old3", "y"), "integers");  // layout 3 still: a key per record
  EXPECT_TRUE(raw_->Command({"KEYS", p + "r:*"})->elements.empty());
  for (const std::string& id : {gen, std::string("client-id")}) {
    const std::string kid = KeyIdOf(id);
    Result<testutil::RedisReply> f =
        raw_->Command({"HEXISTS", p + "b:" + std::to_string(RecordBucketOf(kid)), kid});
    ASSERT_TRUE(f.has_value());
    EXPECT_EQ(f->integer, 1) << id;
  }
  EXPECT_EQ(KeyIdOf(gen).size(), 17u);
  Result<testutil::RedisReply> buckets = raw_->Command({"KEYS", p + "q0:*"});
  ASSERT_EQ(buckets->elements.size(), 1u);
  EXPECT_EQ(raw_->Command({"OBJECT", "ENCODING", buckets->elements[0].str})->str, "listpack");

  StartBackend(2);  // another node, of format 2, pulls, nacks, acks and reads them
  Result<std::vector<core::Message>> got = b_->Pull("t4", 10);
  ASSERT_TRUE(got.has_value());
  ASSERT_EQ(got->size(), 1u);
  EXPECT_EQ((*got)[0].record.msg_id, gen);
  EXPECT_EQ((*got)[0].record.payload, "generated");
  Result<std::vector<Status>> acks = b_->AckBatch("t4", {{gen, false, "boom"}});
  ASSERT_TRUE(acks.has_value() && (*acks)[0].ok());
  got = b_->Pull("t4", 10);
  ASSERT_TRUE(got.has_value());
  ASSERT_EQ(got->size(), 1u);
  EXPECT_EQ((*got)[0].record.last_error, "boom");
  EXPECT_TRUE(b_->Ack("t4", gen).ok());
  EXPECT_EQ(b_->Get("t4", gen)->status, core::MsgStatus::kConsumeOk);
  EXPECT_EQ(b_->Get("t4", "client-id")->status, core::MsgStatus::kWaiting);
  ASSERT_TRUE(b_->Send("t4", "from-two", "body", Millis(0)).has_value());  // stored in layout 4
  EXPECT_EQ(
      raw_->Command({"HEXISTS", p + "b:" + std::to_string(RecordBucketOf("from-two")), "from-two"})
          ->integer,
      1);
  EXPECT_TRUE(raw_->Command({"KEYS", p + "r:*"})->elements.empty());
}

// Layout 4 has no key per record, so no PEXPIRE: the record of an ended message is deleted from
// its bucket by the trim of a later end once its retention is over, with its 'X<s>' entry.
TEST_F(OldKeyspaceTest, LayoutFourDeletesEndedRecordsOnceTheirRetentionIsOver) {
  StartBackend(4);
  ASSERT_TRUE(b_->Send("t4", "a", "body", Millis(0)).has_value());
  ASSERT_TRUE(b_->Send("t4", "b", "body", Millis(0)).has_value());
  ASSERT_TRUE(b_->Delete("t4", "a").ok());
  const std::string p = "cq:{old:t4}:";
  const std::string bucket_a = p + "b:" + std::to_string(RecordBucketOf("a"));
  EXPECT_EQ(raw_->Command({"HEXISTS", bucket_a, "a"})->integer, 1);  // retained
  EXPECT_EQ(b_->Get("t4", "a")->status, core::MsgStatus::kDelete);
  clock_.Advance(Millis(300'001));  // the default retention
  EXPECT_FALSE(b_->Get("t4", "a").has_value());
  ASSERT_TRUE(b_->Delete("t4", "b").ok());  // its end trims the ended set
  EXPECT_EQ(raw_->Command({"HEXISTS", bucket_a, "a"})->integer, 0);
  EXPECT_EQ(raw_->Command({"ZCARD", p + "X7"})->integer, 1);  // b's
  EXPECT_EQ(b_->Get("t4", "b")->status, core::MsgStatus::kDelete);
}

// Layout 4's ended records of a topic that gets no more requests (docs/redis.md "Ended
// records"): each end's script answers when the oldest retained end runs out, the node lists the
// topic in the namespace's sweep set, and the once-a-second sweep deletes each record when its
// retention is over, rescoring the topic to the next one and removing it once nothing is left;
// reads stay exact meanwhile, and the waiting message is untouched.
TEST_F(OldKeyspaceTest, LayoutFourSweepsAQuietTopicsEndedRecordsWhenTheirRetentionEnds) {
  StartBackend(4);
  const std::string p = "cq:{old:t4}:";
  auto settle = [&] {
    std::promise<void> settled;
    backend_->Flush([&settled] { settled.set_value(); });
    settled.get_future().wait();
  };
  auto has = [&](const std::string& id) {
    return raw_->Command({"HEXISTS", p + "b:" + std::to_string(RecordBucketOf(id)), id})->integer;
  };
  auto swept_at = [&] { return raw_->Command({"ZSCORE", "cq:{old}:sweep", "t4"})->str; };
  ASSERT_TRUE(b_->Send("t4", "a", "body", Millis(0)).has_value());
  ASSERT_TRUE(b_->Send("t4", "waits", "body", Millis(3'600'000)).has_value());
  ASSERT_EQ(b_->Pull("t4", 10)->size(), 1u);
  ASSERT_TRUE(b_->Ack("t4", "a").ok());  // ended at kNow, retained until kNow + 300 s
  settle();
  EXPECT_EQ(swept_at(), std::to_string(kNow + 300'000));
  scheduler_.Advance(Millis(100'000));
  ASSERT_TRUE(b_->Send("t4", "b", "body", Millis(0)).has_value());
  ASSERT_TRUE(b_->Delete("t4", "b").ok());  // ended at kNow + 100 s
  settle();
  EXPECT_EQ(swept_at(), std::to_string(kNow + 300'000));  // the earlier time stays

  scheduler_.Advance(Millis(199'000));  // 1 s before a's retention ends: sweeps found nothing
  settle();
  EXPECT_EQ(has("a"), 1);
  EXPECT_EQ(b_->Get("t4", "a")->status, core::MsgStatus::kConsumeOk);
  scheduler_.Advance(Millis(2'000));  // no request: the round at +300 s deletes a's record
  settle();
  EXPECT_EQ(has("a"), 0);
  EXPECT_EQ(has("b"), 1);
  EXPECT_EQ(raw_->Command({"ZCARD", p + "X4"})->integer, 0);
  EXPECT_EQ(swept_at(), std::to_string(kNow + 400'000));  // b's
  EXPECT_FALSE(b_->Get("t4", "a").has_value());
  EXPECT_EQ(b_->Get("t4", "b")->status, core::MsgStatus::kDelete);

  scheduler_.Advance(Millis(99'000));  // rounds may overlap while the clock jumps: settle, then
  settle();                            // one round (each second) that is sure to run
  scheduler_.Advance(Millis(2'000));
  settle();
  EXPECT_EQ(has("b"), 0);
  EXPECT_EQ(raw_->Command({"ZCARD", p + "X7"})->integer, 0);
  EXPECT_TRUE(raw_->Command({"ZSCORE", "cq:{old}:sweep", "t4"})->is_nil());  // nothing left
  EXPECT_EQ(b_->Get("t4", "waits")->status, core::MsgStatus::kWaiting);
  EXPECT_EQ(b_->Info("t4")->waiting, 1);
}

// The sweep rounds cost Redis nothing while the namespace has nothing to sweep: a node of a
// namespace without layout-4 topics reads the sweep set once after its start, not every second;
// a layout-4 topic's ended records keep the rounds going until they are swept, then the rounds
// stop, and the next answer of a layout-4 topic starts them again.
TEST_F(OldKeyspaceTest, SweepRoundsRunOnlyWhileTheNamespaceHasSomethingToSweep) {
  struct : backend::ReadyListener {
    void OnReady(std::string_view) override {}
  } listener;
  auto settle = [&] {
    std::promise<void> settled;
    backend_->Flush([&settled] { settled.set_value(); });
    settled.get_future().wait();
  };
  // The sweep set's readings (no script runs meanwhile: nothing is due).
  auto readings = [&]() -> int64_t {
    const std::string info = raw_->Command({"INFO", "commandstats"})->str;
    const size_t at = info.find("cmdstat_zrangebyscore:calls=");
    return at == std::string::npos ? 0 : std::stoll(info.substr(at + 28));
  };
  auto idle = [&](int seconds) {
    for (int i = 0; i < seconds; ++i) {
      scheduler_.Advance(Millis(1'000));
      settle();
    }
  };
  StartBackend(3);
  backend_->SetReadyListener(&listener);
  ASSERT_TRUE(b_->Send("t3", "a", "body", Millis(0)).has_value());
  ASSERT_EQ(b_->Pull("t3", 10)->size(), 1u);
  ASSERT_TRUE(b_->Ack("t3", "a").ok());
  const int64_t before = readings();
  idle(10);
  EXPECT_EQ(readings(), before + 1);  // the first round found the set empty: no more rounds

  StartBackend(4);
  backend_->SetReadyListener(&listener);
  ASSERT_TRUE(b_->Send("t4", "a", "body", Millis(0)).has_value());
  ASSERT_TRUE(b_->Delete("t4", "a").ok());  // ended: listed until its retention (300 s) is over
  settle();
  EXPECT_FALSE(raw_->Command({"ZSCORE", "cq:{old}:sweep", "t4"})->is_nil());
  const int64_t listed = readings();
  idle(10);
  EXPECT_GE(readings(), listed + 9);  // a round a second while the topic is listed
  idle(292);
  EXPECT_TRUE(raw_->Command({"ZSCORE", "cq:{old}:sweep", "t4"})->is_nil());  // swept
  idle(2);
  const int64_t swept = readings();
  idle(10);
  EXPECT_EQ(readings(), swept);             // nothing listed: the rounds stopped
  ASSERT_TRUE(b_->Info("t4").has_value());  // an answer of a layout-4 topic
  const int64_t asked = readings();
  idle(3);
  EXPECT_EQ(readings(), asked + 1);  // one round, which found the set empty: stopped again
  backend_->SetReadyListener(nullptr);
}

// Layout 4 keeps waiting messages out of E (docs/redis.md "Waiting messages out of E"): a burst
// of 2,500 messages with one trigger time enters E when it becomes consumable, 1,000 per script
// and the rest by the wake-ups that follow (the mark 'em' reaches now); every message is then
// delivered once; the capacity counts the waiting ones ('qn' field 'w') exactly; a waiting
// message whose time runs out is ended.
TEST_F(OldKeyspaceTest, LayoutFourMovesWaitingMessagesIntoEWhenTheyBecomeConsumable) {
  StartBackend(4);
  const std::string p = "cq:{old:t4}:";
  for (int b = 0; b < 25; ++b) {
    std::vector<core::NewMessage> batch;
    for (int i = 0; i < 100; ++i) {
      batch.push_back(core::NewMessage{"t4", fmt::format("m{}", b * 100 + i), "x", Millis(60'000)});
    }
    ASSERT_TRUE(b_->SendBatch(std::move(batch)).has_value());
  }
  core::NewMessage short_life{"t4", "short", "x", Millis(60'000), Millis(5'000)};
  ASSERT_TRUE(b_->Send(short_life).has_value());
  auto count = [&](const std::vector<std::string>& cmd) { return raw_->Command(cmd)->integer; };
  auto waiting_out = [&] {
    Result<testutil::RedisReply> w = raw_->Command({"HGET", p + "qn", "w"});
    return w->is_nil() ? int64_t{0} : std::stoll(w->str);
  };
  EXPECT_EQ(count({"ZCARD", p + "E"}), 0);
  EXPECT_EQ(waiting_out(), 2501);
  core::TopicConfig full;
  full.capacity = 2501;
  ASSERT_TRUE(b_->SetTopicConfig("t4", full).has_value());
  Result<backend::Sent> refused = b_->SendFull(core::NewMessage{"t4", "over", "x", Millis(0)});
  EXPECT_FALSE(refused.has_value());  // the topic holds its capacity: the waiting ones count
  full.capacity = 0;
  ASSERT_TRUE(b_->SetTopicConfig("t4", full).has_value());

  clock_.Advance(Millis(66'000));  // all consumable; "short" ran out at 65 s
  // Its script moves 1,000 and answers now as the next change, so the wake-ups that follow move
  // the rest (and end "short" once it is in E).
  ASSERT_TRUE(b_->Info("t4").has_value());
  std::promise<void> settled;
  backend_->Flush([&settled] { settled.set_value(); });
  settled.get_future().wait();
  EXPECT_EQ(waiting_out(), 0);
  EXPECT_EQ(count({"ZCARD", p + "E"}), 2500);
  EXPECT_EQ(raw_->Command({"GET", p + "em"})->str,
            fmt::format("{} 281474976710655", kNow + 66'000));
  int delivered = 0;
  for (;;) {
    Result<std::vector<core::Message>> got = b_->Pull("t4", 100);
    ASSERT_TRUE(got.has_value());
    if (got->empty()) break;
    delivered += static_cast<int>(got->size());
  }
  EXPECT_EQ(delivered, 2500);
  EXPECT_EQ(count({"ZCARD", p + "E"}), 2500);  // the deliveries
  EXPECT_EQ(b_->Get("t4", "short")->status, core::MsgStatus::kExpire);
  EXPECT_EQ(count({"ZCARD", p + "X5"}), 1);  // ended by time, once in E
}

}  // namespace
}  // namespace chronoq::redis
