#include "storage/message_store.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include "core/state_machine.h"
#include "storage/memory/mem_kv.h"

namespace chronoq::storage {
namespace {

using core::MessageRecord;
using core::Phase;

const TimePoint kT0 = FromEpochMs(1'700'000'000'000);

MessageRecord Rec(const std::string& topic, const std::string& id, int64_t delay_ms, uint64_t seq) {
  return core::CreateRecord(
      core::NewMessage{topic, id, "payload-" + id, Millis(delay_ms), Millis(3'600'000), 3}, kT0,
      seq);
}

// The record of a message acked at kT0 + at_ms.
MessageRecord Acked(const std::string& topic, const std::string& id, int64_t at_ms, uint64_t seq) {
  MessageRecord r = Rec(topic, id, 0, seq);
  r.phase = Phase::kEnded;
  r.end_status = core::MsgStatus::kConsumeOk;
  r.ended_at = kT0 + Millis(at_ms);
  return r;
}

class MessageStoreTest : public ::testing::Test {
 protected:
  void Commit(MessageStore::Batch b) {
    std::optional<Status> s = store_.Commit(std::move(b), [](Status) {});
    ASSERT_TRUE(s.has_value() && s->ok());
  }
  // Stores a fresh message as the engine does: record, payload, visibility, histogram.
  void Put(const MessageRecord& r) {
    MessageStore::Batch b = store_.NewBatch();
    b.PutRecord(r);
    b.PutPayload(r);
    b.MoveVis(nullptr, &r);
    b.HistAdd(r.topic, r.trigger_time, 1);
    Commit(std::move(b));
  }
  std::vector<std::string> Vis(MessageStore& s, const std::string& topic, VisKind kind,
                               TimePoint from = kTimeMin, uint64_t from_seq = 0,
                               TimePoint to = kTimeMax) {
    std::vector<std::string> ids;
    Status st = s.ScanVis(topic, kind, from, from_seq, to, [&](MessageRecord&& r) {
      EXPECT_EQ(r.topic, topic);
      ids.push_back(r.msg_id);
      return true;
    });
    EXPECT_TRUE(st.ok()) << st.ToString();
    return ids;
  }
  std::vector<std::pair<int64_t, int64_t>> Hist(const std::string& topic) {
    std::vector<std::pair<int64_t, int64_t>> out;
    EXPECT_TRUE(store_
                    .ScanHist(topic, [&](TimePoint t,
                                         int64_t n) { out.emplace_back((t - kT0).count(), n); })
                    .ok());
    return out;
  }
  std::vector<std::string> Topics(MessageStore& s) {
    std::vector<std::string> out;
    EXPECT_TRUE(s.ListTopics([&](const std::string& t) { out.push_back(t); }).ok());
    return out;
  }

