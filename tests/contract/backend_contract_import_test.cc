// Contract cases for issue 21's import (backend/queue_backend.h Import; docs/api-extensions.md
// "Export and import"): a message comes in with the full state it had, on every backend, is
// skipped when its msgId is in life, and behaves from then on as the original would have.
#include <future>

#include "tests/contract/backend_contract.h"

namespace chronoq::contract {
namespace {

using core::MessageRecord;
using core::MsgStatus;
using core::Phase;
using Ids = std::vector<std::string>;

constexpr int64_t kHour = 3'600'000;

// A record as an export would bring it: produced before the harness's start.
MessageRecord Exported(const std::string& topic, const std::string& id, TimePoint trigger,
                       TimePoint expire) {
  MessageRecord r;
  r.topic = topic;
  r.msg_id = id;
  r.payload = "p\"ayl\xc3\xa9oad \xe2\x9c\x93 {\"k\":[1,2]}\n\t";
  r.produce_time = trigger - Millis(10'000);
  r.trigger_time = trigger;
  r.expire_time = expire;
  r.max_retry = 4;
  r.visible_at = trigger;
  return r;
}

Result<std::vector<bool>> ImportAll(backend::QueueBackend* b, std::vector<MessageRecord> recs) {
  std::promise<Result<std::vector<bool>>> p;
  auto f = p.get_future();
  b->Import(std::move(recs), [&p](Result<std::vector<bool>> r) { p.set_value(std::move(r)); });
  return f.get();
}

// The fields an import keeps (seq is the backend's own).
void ExpectSameState(const MessageRecord& got, const MessageRecord& want,
                     const std::string& where) {
  EXPECT_EQ(got.payload, want.payload) << where;
  EXPECT_EQ(got.produce_time, want.produce_time) << where;
  EXPECT_EQ(got.trigger_time, want.trigger_time) << where;
  EXPECT_EQ(got.expire_time, want.expire_time) << where;
  EXPECT_EQ(got.max_retry, want.max_retry) << where;
  EXPECT_EQ(got.priority, want.priority) << where;
  EXPECT_EQ(got.retry, want.retry) << where;
  EXPECT_EQ(got.count_trigger, want.count_trigger) << where;
  EXPECT_EQ(got.count, want.count) << where;
  EXPECT_EQ(got.last_error, want.last_error) << where;
  EXPECT_EQ(got.phase, want.phase) << where;
  EXPECT_EQ(got.visible_at, want.visible_at) << where;
  EXPECT_EQ(got.retry_interval, want.retry_interval) << where;
  EXPECT_EQ(got.dead_letter, want.dead_letter) << where;
}

}  // namespace

TEST_P(BackendContractTest, ImportKeepsTheStateOfEachStatus) {
  MessageRecord waiting = Exported("t", "w", At(60'000), At(kHour));
  waiting.priority = 7;
  waiting.count_trigger = 5;
  waiting.count = 2;
  waiting.last_error = "printer offline";
  waiting.retry = 1;  // nacked once, then updated to a later trigger time
  MessageRecord ready = Exported("t", "r", At(-5'000), At(kHour));
  ready.priority = 3;
  MessageRecord consuming = Exported("t", "c", At(-20'000), At(kHour));
  consuming.phase = Phase::kDelivered;
  consuming.retry = 2;
  consuming.visible_at = At(5'000);  // ack deadline, no retry interval
  MessageRecord far = Exported("t", "far", At(30 * kHour), At(40 * kHour));
  MessageRecord dead = Exported("dlq", "d", At(-1'000), At(kHour));
  dead.dead_letter = core::DeadLetter{"t", MsgStatus::kRetryExhaust, 5, At(-1'000)};

  Result<std::vector<bool>> r = ImportAll(h_->backend(), {waiting, ready, consuming, far});
  ASSERT_TRUE(r.has_value()) << r.error().ToString();
  EXPECT_EQ(*r, (std::vector<bool>{true, true, true, true}));
  r = ImportAll(h_->backend(), {dead});
  ASSERT_TRUE(r.has_value()) << r.error().ToString();
  h_->Settle();

  for (int round = 0; round < 2; ++round) {
    const std::string where = round == 0 ? "imported" : "after a restart";
    ExpectSameState(Get("t", "w").record, waiting, where);
    EXPECT_EQ(StatusOf("t", "w"), MsgStatus::kWaiting) << where;
    ExpectSameState(Get("t", "r").record, ready, where);
    EXPECT_EQ(StatusOf("t", "r"), MsgStatus::kReady) << where;
    ExpectSameState(Get("t", "c").record, consuming, where);
    EXPECT_EQ(StatusOf("t", "c"), MsgStatus::kConsuming) << where;
    ExpectSameState(Get("t", "far").record, far, where);
    ExpectSameState(Get("dlq", "d").record, dead, where);
    core::TopicInfo info = Info("t");
    EXPECT_EQ(info.waiting, 2) << where;
    EXPECT_EQ(info.ready, 1) << where;
    EXPECT_EQ(info.consuming, 1) << where;
    if (!Restart()) break;
  }
  // The ready one is delivered now; the consuming one comes back at its ack deadline.
  EXPECT_EQ(PullIds("t", 10), Ids{"r"});
  AdvanceTo(At(4'999));
  EXPECT_TRUE(PullIds("t", 10).empty());
  Advance(1);
  std::vector<core::Message> again = Pull("t", 10);
  ASSERT_EQ(again.size(), 1u);
  EXPECT_EQ(again[0].record.msg_id, "c");
  EXPECT_EQ(again[0].record.retry, 3);
  EXPECT_EQ(again[0].record.payload, consuming.payload);
  // The waiting one triggers at its trigger time; its count trigger still works.
  ASSERT_TRUE(b_->Count("t", "w", 3).has_value());
  EXPECT_EQ(PullIds("t", 10), Ids{"w"});
  EXPECT_EQ(PullIds("dlq", 10), Ids{"d"});
}

TEST_P(BackendContractTest, ImportSkipsAMsgIdInLifeAndChangesNothing) {
  Send("t", "a", 0);
  ASSERT_EQ(PullIds("t"), Ids{"a"});
  core::Message before = Get("t", "a");
  MessageRecord other = Exported("t", "a", At(60'000), At(kHour));
  MessageRecord fresh = Exported("t", "b", At(60'000), At(kHour));
  Result<std::vector<bool>> r = ImportAll(h_->backend(), {other, fresh});
  ASSERT_TRUE(r.has_value()) << r.error().ToString();
  EXPECT_EQ(*r, (std::vector<bool>{false, true}));
  core::Message after = Get("t", "a");
  EXPECT_EQ(after.record, before.record);
  EXPECT_EQ(after.status, MsgStatus::kConsuming);
  // Twice: nothing changes.
  r = ImportAll(h_->backend(), {other, fresh});
  ASSERT_TRUE(r.has_value());
  EXPECT_EQ(*r, (std::vector<bool>{false, false}));
  ExpectSameState(Get("t", "b").record, fresh, "imported once");
  EXPECT_EQ(Info("t").waiting, 1);
}

TEST_P(BackendContractTest, ImportReplacesAnEndedMessageAndIgnoresCapacity) {
  core::TopicConfig cap;
  cap.capacity = 1;
  SetConfig("t", cap);
  Send("t", "a", 0);
  ASSERT_EQ(PullIds("t"), Ids{"a"});
  ASSERT_TRUE(b_->Ack("t", "a").ok());
  Send("t", "full", 60'000);
  MessageRecord a = Exported("t", "a", At(1'000), At(kHour));
  a.priority = 2;
  Result<std::vector<bool>> r = ImportAll(h_->backend(), {a});
  ASSERT_TRUE(r.has_value()) << r.error().ToString();
  EXPECT_EQ(*r, std::vector<bool>{true});
  ExpectSameState(Get("t", "a").record, a, "replaced");
  EXPECT_EQ(StatusOf("t", "a"), MsgStatus::kWaiting);
  Advance(1'000);
  EXPECT_EQ(PullIds("t"), Ids{"a"});
}

TEST_P(BackendContractTest, ImportedDeliveryWaitsOutItsRetryInterval) {
  MessageRecord c = Exported("t", "c", At(-20'000), At(kHour));
  c.phase = Phase::kDelivered;
  c.retry = 1;
  c.retry_interval = Millis(2'000);
  c.visible_at = At(1'000) + c.retry_interval;  // ack deadline At(1'000)
  ASSERT_TRUE(ImportAll(h_->backend(), {c}).has_value());
  h_->Settle();
  EXPECT_EQ(StatusOf("t", "c"), MsgStatus::kConsuming);
  AdvanceTo(At(1'000));
  EXPECT_EQ(StatusOf("t", "c"), MsgStatus::kWaiting);  // in its retry interval
  EXPECT_TRUE(PullIds("t").empty());
  AdvanceTo(At(3'000));
  EXPECT_EQ(PullIds("t"), Ids{"c"});
}

}  // namespace chronoq::contract
