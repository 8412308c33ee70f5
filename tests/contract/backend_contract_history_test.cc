// Message history (issue 21, API-EXTENSIONS.md section 8, core/history.h): a topic with
// history=true records every change of its messages, durably, in order, bounded per message; a
// topic without it records nothing and getMsgHistory says why.
#include "tests/contract/backend_contract.h"

namespace chronoq::contract {
namespace {

using core::HistoryEntry;
using core::HistoryEvent;
using core::TopicConfig;

// The events of a history, by name, with the attempt: "delivered#1".
std::vector<std::string> Events(const std::vector<HistoryEntry>& h) {
  std::vector<std::string> out;
  for (const HistoryEntry& e : h) {
    out.push_back(std::string(core::HistoryEventName(e.event)) + "#" + std::to_string(e.attempt));
  }
  return out;
}

}  // namespace

void BackendContractTest::HistoryOn(const std::string& topic, TopicConfig c) {
  c.history = true;
  SetConfig(topic, c);
}

std::vector<HistoryEntry> BackendContractTest::History(const std::string& topic,
                                                       const std::string& id) {
  Result<std::vector<HistoryEntry>> h = b_->History(topic, id);
  EXPECT_TRUE(h.has_value()) << h.error().ToString();
  return h.has_value() ? *h : std::vector<HistoryEntry>{};
}

namespace {

TEST_P(BackendContractTest, HistoryOffIsRefusedWithASentenceAndUnknownMessagesAreNotFound) {
  Send("t", "a", 0);
  Result<std::vector<HistoryEntry>> h = b_->History("t", "a");
  ASSERT_FALSE(h.has_value());
  EXPECT_EQ(h.error().code(), Errc::kInvalidArgument);
  EXPECT_NE(h.error().message().find("topic 't' does not record message history"),
            std::string::npos)
      << h.error().message();
  HistoryOn("t");
  h = b_->History("t", "missing");
  ASSERT_FALSE(h.has_value());
  EXPECT_EQ(h.error().code(), Errc::kNotFound);
  // Sent while history was off: nothing recorded, from now on everything.
  EXPECT_TRUE(History("t", "a").empty());
  Pull("t");
  EXPECT_EQ(Events(History("t", "a")), (std::vector<std::string>{"delivered#1"}));
}

TEST_P(BackendContractTest, HistoryRecordsDeliveriesNacksTimeoutsAndTheAckInOrderDurably) {
  HistoryOn("t");
  Send("t", "a", 1'000);
  Advance(1'000);
  ASSERT_EQ(PullIds("t", 1, 30'000), std::vector<std::string>{"a"});
  const TimePoint delivered_at = Now();
  Advance(10);
  Result<std::vector<Status>> nack =
      b_->AckBatch("t", {backend::AckItem{.msg_id = "a", .ack = false, .reason = "db down"}});
  ASSERT_TRUE(nack.has_value() && (*nack)[0].ok());
  ASSERT_EQ(PullIds("t", 1, 30'000), std::vector<std::string>{"a"});
  const TimePoint second_deadline = Now() + Millis(30'000);
  Advance(40'000);  // the ack deadline passes unnoticed: recorded at the next delivery
  ASSERT_EQ(PullIds("t", 1, 30'000), std::vector<std::string>{"a"});
  ASSERT_TRUE(b_->Ack("t", "a", true).ok());

  std::vector<HistoryEntry> h = History("t", "a");
  EXPECT_EQ(Events(h), (std::vector<std::string>{"sent#0", "delivered#1", "nacked#1", "delivered#2",
                                                 "timedOut#2", "delivered#3", "acked#3"}));
  ASSERT_EQ(h.size(), 7u);
  EXPECT_EQ(h[0].time, Start());
  EXPECT_EQ(h[1].time, delivered_at);
  EXPECT_EQ(h[2].reason, "db down");
  EXPECT_EQ(h[4].time, second_deadline);
  for (const HistoryEntry& e : h) EXPECT_FALSE(e.node.empty());

  if (Restart()) {
    EXPECT_EQ(Events(History("t", "a")), Events(h));
  }
}

// An ack deadline that passes writes nothing; getMsgHistory shows the timeout as soon as it has
// passed (with the deadline's time), and the write that follows records the same entry: here a
// late ack, which is accepted and recorded after it.
TEST_P(BackendContractTest, HistoryShowsAPassedAckDeadlineAtOnceAndALateAckAfterIt) {
  HistoryOn("t");
  Send("t", "a", 0);
  ASSERT_EQ(PullIds("t", 1, 30'000), std::vector<std::string>{"a"});
  const TimePoint deadline = Now() + Millis(30'000);
  Advance(29'999);
  EXPECT_EQ(Events(History("t", "a")), (std::vector<std::string>{"sent#0", "delivered#1"}));
  Advance(5'000);
  std::vector<HistoryEntry> h = History("t", "a");
  ASSERT_EQ(Events(h), (std::vector<std::string>{"sent#0", "delivered#1", "timedOut#1"}));
  EXPECT_EQ(h[2].time, deadline);
  EXPECT_FALSE(h[2].node.empty());
  ASSERT_TRUE(b_->Ack("t", "a", true).ok());
  h = History("t", "a");
  ASSERT_EQ(Events(h),
            (std::vector<std::string>{"sent#0", "delivered#1", "timedOut#1", "acked#1"}));
  EXPECT_EQ(h[2].time, deadline);
  EXPECT_EQ(h[3].time, deadline + Millis(4'999));
}

TEST_P(BackendContractTest, HistoryRecordsUpdatesCountsTouchesAndDeletes) {
  HistoryOn("t");
  core::NewMessage m = NewMsg("t", "a", 60'000);
  m.count_trigger = 5;
  SendMsg(m);
  core::MessageUpdate u;
  u.priority = 3;
  ASSERT_TRUE(b_->Update("t", "a", u).has_value());
  ASSERT_TRUE(b_->Count("t", "a", 2).has_value());
  Send("t", "b", 0);
  Pull("t");  // b
  ASSERT_TRUE(b_->Touch("t", "b", Millis(90'000)).has_value());
  ASSERT_TRUE(b_->Delete("t", "a").ok());
  std::vector<HistoryEntry> a = History("t", "a");
  EXPECT_EQ(Events(a), (std::vector<std::string>{"sent#0", "updated#0", "counted#0", "deleted#0"}));
  ASSERT_EQ(a.size(), 4u);
  EXPECT_EQ(a[2].reason, "count 2");
  EXPECT_EQ(Events(History("t", "b")),
            (std::vector<std::string>{"sent#0", "delivered#1", "touched#1"}));

  // Released: the history goes with the record.
  ASSERT_TRUE(b_->Delete("t", "b", /*release=*/true).ok());
  Result<std::vector<HistoryEntry>> gone = b_->History("t", "b");
  ASSERT_FALSE(gone.has_value());
  EXPECT_EQ(gone.error().code(), Errc::kNotFound);
  // A new message under that msgId starts a new history.
  Send("t", "b", 0);
  EXPECT_EQ(Events(History("t", "b")), (std::vector<std::string>{"sent#0"}));
}

TEST_P(BackendContractTest, HistoryKeepsTheNewestEntriesUpToItsBound) {
  HistoryOn("t");
  core::NewMessage m = NewMsg("t", "a", 60'000);
  m.count_trigger = 1'000;
  SendMsg(m);
  for (int i = 0; i < 40; ++i) ASSERT_TRUE(b_->Count("t", "a", 1).has_value());
  std::vector<HistoryEntry> h = History("t", "a");
  ASSERT_EQ(h.size(), 32u) << "history-max-entries, default 32";
  EXPECT_EQ(h.front().event, HistoryEvent::kCounted) << "the oldest (sent) was dropped";
  EXPECT_EQ(h.front().reason, "count 9");
  EXPECT_EQ(h.back().reason, "count 40");
}

TEST_P(BackendContractTest, HistoryRecordsExpiryDeadLetterAndRedriveOnBothSides) {
  TopicConfig src;
  src.dead_letter_topic = "dlq";
  HistoryOn("t", src);
  HistoryOn("dlq");
  Send("t", "a", 0, /*ttl_ms=*/1'000);
  Advance(2'000);
  EXPECT_EQ(StatusOf("t", "a"), core::MsgStatus::kExpire);
  EXPECT_EQ(Events(History("t", "a")),
            (std::vector<std::string>{"sent#0", "expired#0", "deadLettered#0"}));
  EXPECT_EQ(History("t", "a").back().reason, "to dlq");
  std::vector<HistoryEntry> dead = History("dlq", "a");
  ASSERT_EQ(Events(dead), (std::vector<std::string>{"deadLettered#0"}));
  EXPECT_EQ(dead[0].reason, "from t");

  Result<int64_t> moved = b_->Redrive(backend::RedriveRequest{"dlq", "a", 1, Millis(0)});
  ASSERT_TRUE(moved.has_value()) << moved.error().ToString();
  EXPECT_EQ(Events(History("t", "a")),
            (std::vector<std::string>{"sent#0", "expired#0", "deadLettered#0", "redriven#0"}));
}

}  // namespace
}  // namespace chronoq::contract