  MemKv kv_;
  MessageStore store_{&kv_, "ns"};
};

TEST_F(MessageStoreTest, RecordAndPayloadRoundTrip) {
  MessageRecord r = Rec("t", "a", 1'000, 1);
  Put(r);
  auto got = store_.GetRecord("t", "a", /*with_payload=*/true);
  ASSERT_TRUE(got.has_value() && got->has_value());
  EXPECT_EQ(**got, r);
  auto meta_only = store_.GetRecord("t", "a", false);
  ASSERT_TRUE(meta_only.has_value() && meta_only->has_value());
  EXPECT_EQ((*meta_only)->payload, "");
  EXPECT_EQ((*meta_only)->seq, 1u);
  EXPECT_EQ(*store_.GetPayload("t", "a"), std::optional<std::string>("payload-a"));
  EXPECT_EQ(*store_.GetRecord("t", "b", true), std::nullopt);
  EXPECT_EQ(*store_.GetRecord("u", "a", true), std::nullopt);

  MessageStore::Batch b = store_.NewBatch();
  b.DeleteRecord("t", "a");
  Commit(std::move(b));
  EXPECT_EQ(*store_.GetRecord("t", "a", true), std::nullopt);
  EXPECT_EQ(*store_.GetPayload("t", "a"), std::nullopt);
}

// Format 4: a send is one `sent` value (metadata and payload); a change writes the metadata alone
// to `records`, which then wins, and the payload stays where the send put it. Messages of older
// stores (records + payloads) read as before, and a new payload for them goes to `sent`.
TEST_F(MessageStoreTest, ASendIsOneValueAndChangesNeverRewriteThePayload) {
  MessageRecord r = Rec("t", "a", 1'000, 1);
  MessageStore::Batch send = store_.NewBatch();
  send.PutNew(r);
  const KvBatch written = send.Take();
  ASSERT_EQ(written.size(), 2u);  // sent + vis
  EXPECT_EQ(written.ops()[1].cf, Cf::kSent);
  ASSERT_TRUE(kv_.Commit(written, [](Status) {})->ok());
  EXPECT_EQ(*kv_.Get(Cf::kRecords, RecordKey("ns", "t", "a")), std::nullopt);
  EXPECT_EQ(Vis(store_, "t", VisKind::kPending), std::vector<std::string>{"a"});
  auto got = store_.GetRecord("t", "a", /*with_payload=*/true);
  ASSERT_TRUE(got.has_value() && got->has_value());
  EXPECT_EQ(**got, r);
  EXPECT_EQ((*store_.GetRecord("t", "a", false))->payload, "");

  MessageRecord delivered = r;
  delivered.phase = Phase::kDelivered;
  delivered.retry = 1;
  delivered.visible_at = kT0 + Millis(30'000);
  delivered.payload.clear();  // the engine holds records without payloads
  MessageStore::Batch change = store_.NewBatch();
  change.PutRecordMoveVis(&r, delivered);
  const KvBatch changed = change.Take();
  // A delivery moves the vis entry alone: the delivered metadata is the kind-1 vis value, and
  // `records` keeps the state before the delivery.
  for (const KvBatch::Op& op : changed.ops()) EXPECT_EQ(op.cf, Cf::kVis);
  ASSERT_TRUE(kv_.Commit(changed, [](Status) {})->ok());
  got = store_.GetRecord("t", "a", true);
  ASSERT_TRUE(got.has_value() && got->has_value());
  EXPECT_EQ((*got)->retry, 0);
  EXPECT_EQ((*got)->phase, Phase::kPending);
  EXPECT_EQ((*got)->payload, "payload-a");
  EXPECT_EQ(Vis(store_, "t", VisKind::kDelivered), std::vector<std::string>{"a"});
  std::vector<MessageRecord> in_vis;
  ASSERT_TRUE(store_
                  .ScanVis("t", VisKind::kDelivered, kTimeMin, 0, kTimeMax,
                           [&](MessageRecord&& v) {
                             in_vis.push_back(std::move(v));
                             return true;
                           })
                  .ok());
  ASSERT_EQ(in_vis.size(), 1u);
  EXPECT_EQ(in_vis[0].retry, 1);
  EXPECT_EQ(in_vis[0].phase, Phase::kDelivered);
  // The next change of a delivered message (here a nack) writes `records` again.
  MessageRecord nacked = delivered;
  nacked.phase = Phase::kPending;
  nacked.visible_at = kT0 + Millis(40'000);
  change = store_.NewBatch();
  change.PutRecordMoveVis(&delivered, nacked);
  Commit(std::move(change));
  got = store_.GetRecord("t", "a", false);
  ASSERT_TRUE(got.has_value() && got->has_value());
  EXPECT_EQ((*got)->retry, 1);
  EXPECT_EQ((*got)->phase, Phase::kPending);
  change = store_.NewBatch();
  change.PutRecordMoveVis(&nacked, delivered);
  Commit(std::move(change));

  // A message of an older store: records and payloads.
  MessageRecord old = Rec("t", "old", 2'000, 2);
  MessageStore::Batch b = store_.NewBatch();
  b.PutRecord(old);
  Commit(std::move(b));
  KvBatch raw;
  raw.Put(Cf::kPayloads, RecordKey("ns", "t", "old"), "old payload");
  ASSERT_TRUE(kv_.Commit(std::move(raw), [](Status) {})->ok());
  EXPECT_EQ(*store_.GetPayload("t", "old"), std::optional<std::string>("old payload"));
  auto payloads = store_.GetPayloads("t", {"old", "a", "none"});
  ASSERT_TRUE(payloads.has_value());
  EXPECT_EQ(*payloads,
            (std::vector<std::optional<std::string>>{"old payload", "payload-a", std::nullopt}));
  auto records = store_.GetRecords("t", {"a", "none", "old"});
  ASSERT_TRUE(records.has_value());
  ASSERT_TRUE((*records)[0] && (*records)[2]);
  EXPECT_FALSE((*records)[1]);
  EXPECT_EQ((*records)[0]->retry, 1);
  EXPECT_EQ((*records)[2]->seq, 2u);
  EXPECT_EQ((*records)[2]->msg_id, "old");
  // updateMsg with a new payload: it wins over the old store's.
  old.payload = "new payload";
  b = store_.NewBatch();
  b.PutRecord(old);
  b.PutPayload(old);
  Commit(std::move(b));
  EXPECT_EQ((*store_.GetRecord("t", "old", true))->payload, "new payload");

  // A new message taking an ended one's msgId: the old record meta goes.
  MessageRecord again = Rec("t", "a", 5'000, 3);
  b = store_.NewBatch();
  b.MoveVis(&delivered, nullptr);
  b.DeleteRecordMeta("t", "a");
  b.PutNew(again);
  Commit(std::move(b));
  got = store_.GetRecord("t", "a", true);
  ASSERT_TRUE(got.has_value() && got->has_value());
  EXPECT_EQ(**got, again);

  b = store_.NewBatch();
  b.DeleteRecord("t", "a");
  b.DeleteRecord("t", "old");
  Commit(std::move(b));
  EXPECT_EQ(*store_.GetRecord("t", "a", true), std::nullopt);
  EXPECT_EQ(*store_.GetPayload("t", "old"), std::nullopt);
}

TEST_F(MessageStoreTest, MoveVisFollowsTheLifecycle) {
  MessageRecord r = Rec("t", "a", 0, 1);
  Put(r);
  EXPECT_EQ(Vis(store_, "t", VisKind::kPending), std::vector<std::string>{"a"});
  EXPECT_TRUE(Vis(store_, "t", VisKind::kDelivered).empty());

  MessageRecord delivered =
      *core::Apply(r, core::Event{core::EventKind::kDeliver, Millis(5'000)}, kT0);
  MessageStore::Batch b = store_.NewBatch();
  b.MoveVis(&r, &delivered);
  Commit(std::move(b));
  EXPECT_TRUE(Vis(store_, "t", VisKind::kPending).empty());
  EXPECT_EQ(Vis(store_, "t", VisKind::kDelivered), std::vector<std::string>{"a"});
  // The visibility value carries the metadata: loading needs no second read.
  store_
      .ScanVis("t", VisKind::kDelivered, kTimeMin, 0, kTimeMax,
               [&](MessageRecord&& got) {
                 EXPECT_EQ(got, core::CopyWithoutPayload(delivered));
                 return true;
               })
      .ok();

  MessageRecord acked = *core::Apply(delivered, core::Event{core::EventKind::kAck}, kT0);
  MessageStore::Batch b2 = store_.NewBatch();
  b2.MoveVis(&delivered, &acked);  // ended: no visibility entry
  Commit(std::move(b2));
  EXPECT_TRUE(Vis(store_, "t", VisKind::kPending).empty());
  EXPECT_TRUE(Vis(store_, "t", VisKind::kDelivered).empty());
  EXPECT_TRUE(Topics(store_).empty());
}

TEST_F(MessageStoreTest, ScanVisBoundsAndOrder) {
  // Sent out of order; scanned by (visible_at, seq).
  Put(Rec("t", "c", 300, 3));
  Put(Rec("t", "a", 100, 1));
  Put(Rec("t", "b2", 200, 5));
  Put(Rec("t", "b1", 200, 4));
  Put(Rec("t", "neg", -50, 6));  // visible now
  Put(Rec("u", "x", 150, 2));    // another topic
  EXPECT_EQ(Vis(store_, "t", VisKind::kPending),
            (std::vector<std::string>{"neg", "a", "b1", "b2", "c"}));
  // [ (200, 5), 300 ): from the middle of a millisecond, exclusive upper time.
  EXPECT_EQ(Vis(store_, "t", VisKind::kPending, kT0 + Millis(200), 5, kT0 + Millis(300)),
            std::vector<std::string>{"b2"});
  EXPECT_EQ(Vis(store_, "t", VisKind::kPending, kT0 + Millis(200), 0, kT0 + Millis(301)),
            (std::vector<std::string>{"b1", "b2", "c"}));
  // Stops when the callback says so.
  int n = 0;
  ASSERT_TRUE(store_
                  .ScanVis("t", VisKind::kPending, kTimeMin, 0, kTimeMax,
                           [&](MessageRecord&&) { return ++n < 2; })
                  .ok());
  EXPECT_EQ(n, 2);
}

TEST_F(MessageStoreTest, HistAddCountsPerTriggerTime) {
  Put(Rec("t", "a", 100, 1));
  Put(Rec("t", "b", 100, 2));
  Put(Rec("t", "c", -1'000, 3));  // trigger time is now (delay <= 0)
  Put(Rec("u", "x", 100, 4));
  EXPECT_EQ(Hist("t"), (std::vector<std::pair<int64_t, int64_t>>{{0, 1}, {100, 2}}));
  MessageStore::Batch b = store_.NewBatch();
  b.HistAdd("t", kT0 + Millis(100), -2);
  b.HistAdd("t", kT0 + Millis(5), 0);  // no-op
  EXPECT_EQ(b.size(), 1u);
  Commit(std::move(b));
  EXPECT_EQ(Hist("t"), (std::vector<std::pair<int64_t, int64_t>>{{0, 1}}));
  EXPECT_EQ(Hist("u"), (std::vector<std::pair<int64_t, int64_t>>{{100, 1}}));
  EXPECT_TRUE(Hist("nobody").empty());
}

TEST_F(MessageStoreTest, HistAddsToOneCounterBecomeOneOperand) {
  Put(Rec("t", "a", 100, 1));
  MessageStore::Batch b = store_.NewBatch();
  b.PutMeta("x", "1");
  for (int i = 0; i < 50; ++i) {
    b.HistAdd("t", kT0 + Millis(200), 1);  // a batch of sends due in one millisecond
    b.HistAdd("u", kT0 + Millis(200), 1);
  }
  b.HistAdd("t", kT0 + Millis(100), -1);  // cancel out: no operand at all
  b.HistAdd("t", kT0 + Millis(100), 1);
  b.HistAdd("t", kT0 + Millis(300), 2);
  b.PutMeta("y", "2");
  KvBatch kv = b.Take();
  ASSERT_EQ(kv.size(), 5u);                          // two puts, three counters
  EXPECT_EQ(kv.ops()[0].kind, KvBatch::Kind::kPut);  // other operations keep their order
  EXPECT_EQ(kv.ops()[4].kind, KvBatch::Kind::kPut);
  std::optional<Status> s = store_.kv()->Commit(std::move(kv), [](Status) {});
  ASSERT_TRUE(s.has_value() && s->ok());
  EXPECT_EQ(Hist("t"), (std::vector<std::pair<int64_t, int64_t>>{{100, 1}, {200, 50}, {300, 2}}));
  EXPECT_EQ(Hist("u"), (std::vector<std::pair<int64_t, int64_t>>{{200, 50}}));
}

TEST_F(MessageStoreTest, RetentionScanWithCursor) {
  MessageStore::Batch b = store_.NewBatch();
  for (int i = 0; i < 10; ++i) {
    b.PutEnded(Acked("t", "m" + std::to_string(i), 0, 100 + i), kT0 + Millis(100 * i));
  }
  b.PutEnded(Acked("u", "same-time-lower-seq", 0, 99), kT0 + Millis(100));
  Commit(std::move(b));
  MessageStore other(&kv_, "other");  // another namespace sees none of it
  MessageStore::Batch ob = other.NewBatch();
  ob.PutEnded(Acked("t", "theirs", 0, 1), kT0);
  Commit(std::move(ob));

  auto scan = [&](const std::string& after, TimePoint until, size_t max, std::string* last_key) {
    std::vector<std::string> ids;
    EXPECT_TRUE(store_
                    .ScanRetention(after, until,
                                   [&](const RetentionEntry& e, const std::string& key) {
                                     ids.push_back(e.msg_id);
                                     *last_key = key;
                                     return ids.size() < max;
                                   })
                    .ok());
    return ids;
  };
  std::string last;
  // Up to and including `until`.
  EXPECT_EQ(scan("", kT0 + Millis(200), 100, &last),
            (std::vector<std::string>{"m0", "same-time-lower-seq", "m1", "m2"}));
  // In pages: resume after the last key seen.
  std::vector<std::string> paged;
  std::string cursor;
  for (;;) {
    std::string page_last;
    std::vector<std::string> page = scan(cursor, kTimeMax, 3, &page_last);
    if (page.empty()) break;
    paged.insert(paged.end(), page.begin(), page.end());
    cursor = page_last;
  }
  EXPECT_EQ(paged.size(), 11u);
  EXPECT_EQ(paged.front(), "m0");
  EXPECT_EQ(paged.back(), "m9");
  EXPECT_EQ(std::count(paged.begin(), paged.end(), "theirs"), 0);

  // Deleting entries removes them from later scans.
  MessageStore::Batch d = store_.NewBatch();
  d.DeleteEnded(Acked("t", "m0", 0, 100), kT0);
  d.DeleteRetentionEntry(kT0 + Millis(100), 99);
  Commit(std::move(d));
  EXPECT_EQ(scan("", kT0 + Millis(100), 100, &last), std::vector<std::string>{"m1"});
  // The other namespace still has its own.
  int theirs = 0;
  EXPECT_TRUE(other
                  .ScanRetention("", kTimeMax,
                                 [&](const RetentionEntry& e, const std::string&) {
                                   EXPECT_EQ(e.msg_id, "theirs");
                                   ++theirs;
                                   return true;
                                 })
                  .ok());
  EXPECT_EQ(theirs, 1);
}

TEST_F(MessageStoreTest, EndedMessagesAreListedPerTopicAndStatusByEndTime) {
  MessageStore::Batch b = store_.NewBatch();
  // Acked at 300, 100, 100 (seq 7 before seq 9), 200; one deleted; one of another topic and one
  // of a topic whose name extends "t".
  for (auto [id, at, seq] : {std::tuple<const char*, int64_t, uint64_t>{"a", 300, 5},
                             {"b", 100, 9},
                             {"c", 100, 7},
                             {"d", 200, 1}}) {
    b.PutEnded(Acked("t", id, at, seq), kT0 + Millis(at) + Millis(1000));
  }
  MessageRecord deleted = Acked("t", "x", 50, 2);
  deleted.end_status = core::MsgStatus::kDelete;
  b.PutEnded(deleted, kT0 + Millis(1050));
  b.PutEnded(Acked("u", "other-topic", 10, 3), kT0);
  b.PutEnded(Acked("tt", "longer-name", 10, 4), kT0);
  Commit(std::move(b));

  auto scan = [&](core::MsgStatus status, TimePoint from_t, uint64_t from_seq, size_t max) {
    std::vector<std::string> ids;
    EXPECT_TRUE(store_
                    .ScanEnded("t", status, from_t, from_seq,
                               [&](TimePoint, uint64_t, std::string id) {
                                 ids.push_back(std::move(id));
                                 return ids.size() < max;
                               })
                    .ok());
    return ids;
  };
  using V = std::vector<std::string>;
  EXPECT_EQ(scan(core::MsgStatus::kConsumeOk, kTimeMin, 0, 100), (V{"c", "b", "d", "a"}));
  EXPECT_EQ(scan(core::MsgStatus::kConsumeOk, kT0 + Millis(100), 8, 2), (V{"b", "d"}));
  EXPECT_EQ(scan(core::MsgStatus::kDelete, kTimeMin, 0, 100), V{"x"});
  EXPECT_TRUE(scan(core::MsgStatus::kExpire, kTimeMin, 0, 100).empty());

  // Deleting the ended entry takes both indexes' entries.
  MessageStore::Batch d = store_.NewBatch();
  d.DeleteEnded(Acked("t", "b", 100, 9), kT0 + Millis(1100));
  Commit(std::move(d));
  EXPECT_EQ(scan(core::MsgStatus::kConsumeOk, kTimeMin, 0, 100), (V{"c", "d", "a"}));
  std::vector<uint64_t> retained;
  ASSERT_TRUE(store_
                  .ScanRetention("", kTimeMax,
                                 [&](const RetentionEntry& e, const std::string&) {
                                   retained.push_back(e.seq);
                                   return true;
                                 })
                  .ok());
  EXPECT_EQ(std::count(retained.begin(), retained.end(), 9u), 0);
  EXPECT_EQ(retained.size(), 6u);
}

TEST_F(MessageStoreTest, BatchedReadsAnswerInTheOrderAsked) {
  Put(Rec("t", "m1", 0, 1));
  Put(Rec("t", "m2", 0, 2));
  Result<std::vector<std::optional<std::string>>> payloads =
      store_.GetPayloads("t", {"m2", "nope", "m1"});
  ASSERT_TRUE(payloads.has_value());
  EXPECT_EQ(*payloads,
            (std::vector<std::optional<std::string>>{"payload-m2", std::nullopt, "payload-m1"}));
  Result<std::vector<std::optional<MessageRecord>>> recs = store_.GetRecords("t", {"m1", "x"});
  ASSERT_TRUE(recs.has_value());
  ASSERT_EQ(recs->size(), 2u);
  ASSERT_TRUE((*recs)[0].has_value());
  EXPECT_EQ((*recs)[0]->seq, 1u);
  EXPECT_EQ((*recs)[0]->msg_id, "m1");
  EXPECT_EQ((*recs)[0]->topic, "t");
  EXPECT_FALSE((*recs)[1].has_value());
}

TEST_F(MessageStoreTest, ListTopicsSkipsAcrossManyTopics) {
  // 300 topics with several messages each, in both kinds, plus some whose names extend others'.
  std::set<std::string> want;
  uint64_t seq = 1;
  for (int i = 0; i < 300; ++i) {
    std::string topic = "topic-" + std::to_string(i);
    want.insert(topic);
    for (int j = 0; j < 5; ++j) Put(Rec(topic, "m" + std::to_string(j), j * 10, seq++));
    if (i % 7 == 0) {
      MessageRecord r = Rec(topic, "d", 0, seq++);
      MessageRecord d = *core::Apply(r, core::Event{core::EventKind::kDeliver, Millis(10)}, kT0);
      MessageStore::Batch b = store_.NewBatch();
      b.MoveVis(nullptr, &d);
      Commit(std::move(b));
    }
  }
  for (const std::string& t : {std::string(""), std::string("a"), std::string("a\xff"),
                               std::string(1, '\0'), std::string(200, 'z')}) {
    want.insert(t);
    Put(Rec(t, "x", 0, seq++));
  }
  // Another namespace, including one whose name extends "ns".
  MessageStore other(&kv_, "ns2");
  MessageStore::Batch ob = other.NewBatch();
  MessageRecord theirs = Rec("theirs", "x", 0, 1);
  ob.MoveVis(nullptr, &theirs);
  Commit(std::move(ob));
  MessageStore empty_ns(&kv_, "n");

  std::vector<std::string> got = Topics(store_);
  EXPECT_EQ(std::set<std::string>(got.begin(), got.end()), want);
  EXPECT_EQ(got.size(), want.size());  // each once
  EXPECT_EQ(Topics(other), std::vector<std::string>{"theirs"});
  EXPECT_TRUE(Topics(empty_ns).empty());
}

TEST_F(MessageStoreTest, MetaIsPerNamespace) {
  MessageStore::Batch b = store_.NewBatch();
  b.PutMeta("seq", "1000");
  Commit(std::move(b));
  EXPECT_EQ(*store_.GetMeta("seq"), std::optional<std::string>("1000"));
  MessageStore other(&kv_, "other");
  EXPECT_EQ(*other.GetMeta("seq"), std::nullopt);
  EXPECT_EQ(*store_.GetMeta("nope"), std::nullopt);
}

TEST_F(MessageStoreTest, CorruptVisEntryIsReported) {
  KvBatch raw;
  raw.Put(Cf::kVis, VisKey("ns", "t", VisKind::kPending, kT0, 1), "garbage");
  ASSERT_TRUE(kv_.Commit(std::move(raw), nullptr)->ok());
  Status s = store_.ScanVis("t", VisKind::kPending, kTimeMin, 0, kTimeMax,
                            [](MessageRecord&&) { return true; });
  EXPECT_EQ(s.code(), Errc::kCorruption);
  KvBatch raw2;
  raw2.Put(Cf::kRecords, RecordKey("ns", "t", "bad"), "x");
  ASSERT_TRUE(kv_.Commit(std::move(raw2), nullptr)->ok());
  EXPECT_EQ(store_.GetRecord("t", "bad", false).error().code(), Errc::kCorruption);
}

}  // namespace
}  // namespace chronoq::storage
