// Contract cases for listMsg (API-EXTENSIONS.md section 3; backend::ListRequest): the order of each
// status, the default walk (1, then 2, then 3), status 2 as a peek of the next pulls, paging and
// cursors (stable while messages are sent and consumed, invalid ones refused), ended messages
// only while retained. See backend_contract.h.
#include <map>
#include <random>
#include <set>

#include "tests/contract/backend_contract.h"

namespace chronoq::contract {
namespace {

using core::MsgStatus;
using Ids = std::vector<std::string>;

constexpr int64_t kHour = 3'600'000;

Ids IdsOf(const std::vector<core::Message>& ms) {
  Ids ids;
  for (const core::Message& m : ms) ids.push_back(m.record.msg_id);
  return ids;
}

Ids Concat(std::initializer_list<Ids> parts) {
  Ids out;
  for (const Ids& p : parts) out.insert(out.end(), p.begin(), p.end());
  return out;
}

bool PrintableAscii(const std::string& s) {
  for (char c : s) {
    if (c < 0x20 || c > 0x7e) return false;
  }
  return true;
}

TEST_P(BackendContractTest, ListOfUnknownOrEmptyTopicIsOneEmptyPage) {
  for (std::optional<MsgStatus> s : {std::optional<MsgStatus>(), std::optional(MsgStatus::kReady),
                                     std::optional(MsgStatus::kConsumeOk)}) {
    backend::ListPage p = ListPage("nosuchtopic", s, 10);
    EXPECT_TRUE(p.messages.empty());
    EXPECT_EQ(p.next_cursor, "");
  }
  Send("t", "a", 1'000);
  backend::ListPage p = ListPage("t", MsgStatus::kReady, 10);
  EXPECT_TRUE(p.messages.empty());
  EXPECT_EQ(p.next_cursor, "");
  EXPECT_TRUE(ListNames() == Ids{"t"});  // listing creates no topic
}

// One topic with messages in statuses 1, 2, 3 and 7, each listed in its order, with every page
// size; the default walk is 1, then 2, then 3.
TEST_P(BackendContractTest, ListOrdersEachStatusAndWalksOneTwoThree) {
  // Deleted ones, at different times: listed by end time.
  for (const std::string id : {"d1", "d2", "d3"}) Send("t", id, kHour);
  Advance(5);
  ASSERT_TRUE(b_->Delete("t", "d2").ok());
  Advance(5);
  ASSERT_TRUE(b_->Delete("t", "d3").ok());
  Advance(5);
  ASSERT_TRUE(b_->Delete("t", "d1").ok());
  // Consuming, with different ack deadlines: listed by deadline.
  for (const std::string id : {"c1", "c2", "c3"}) Send("t", id, 0);
  ASSERT_EQ(PullIds("t", 1, 30'000), Ids{"c1"});
  ASSERT_EQ(PullIds("t", 1, 10'000), Ids{"c2"});
  ASSERT_EQ(PullIds("t", 1, 20'000), Ids{"c3"});
  // Waiting, by trigger time then send order.
  Send("t", "w3", 3'000);
  Send("t", "w1", 1'000);
  Send("t", "w2a", 2'000);
  Send("t", "w2b", 2'000);
  // Ready, in pull order: priority first.
  SendMsg(NewMsg("t", "r0", 0, 0));
  SendMsg(NewMsg("t", "r9", 0, 9));
  SendMsg(NewMsg("t", "r0b", 0, 0));
  const Ids waiting = {"w1", "w2a", "w2b", "w3"};
  const Ids ready = {"r9", "r0", "r0b"};
  const Ids consuming = {"c2", "c3", "c1"};
  const Ids deleted = {"d2", "d3", "d1"};
  for (int32_t limit : {1, 2, 3, 1000}) {
    EXPECT_EQ(ListWalkIds("t", MsgStatus::kWaiting, limit), waiting) << limit;
    EXPECT_EQ(ListWalkIds("t", MsgStatus::kReady, limit), ready) << limit;
    EXPECT_EQ(ListWalkIds("t", MsgStatus::kConsuming, limit), consuming) << limit;
    EXPECT_EQ(ListWalkIds("t", MsgStatus::kDelete, limit), deleted) << limit;
    EXPECT_TRUE(ListWalkIds("t", MsgStatus::kConsumeOk, limit).empty()) << limit;
    EXPECT_EQ(ListWalkIds("t", std::nullopt, limit), Concat({waiting, ready, consuming})) << limit;
  }
  // Listing changed nothing.
  core::TopicInfo info = Info("t");
  EXPECT_EQ(info.waiting, 4);
  EXPECT_EQ(info.ready, 3);
  EXPECT_EQ(info.consuming, 3);
  EXPECT_EQ(Get("t", "r9").record.retry, 0);
}

TEST_P(BackendContractTest, ListedMessagesCarryPayloadAndStatusNow) {
  Send("t", "w", 1'000, kHour, 10, "waiting body");
  Send("t", "r", 0, kHour, 10, std::string("ready\0body", 10));
  Send("t", "c", 0, kHour, 10, "consuming body");
  ASSERT_EQ(PullIds("t", 1), Ids{"r"});  // r is consuming now; send order
  std::vector<core::Message> all = ListWalk("t", std::nullopt, 100);
  ASSERT_EQ(IdsOf(all), (Ids{"w", "c", "r"}));
  for (const core::Message& m : all) {
    core::Message got = Get("t", m.record.msg_id);
    EXPECT_EQ(m.record, got.record) << m.record.msg_id;
    EXPECT_EQ(m.status, got.status) << m.record.msg_id;
  }
  EXPECT_EQ(all[0].status, MsgStatus::kWaiting);
  EXPECT_EQ(all[1].status, MsgStatus::kReady);
  EXPECT_EQ(all[2].status, MsgStatus::kConsuming);
  EXPECT_EQ(all[2].record.payload, std::string("ready\0body", 10));
}

// What time did is listed before any timer ran: a passed trigger time is READY, a passed ack
// deadline is READY, a passed ttl is ended.
TEST_P(BackendContractTest, ListIsTrueBeforeTimersRun) {
  Send("t", "w", 1'000);
  Send("t", "c", 0);
  Send("t", "gone", 0, 500);
  Send("t", "stays", 5'000);
  ASSERT_EQ(PullIds("t", 1, 1'000), Ids{"c"});
  AdvanceClockOnly(1'000);
  EXPECT_EQ(ListWalkIds("t", MsgStatus::kWaiting), Ids{"stays"});
  EXPECT_EQ(ListWalkIds("t", MsgStatus::kReady), (Ids{"w", "c"}));  // consumable at 1,000 both
  EXPECT_TRUE(ListWalkIds("t", MsgStatus::kConsuming).empty());
  EXPECT_EQ(ListWalkIds("t", std::nullopt), (Ids{"stays", "w", "c"}));
  for (const core::Message& m : ListWalk("t", std::nullopt, 10)) {
    EXPECT_NE(m.record.msg_id, "gone");
  }
}

// A delivery whose ack deadline passed waits out the topic's retry interval as status 1: listed
// with the WAITING messages (by the time it becomes consumable, merged with the trigger times of
// the others), no longer with the CONSUMING ones; a nacked one likewise.
TEST_P(BackendContractTest, ListWaitingHasDeliveriesWaitingOutTheirRetryInterval) {
  core::TopicConfig c;
  c.retry_interval = Millis(2'000);
  SetConfig("t", c);
  for (const std::string id : {"a", "b", "n"}) Send("t", id, 0);
  Send("t", "w1", 1'500);
  Send("t", "w2", 2'500);
  Send("t", "w3", 10'000);
  ASSERT_EQ(PullIds("t", 1, 1'000), Ids{"a"});  // deadline 1,000, consumable again at 3,000
  ASSERT_EQ(PullIds("t", 1, 5'000), Ids{"b"});  // deadline 5,000
  ASSERT_EQ(PullIds("t", 1, 1'000), Ids{"n"});
  ASSERT_TRUE(b_->Ack("t", "n", false).ok());  // nacked at 0: consumable again at 2,000
  EXPECT_EQ(ListWalkIds("t", MsgStatus::kWaiting), (Ids{"w1", "n", "w2", "w3"}));
  EXPECT_EQ(ListWalkIds("t", MsgStatus::kConsuming), (Ids{"a", "b"}));

  AdvanceClockOnly(1'000);  // a's deadline, before any timer ran
  const Ids waiting = {"w1", "n", "w2", "a", "w3"};
  EXPECT_EQ(StatusOf("t", "a"), MsgStatus::kWaiting);
  EXPECT_EQ(ListWalkIds("t", MsgStatus::kWaiting), waiting);
  EXPECT_EQ(ListWalkIds("t", MsgStatus::kConsuming), Ids{"b"});
  Advance(0);
  for (int32_t limit : {1, 2, 3, 4, 5, 6, 100}) {
    EXPECT_EQ(ListWalkIds("t", MsgStatus::kWaiting, limit), waiting) << limit;
    EXPECT_EQ(ListWalkIds("t", std::nullopt, limit), Concat({waiting, Ids{"b"}})) << limit;
  }
  for (const core::Message& m : ListWalk("t", MsgStatus::kWaiting, 10)) {
    EXPECT_EQ(m.status, MsgStatus::kWaiting) << m.record.msg_id;
    EXPECT_EQ(m.record, Get("t", m.record.msg_id).record) << m.record.msg_id;
  }
  EXPECT_EQ(Info("t").waiting, 5);
  EXPECT_EQ(Info("t").consuming, 1);
  ASSERT_TRUE(Restart());
  EXPECT_EQ(ListWalkIds("t", MsgStatus::kWaiting, 2), waiting);
  EXPECT_EQ(ListWalkIds("t", MsgStatus::kConsuming), Ids{"b"});

  Advance(2'000);  // 3,000: w1, n, w2 and a are consumable
  EXPECT_EQ(ListWalkIds("t", MsgStatus::kWaiting), Ids{"w3"});
  EXPECT_EQ(ListWalkIds("t", MsgStatus::kReady), (Ids{"w1", "n", "w2", "a"}));
  EXPECT_EQ(ListWalkIds("t", MsgStatus::kConsuming), Ids{"b"});
  EXPECT_EQ(PullIds("t", 10), (Ids{"w1", "n", "w2", "a"}));
}

// A walk of WAITING pages while deliveries start and end their retry interval: no message is
// listed twice, and none that stayed WAITING is skipped.
TEST_P(BackendContractTest, ListWaitingCursorIsStableWhileRetryIntervalsComeAndGo) {
  core::TopicConfig c;
  c.retry_interval = Millis(1'000);
  SetConfig("t", c);
  for (const std::string id : {"x", "y", "z"}) Send("t", id, 0);
  for (int i = 1; i <= 4; ++i) Send("t", "w" + std::to_string(i), i * 1'000);
  ASSERT_EQ(PullIds("t", 1, 500), Ids{"x"});  // waits from 500 to 1,500
  c.retry_interval = Millis(3'000);
  SetConfig("t", c);
  ASSERT_EQ(PullIds("t", 1, 500), Ids{"y"});    // waits from 500 to 3,500
  ASSERT_EQ(PullIds("t", 1, 2'500), Ids{"z"});  // waits from 2,500 to 5,500
  Advance(500);

  backend::ListPage p1 = ListPage("t", MsgStatus::kWaiting, 2);
  EXPECT_EQ(IdsOf(p1.messages), (Ids{"w1", "x"}));
  ASSERT_TRUE(b_->Ack("t", "x").ok());  // a late ack ends x: not listed again
  backend::ListPage p2 = ListPage("t", MsgStatus::kWaiting, 2, p1.next_cursor);
  EXPECT_EQ(IdsOf(p2.messages), (Ids{"w2", "w3"}));
  Advance(2'000);  // 2,500: w1 and w2 are ready, z's deadline passes (consumable at 5,500)
  backend::ListPage p3 = ListPage("t", MsgStatus::kWaiting, 2, p2.next_cursor);
  EXPECT_EQ(IdsOf(p3.messages), (Ids{"y", "w4"}));
  backend::ListPage p4 = ListPage("t", MsgStatus::kWaiting, 2, p3.next_cursor);
  EXPECT_EQ(IdsOf(p4.messages), Ids{"z"});
  EXPECT_EQ(p4.next_cursor, "");
}

TEST_P(BackendContractTest, ListReadyIsThePeekOfTheNextPulls) {
  std::mt19937 rng(7);
  std::vector<core::NewMessage> msgs;
  for (int i = 0; i < 300; ++i) {
    msgs.push_back(
        NewMsg("t", "m" + std::to_string(i), rng() % 3'000, static_cast<int32_t>(rng() % 10)));
  }
  SendAll(msgs);
  Advance(1'500);
  // Some deliveries time out, some are nacked at different times, some acked.
  std::vector<core::Message> got = Pull("t", 60, 500);
  ASSERT_EQ(got.size(), 60u);
  for (size_t i = 0; i < got.size(); ++i) {
    if (i % 3 == 0) {
      ASSERT_TRUE(b_->Ack("t", got[i].record.msg_id, false).ok());
    }
    if (i % 3 == 1) {
      ASSERT_TRUE(b_->Ack("t", got[i].record.msg_id).ok());
    }
    if (i % 10 == 0) Advance(7);
  }
  Advance(1'000);
  const Ids peek = ListWalkIds("t", MsgStatus::kReady, 1000);
  EXPECT_EQ(static_cast<int64_t>(peek.size()), Info("t").ready);
  EXPECT_EQ(ListWalkIds("t", MsgStatus::kReady, 17), peek);    // any page size
  EXPECT_EQ(ListWalkIds("t", MsgStatus::kReady, 1000), peek);  // a peek delivers nothing
  Ids pulled;
  for (int i = 0; i < 100 && pulled.size() < peek.size(); ++i) {
    Ids batch = PullIds("t", 23);
    if (batch.empty()) break;
    pulled.insert(pulled.end(), batch.begin(), batch.end());
  }
  EXPECT_EQ(pulled, peek);
}

TEST_P(BackendContractTest, ListPagesRespectTheLimitAndTheLastHasNoCursor) {
  for (int i = 0; i < 10; ++i) Send("t", "m" + std::to_string(i), 1'000 + i);
  std::string cursor;
  std::vector<size_t> sizes;
  Ids ids;
  for (int page = 0; page < 10; ++page) {
    backend::ListPage p = ListPage("t", MsgStatus::kWaiting, 3, cursor);
    sizes.push_back(p.messages.size());
    for (const core::Message& m : p.messages) ids.push_back(m.record.msg_id);
    EXPECT_TRUE(PrintableAscii(p.next_cursor)) << p.next_cursor;
    if (p.messages.size() < 3) {
      EXPECT_EQ(p.next_cursor, "") << "a short page is the last";
    }
    if (p.next_cursor.empty()) break;
    cursor = p.next_cursor;
  }
  EXPECT_EQ(sizes, (std::vector<size_t>{3, 3, 3, 1}));
  ASSERT_EQ(ids.size(), 10u);
  EXPECT_EQ(ids.front(), "m0");
  EXPECT_EQ(ids.back(), "m9");
  // Exactly one page's worth: the walk ends after at most one more, empty, page.
  EXPECT_EQ(ListWalk("t", MsgStatus::kWaiting, 10).size(), 10u);
  backend::ListPage whole = ListPage("t", MsgStatus::kWaiting, 10);
  if (!whole.next_cursor.empty()) {
    backend::ListPage after = ListPage("t", MsgStatus::kWaiting, 10, whole.next_cursor);
    EXPECT_TRUE(after.messages.empty());
    EXPECT_EQ(after.next_cursor, "");
  }
  backend::ListPage big = ListPage("t", MsgStatus::kWaiting, 1000);
  EXPECT_EQ(big.messages.size(), 10u);
  EXPECT_EQ(big.next_cursor, "");
}

TEST_P(BackendContractTest, ListRefusesACursorItDidNotMake) {
  for (int i = 0; i < 5; ++i) Send("t", "m" + std::to_string(i), 0);
  backend::ListPage p = ListPage("t", MsgStatus::kReady, 2);
  ASSERT_FALSE(p.next_cursor.empty());
  for (const std::string& bad :
       {std::string("not a cursor"), std::string("!!!!"), std::string("\x01\x02", 2),
        std::string(1000, 'z'), p.next_cursor + "\x7f", std::string("\0", 1)}) {
    Result<backend::ListPage> r = b_->ListMsg(backend::ListRequest{"t", MsgStatus::kReady, 2, bad});
    ASSERT_FALSE(r.has_value()) << "cursor '" << bad << "' was accepted";
    EXPECT_EQ(r.error().code(), Errc::kInvalidArgument) << bad;
    EXPECT_NE(r.error().message().find("cursor is not valid"), std::string::npos)
        << r.error().ToString();
  }
  // The good cursor still works after the refusals.
  EXPECT_EQ(IdsOf(ListPage("t", MsgStatus::kReady, 2, p.next_cursor).messages), (Ids{"m2", "m3"}));
}

TEST_P(BackendContractTest, ListEndedStatusesByEndTimeWhileRetained) {
  Send("t", "ok1", 0);
  Send("t", "ok2", 0);
  Send("t", "exh", 0, kHour, 0);
  Send("t", "exp_late", 0, 300);
  Send("t", "exp_early", 0, 200);
  Send("t", "del", kHour);
  Send("t", "released", kHour);
  ASSERT_EQ(PullIds("t", 3), (Ids{"ok1", "ok2", "exh"}));
  Advance(10);
  ASSERT_TRUE(b_->Ack("t", "ok2").ok());
  Advance(10);
  ASSERT_TRUE(b_->Ack("t", "ok1").ok());
  ASSERT_TRUE(b_->Ack("t", "exh", false).ok());  // its only delivery: RETRY_EXHAUST
  ASSERT_TRUE(b_->Delete("t", "del").ok());
  ASSERT_TRUE(b_->Delete("t", "released", true).ok());
  Advance(300);  // both expire, early first
  EXPECT_EQ(ListWalkIds("t", MsgStatus::kConsumeOk, 1), (Ids{"ok2", "ok1"}));
  EXPECT_EQ(ListWalkIds("t", MsgStatus::kExpire, 1), (Ids{"exp_early", "exp_late"}));
  EXPECT_EQ(ListWalkIds("t", MsgStatus::kRetryExhaust, 1), Ids{"exh"});
  EXPECT_EQ(ListWalkIds("t", MsgStatus::kDelete, 1), Ids{"del"});  // released: forgotten
  EXPECT_TRUE(ListWalkIds("t", std::nullopt).empty());             // ended: not in 1..3
  for (const core::Message& m : ListWalk("t", MsgStatus::kConsumeOk, 10)) {
    EXPECT_EQ(m.status, MsgStatus::kConsumeOk);
    EXPECT_EQ(m.record.payload, "payload");
  }
  // ok2 ended at 10, ok1 and the others at 20, the expired at 200 and 300.
  AdvanceTo(At(10) + options().retention);
  EXPECT_EQ(ListWalkIds("t", MsgStatus::kConsumeOk, 1), Ids{"ok1"});
  AdvanceTo(At(20) + options().retention);
  EXPECT_TRUE(ListWalkIds("t", MsgStatus::kConsumeOk).empty());
  EXPECT_TRUE(ListWalkIds("t", MsgStatus::kRetryExhaust).empty());
  EXPECT_TRUE(ListWalkIds("t", MsgStatus::kDelete).empty());
  EXPECT_EQ(ListWalkIds("t", MsgStatus::kExpire), (Ids{"exp_early", "exp_late"}));
  AdvanceTo(At(300) + options().retention);
  EXPECT_TRUE(ListWalkIds("t", MsgStatus::kExpire).empty());
}

// Walks pages while messages are sent, pulled, acked, deleted and triggered between them. A
// message is never listed twice under one status on a walk, and one that stayed in its status
// for the whole walk is listed exactly once; every listed message is in the walked status when
// listed.
class WalkChecker {
 public:
  void Listed(const core::Message& m, std::optional<MsgStatus> walked) {
    if (walked) {
      EXPECT_EQ(m.status, *walked) << m.record.msg_id;
    }
    EXPECT_TRUE(seen_.insert({m.record.msg_id, m.status}).second)
        << m.record.msg_id << " listed twice as " << core::StatusName(m.status);
    statuses_[m.record.msg_id].insert(m.status);
  }
  // `stayed`: each id whose status was the same before the walk and after it and which no
  // operation of the test moved meanwhile.
  void ExpectListedOnce(const std::map<std::string, MsgStatus>& stayed,
                        std::optional<MsgStatus> walked) {
    for (const auto& [id, s] : stayed) {
      if (walked ? s != *walked : !core::InLife(s)) continue;
      EXPECT_EQ(seen_.count({id, s}), 1u)
          << id << " stayed " << core::StatusName(s) << " but was not listed";
    }
    // A message listed under two statuses must have moved.
    for (const auto& [id, ss] : statuses_) {
      if (ss.size() > 1) {
        EXPECT_EQ(stayed.count(id), 0u) << id;
      }
    }
  }

 private:
  std::set<std::pair<std::string, MsgStatus>> seen_;
  std::map<std::string, std::set<MsgStatus>> statuses_;
};

TEST_P(BackendContractTest, ListCursorsStayValidWhileMessagesMove) {
  for (std::optional<MsgStatus> walked :
       {std::optional<MsgStatus>(), std::optional(MsgStatus::kWaiting),
        std::optional(MsgStatus::kReady), std::optional(MsgStatus::kConsuming)}) {
    SCOPED_TRACE(walked ? core::StatusName(*walked) : "default walk");
    const std::string topic = walked ? "t" + std::to_string(static_cast<int>(*walked)) : "t0";
    std::mt19937 rng(99);
    // 200 waiting (triggers from 1 s to 201 s), 200 ready of mixed priorities, 100 consuming.
    std::vector<core::NewMessage> msgs;
    for (int i = 0; i < 200; ++i) {
      msgs.push_back(NewMsg(topic, "w" + std::to_string(i), 1'000 + (rng() % 200) * 1'000,
                            static_cast<int32_t>(rng() % 10)));
    }
    for (int i = 0; i < 300; ++i) {
      msgs.push_back(NewMsg(topic, "r" + std::to_string(i), 0, static_cast<int32_t>(rng() % 10)));
    }
    SendAll(msgs);
    ASSERT_EQ(Pull(topic, 100, kHour).size(), 100u);
    std::map<std::string, MsgStatus> before;
    for (const core::Message& m : ListWalk(topic, std::nullopt, 1000)) {
      before[m.record.msg_id] = m.status;
    }
    ASSERT_EQ(before.size(), 500u);
    std::set<std::string> moved;
    WalkChecker checker;
    std::string cursor;
    int next_new = 0;
    for (int page = 0; page < 1'000; ++page) {
      backend::ListPage p = ListPage(topic, walked, 7, cursor);
      EXPECT_LE(p.messages.size(), 7u);
      for (const core::Message& m : p.messages) checker.Listed(m, walked);
      if (p.next_cursor.empty()) break;
      cursor = p.next_cursor;
      // Between pages: new messages (waiting and ready), pulls, acks, deletes, time.
      for (int k = 0; k < 2; ++k) {
        const std::string id = "n" + std::to_string(next_new++);
        SendMsg(
            NewMsg(topic, id, (rng() % 2) * (rng() % 200'000), static_cast<int32_t>(rng() % 10)));
        moved.insert(id);
      }
      for (const core::Message& m : Pull(topic, 2, kHour)) moved.insert(m.record.msg_id);
      for (const core::Message& m : ListPage(topic, MsgStatus::kConsuming, 3).messages) {
        if (rng() % 3 == 0) {
          ASSERT_TRUE(b_->Ack(topic, m.record.msg_id).ok());
          moved.insert(m.record.msg_id);
        }
      }
      const std::string victim = "w" + std::to_string(rng() % 200);
      if (b_->Delete(topic, victim).ok()) moved.insert(victim);
      Advance(500);  // some waiting messages become ready
    }
    std::map<std::string, MsgStatus> stayed;
    for (const auto& [id, s] : before) {
      if (moved.count(id) == 0 && StatusOf(topic, id) == s) stayed[id] = s;
    }
    EXPECT_GT(stayed.size(), 100u);
    checker.ExpectListedOnce(stayed, walked);
  }
}

}  // namespace
}  // namespace chronoq::contract
