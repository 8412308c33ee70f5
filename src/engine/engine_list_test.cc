// Engine::List (listMsg): orders, paging, cursors under concurrent changes, ended messages while
// retained, and a page's cost (store reads) independent of the backlog.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "base/clock.h"
#include "base/scheduler.h"
#include "engine/engine.h"
#include "engine/list_cursor.h"
#include "storage/memory/mem_kv.h"
#include "storage/message_store.h"
#include "tests/testutil/sync_backend.h"

namespace chronoq::engine {
namespace {

using backend::ListPage;
using backend::ListRequest;
using core::MsgStatus;
using V = std::vector<std::string>;

const TimePoint kT0 = FromEpochMs(1'700'000'040'000);
constexpr Millis kRetention(300'000);

// Counts what the engine reads from the store: entries stepped over by iterators and keys read
// by point reads. Forwards everything to a MemKv.
class CountingKv final : public storage::KvStore {
 public:
  Result<std::optional<std::string>> Get(storage::Cf cf, std::string_view key) override {
    ++point_reads;
    return inner_.Get(cf, key);
  }
  Result<std::vector<std::optional<std::string>>> MultiGet(
      storage::Cf cf, const std::vector<std::string>& keys) override {
    point_reads += static_cast<int64_t>(keys.size());
    return inner_.MultiGet(cf, keys);
  }
  std::unique_ptr<storage::KvIterator> Scan(storage::Cf cf, std::string lower,
                                            std::string upper) override {
    return std::make_unique<Counted>(inner_.Scan(cf, std::move(lower), std::move(upper)), &scanned);
  }
  std::optional<Status> Commit(storage::KvBatch batch, UniqueFunction<void(Status)> done) override {
    return inner_.Commit(std::move(batch), std::move(done));
  }
  void SetFailureHandler(UniqueFunction<void(Status)>) override {}
  void ResumeAfterFailure() override {}
  int64_t reads() const { return point_reads.load() + scanned.load(); }

  std::atomic<int64_t> point_reads{0};
  std::atomic<int64_t> scanned{0};

 private:
  class Counted final : public storage::KvIterator {
   public:
    Counted(std::unique_ptr<storage::KvIterator> it, std::atomic<int64_t>* n)
        : it_(std::move(it)), n_(n) {
      if (it_->Valid()) ++*n_;
    }
    bool Valid() const override { return it_->Valid(); }
    void Next() override {
      it_->Next();
      if (it_->Valid()) ++*n_;
    }
    std::string_view key() const override { return it_->key(); }
    std::string_view value() const override { return it_->value(); }
    Status status() const override { return it_->status(); }

   private:
    std::unique_ptr<storage::KvIterator> it_;
    std::atomic<int64_t>* n_;
  };
  storage::MemKv inner_;
};

class EngineListTest : public ::testing::Test {
 protected:
  EngineListTest()
      : clock_(kT0),
        sched_(&clock_),
        store_(&kv_, "ns"),
        engine_(std::make_unique<Engine>(Options(), &store_, &clock_, &sched_)),
        b_(engine_.get()) {
    EXPECT_TRUE(engine_->Recover().ok());
    sched_.RunDue();
  }
  static EngineOptions Options() {
    EngineOptions o;
    o.retention = kRetention;
    o.memory_horizon = Millis(60'000);
    o.shards = 4;
    return o;
  }

  void Send(const std::string& id, int64_t delay_ms, int32_t priority = 0,
            const std::string& topic = "t") {
    core::NewMessage m{topic, id, "payload of " + id, Millis(delay_ms), Millis(86'400'000), 3};
    m.priority = priority;
    Result<core::Message> r = b_.Send(std::move(m));
    ASSERT_TRUE(r.has_value()) << r.error().ToString();
  }
  V Pull(int32_t n, int64_t ack_ms = 30'000) {
    Result<std::vector<core::Message>> r = b_.Pull("t", n, Millis(ack_ms));
    EXPECT_TRUE(r.has_value());
    V ids;
    if (r.has_value()) {
      for (const core::Message& m : *r) ids.push_back(m.record.msg_id);
    }
    return ids;
  }
  ListPage Page(std::optional<MsgStatus> status, int32_t limit, const std::string& cursor = "",
                const std::string& topic = "t") {
    Result<ListPage> r = b_.ListMsg(ListRequest{topic, status, limit, cursor});
    EXPECT_TRUE(r.has_value()) << r.error().ToString();
    return r.has_value() ? *r : ListPage{};
  }
  static V Ids(const ListPage& p) {
    V out;
    for (const core::Message& m : p.messages) out.push_back(m.record.msg_id);
    return out;
  }
  // Every page of a walk; `between` runs before each page after the first.
  std::vector<ListPage> Walk(std::optional<MsgStatus> status, int32_t limit,
                             const std::function<void(int)>& between = nullptr) {
    std::vector<ListPage> pages;
    std::string cursor;
    for (int i = 0; i < 10'000; ++i) {
      if (i > 0 && between) between(i);
      pages.push_back(Page(status, limit, cursor));
      cursor = pages.back().next_cursor;
      if (cursor.empty()) break;
    }
    return pages;
  }
  static V AllIds(const std::vector<ListPage>& pages) {
    V out;
    for (const ListPage& p : pages) {
      V ids = Ids(p);
      out.insert(out.end(), ids.begin(), ids.end());
    }
    return out;
  }

  base::ManualClock clock_;
  base::ManualScheduler sched_;
  CountingKv kv_;
  storage::MessageStore store_;
  std::unique_ptr<Engine> engine_;
  testutil::SyncBackend b_;
};

TEST_F(EngineListTest, WaitingMessagesPageByTriggerTimeThenSendOrder) {
  // 25 waiting messages: triggers in reverse send order, pairs with equal triggers.
  V want;
  for (int i = 24; i >= 0; --i) Send("w" + std::to_string(i), 1'000 + (i / 2) * 10);
  for (int i = 0; i < 25; i += 2) {
    if (i + 1 < 25) want.push_back("w" + std::to_string(i + 1));  // sent first: lower seq
    want.push_back("w" + std::to_string(i));
  }
  Send("ready", 0);
  std::vector<ListPage> pages = Walk(MsgStatus::kWaiting, 10);
  ASSERT_EQ(pages.size(), 3u);
  EXPECT_EQ(pages[0].messages.size(), 10u);
  EXPECT_EQ(pages[2].messages.size(), 5u);
  EXPECT_EQ(pages[2].next_cursor, "");
  EXPECT_EQ(AllIds(pages), want);
  const core::Message& first = pages[0].messages[0];
  EXPECT_EQ(first.status, MsgStatus::kWaiting);
  EXPECT_EQ(first.record.payload, "payload of " + first.record.msg_id);
  EXPECT_EQ(first.record.topic, "t");
  for (char c : pages[0].next_cursor) EXPECT_TRUE(c > 0x20 && c < 0x7f) << pages[0].next_cursor;
}

TEST_F(EngineListTest, FarWaitingMessagesAreListedFromTheStore) {
  Send("near", 1'000);
  Send("far-2", 7'200'000);
  Send("far-1", 3'600'000);
  ASSERT_GT(engine_->TEST_Tiers("t").far, 0);
  EXPECT_EQ(Ids(Page(MsgStatus::kWaiting, 100)), (V{"near", "far-1", "far-2"}));
}

TEST_F(EngineListTest, ReadyIsAPeekInPullOrder) {
  Send("p0-old", 0, 0);
  clock_.Advance(Millis(5));
  Send("p5", 0, 5);
  Send("p0-new", 0, 0);
  Send("p9", 0, 9);
  Send("p5-later", 0, 5);
  Send("not-yet", 10'000, 9);
  ListPage peek = Page(MsgStatus::kReady, 100);
  const V order{"p9", "p5", "p5-later", "p0-old", "p0-new"};
  EXPECT_EQ(Ids(peek), order);
  for (const core::Message& m : peek.messages) EXPECT_EQ(m.status, MsgStatus::kReady);
  // A peek delivers nothing: the pulls that follow take the same messages in the same order.
  V paged = AllIds(Walk(MsgStatus::kReady, 2));
  EXPECT_EQ(paged, order);
  EXPECT_EQ(Pull(5), order);
}

TEST_F(EngineListTest, AnAckTimeoutMakesADeliveryReadyAtItsDeadline) {
  Send("a", 0);
  Send("b", 0);
  ASSERT_EQ(Pull(1, 1'000), V{"a"});
  clock_.Advance(Millis(1'500));
  Send("c", 0);  // visible at kT0 + 1500, after a's deadline (kT0 + 1000)
  EXPECT_EQ(Ids(Page(MsgStatus::kReady, 100)), (V{"b", "a", "c"}));
  EXPECT_TRUE(Page(MsgStatus::kConsuming, 100).messages.empty());
}

TEST_F(EngineListTest, ConsumingMessagesByAckDeadline) {
  for (const char* id : {"a", "b", "c", "d"}) Send(id, 0);
  ASSERT_EQ(Pull(1, 50'000), V{"a"});
  ASSERT_EQ(Pull(2, 10'000), (V{"b", "c"}));
  ASSERT_EQ(Pull(1, 20'000), V{"d"});
  std::vector<ListPage> pages = Walk(MsgStatus::kConsuming, 3);
  EXPECT_EQ(AllIds(pages), (V{"b", "c", "d", "a"}));
  EXPECT_EQ(pages[0].messages[0].status, MsgStatus::kConsuming);
  EXPECT_EQ(pages[0].messages[0].record.visible_at, kT0 + Millis(10'000));
}

TEST_F(EngineListTest, WithoutStatusTheWalkGoesWaitingReadyConsuming) {
  Send("c1", 0);
  Send("c2", 0);
  ASSERT_EQ(Pull(2), (V{"c1", "c2"}));
  Send("w2", 2'000);
  Send("w1", 1'000);
  Send("r1", 0);
  Send("r2", 0, 3);
  const V all{"w1", "w2", "r2", "r1", "c1", "c2"};
  for (int32_t limit : {1, 2, 3, 4, 100}) {
    std::vector<ListPage> pages = Walk(std::nullopt, limit);
    EXPECT_EQ(AllIds(pages), all) << "limit " << limit;
    EXPECT_EQ(pages.size(), (all.size() + limit - 1) / limit) << "limit " << limit;
    for (size_t i = 0; i + 1 < pages.size(); ++i) {
      EXPECT_EQ(pages[i].messages.size(), static_cast<size_t>(limit)) << "limit " << limit;
    }
  }
  std::vector<ListPage> pages = Walk(std::nullopt, 100);
  std::vector<MsgStatus> statuses;
  for (const core::Message& m : pages[0].messages) statuses.push_back(m.status);
  EXPECT_EQ(statuses, (std::vector<MsgStatus>{MsgStatus::kWaiting, MsgStatus::kWaiting,
                                              MsgStatus::kReady, MsgStatus::kReady,
                                              MsgStatus::kConsuming, MsgStatus::kConsuming}));
}

TEST_F(EngineListTest, EmptyAndUnknownTopicsHaveOneEmptyPage) {
  EXPECT_TRUE(Page(std::nullopt, 10, "", "nobody").messages.empty());
  EXPECT_EQ(Page(std::nullopt, 10, "", "nobody").next_cursor, "");
  Send("r", 0);
  ListPage w = Page(MsgStatus::kWaiting, 10);
  EXPECT_TRUE(w.messages.empty());
  EXPECT_EQ(w.next_cursor, "");
}

// Sends, pulls, acks and deletes between pages: no message is listed twice, and every message
// that stayed in the listed status from the first page to the last is listed.
TEST_F(EngineListTest, CursorsStayValidWhileMessagesComeAndGo) {
  for (int i = 0; i < 60; ++i) Send("w" + std::to_string(i), 10'000 + i * 100);
  for (int i = 0; i < 40; ++i) Send("r" + std::to_string(i), 0, i % 3);
  std::set<std::string> touched;
  int next_id = 0;
  auto churn = [&](int page) {
    // A new waiting message before the cursor and one after it; a delete; a pull and an ack.
    Send("new-early-" + std::to_string(next_id), 10'000 + page * 100 - 50);
    Send("new-late-" + std::to_string(next_id), 10'000 + 6'000 + page);
    ++next_id;
    std::string victim = "w" + std::to_string(59 - page);
    if (b_.Delete("t", victim).ok()) touched.insert(victim);
    V pulled = Pull(1);
    for (const std::string& id : pulled) {
      touched.insert(id);
      EXPECT_TRUE(b_.Ack("t", id).ok());
    }
  };
  for (std::optional<MsgStatus> status :
       {std::optional<MsgStatus>(MsgStatus::kWaiting), std::optional<MsgStatus>(MsgStatus::kReady),
        std::optional<MsgStatus>()}) {
    std::set<std::string> stayed;  // in status 1 or 2 at the start, and never touched
    for (int i = 0; i < 60; ++i) stayed.insert("w" + std::to_string(i));
    for (int i = 0; i < 40; ++i) stayed.insert("r" + std::to_string(i));
    V listed = AllIds(Walk(status, 7, churn));
    std::set<std::string> once(listed.begin(), listed.end());
    EXPECT_EQ(once.size(), listed.size()) << "a message was listed twice";
    for (const std::string& id : stayed) {
      if (touched.count(id) != 0) continue;
      const bool waiting = id[0] == 'w';
      if (status && (*status == MsgStatus::kWaiting) != waiting) continue;
      // Sent at the start and still there: listed. (Readies pulled by the churn are touched.)
      if (b_.Get("t", id).has_value()) {
        EXPECT_EQ(once.count(id), 1u) << id;
      }
    }
  }
}

TEST_F(EngineListTest, EndedMessagesByEndTimeWhileRetained) {
  for (const char* id : {"a", "b", "c", "d", "e"}) Send(id, 0);
  ASSERT_EQ(Pull(5), (V{"a", "b", "c", "d", "e"}));
  ASSERT_TRUE(b_.Ack("t", "c").ok());
  clock_.Advance(Millis(1'000));
  ASSERT_TRUE(b_.Ack("t", "a").ok());
  ASSERT_TRUE(b_.Ack("t", "e").ok());
  ASSERT_TRUE(b_.Delete("t", "b").ok());
  Send("x", 0, 0, "other-topic");

  std::vector<ListPage> acked = Walk(MsgStatus::kConsumeOk, 2);
  EXPECT_EQ(AllIds(acked), (V{"c", "a", "e"}));
  EXPECT_EQ(acked[0].messages[0].status, MsgStatus::kConsumeOk);
  EXPECT_EQ(acked[0].messages[0].record.payload, "payload of c");
  EXPECT_EQ(Ids(Page(MsgStatus::kDelete, 10)), V{"b"});
  EXPECT_TRUE(Page(MsgStatus::kExpire, 10).messages.empty());

  // "c" leaves the list when its retention ends, even before the purge has run.
  clock_.Advance(kRetention - Millis(1'000));
  EXPECT_EQ(Ids(Page(MsgStatus::kConsumeOk, 10)), (V{"a", "e"}));
  // A new message with an ended message's id replaces it: gone from the ended list.
  Send("a", 60'000);
  EXPECT_EQ(Ids(Page(MsgStatus::kConsumeOk, 10)), V{"e"});
  EXPECT_EQ(Ids(Page(MsgStatus::kWaiting, 10)), V{"a"});
  // After the purge nothing of them is left in the index.
  sched_.Advance(Millis(2'000));
  engine_->TEST_Purge();
  EXPECT_TRUE(Page(MsgStatus::kConsumeOk, 10).messages.empty());
  size_t left = 0;
  for (auto it = kv_.Scan(storage::Cf::kEnded, "", ""); it->Valid(); it->Next()) ++left;
  EXPECT_EQ(left, 0u);
}

TEST_F(EngineListTest, MessagesThatEndByTimeAreListedWithTheirEndStatus) {
  core::NewMessage m{"t", "short", "p", Millis(0), Millis(1'000), 3};
  ASSERT_TRUE(b_.Send(std::move(m)).has_value());
  clock_.Advance(Millis(1'000));  // no timer has run: the listing finds it ended all the same
  EXPECT_TRUE(Page(MsgStatus::kReady, 10).messages.empty());
  ListPage expired = Page(MsgStatus::kExpire, 10);
  ASSERT_EQ(Ids(expired), V{"short"});
  EXPECT_EQ(expired.messages[0].status, MsgStatus::kExpire);
}

TEST_F(EngineListTest, ACursorOfAnotherListingIsRefused) {
  for (int i = 0; i < 5; ++i) Send("w" + std::to_string(i), 1'000);
  const std::string c = Page(MsgStatus::kWaiting, 2).next_cursor;
  ASSERT_FALSE(c.empty());
  auto refused = [&](std::optional<MsgStatus> status, const std::string& cursor,
                     const std::string& topic = "t") {
    Result<ListPage> r = b_.ListMsg(ListRequest{topic, status, 2, cursor});
    EXPECT_FALSE(r.has_value()) << cursor;
    if (r.has_value()) return std::string();
    EXPECT_EQ(r.error().code(), Errc::kInvalidArgument);
    EXPECT_EQ(r.error().message().rfind("cursor is not valid: ", 0), 0u) << r.error().message();
    return r.error().message();
  };
  refused(MsgStatus::kWaiting, "garbage");
  refused(MsgStatus::kReady, c);
  refused(std::nullopt, c);
  refused(MsgStatus::kWaiting, c, "other");
  std::string altered = c;
  altered[5] = altered[5] == '1' ? '2' : '1';
  refused(MsgStatus::kWaiting, altered);
  refused(MsgStatus::kWaiting, c + " ");
  EXPECT_EQ(Ids(Page(MsgStatus::kWaiting, 2, c)), (V{"w2", "w3"}));
}

TEST_F(EngineListTest, APageCostsWhatItListsWhateverTheBacklog) {
  auto cost = [&](std::optional<MsgStatus> status, const std::string& cursor) {
    const int64_t before = kv_.reads();
    ListPage p = Page(status, 10, cursor);
    EXPECT_EQ(p.messages.size(), 10u);
    return kv_.reads() - before;
  };
  for (int i = 0; i < 20; ++i) Send("small-" + std::to_string(i), 600'000 + i);
  const int64_t small_first = cost(MsgStatus::kWaiting, "");
  // 20,000 more waiting messages, near and far, and a cursor deep inside them.
  for (int i = 0; i < 20'000; ++i) Send("big-" + std::to_string(i), 1'000 + i * 10);
  ListCursor deep;
  deep.status = MsgStatus::kWaiting;
  deep.at_start = false;
  deep.t = kT0 + Millis(150'000);
  deep.seq = 0;
  const int64_t big_first = cost(MsgStatus::kWaiting, "");
  const int64_t big_deep = cost(MsgStatus::kWaiting, EncodeListCursor("t", deep));
  const int64_t big_walk = cost(std::nullopt, "");
  EXPECT_LE(big_first, small_first + 2);
  EXPECT_LE(big_deep, small_first + 2);
  EXPECT_LE(big_walk, small_first + 2);
  EXPECT_LE(small_first, 2 * 10 + 2);  // 11 entries stepped over, 10 payloads
}

// Deliveries waiting out their retry interval are listed as WAITING from memory: a page does not
// step over the deliveries still before their ack deadline (kind 1 entries of the store).
TEST_F(EngineListTest, WaitingDeliveriesAreListedWithoutReadingTheConsumingOnes) {
  core::TopicConfig c;
  c.retry_interval = Millis(10'000);
  ASSERT_TRUE(b_.SetTopicConfig("t", c).has_value());
  for (int i = 0; i < 3; ++i) Send("late-" + std::to_string(i), 0);
  ASSERT_EQ(Pull(3, 1'000).size(), 3u);  // deadline at 1,000, consumable again at 11,000
  for (int i = 0; i < 2'000; ++i) Send("busy-" + std::to_string(i), 0);
  ASSERT_EQ(Pull(2'000, 60'000).size(), 2'000u);
  for (int i = 0; i < 3; ++i) Send("w-" + std::to_string(i), 5'000 + i * 10'000);
  clock_.Advance(Millis(1'000));
  sched_.RunDue();
  const int64_t before = kv_.reads();
  ListPage p = Page(MsgStatus::kWaiting, 10);
  EXPECT_EQ(Ids(p), (V{"w-0", "late-0", "late-1", "late-2", "w-1", "w-2"}));
  EXPECT_LE(kv_.reads() - before, 2 * 6 + 2);  // the pending entries and the payloads
  EXPECT_EQ(Page(MsgStatus::kConsuming, 3).messages.size(), 3u);
  EXPECT_EQ(Ids(Page(MsgStatus::kConsuming, 1)), V{"busy-0"});
}

}  // namespace
}  // namespace chronoq::engine
