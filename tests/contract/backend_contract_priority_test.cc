// Contract cases for message priority (API-EXTENSIONS.md section 1): among the messages
// consumable at a pull (pending ones whose visible_at has come, and deliveries whose ack deadline
// passed), the highest priority first; within one priority by (visible_at, seq). Large cases
// compare every pull with a model of that order, so that a backend ordering any one pull wrongly
// fails. See backend_contract.h.
#include <algorithm>
#include <map>
#include <numeric>
#include <random>
#include <sstream>

#include "tests/contract/backend_contract.h"

namespace chronoq::contract {
namespace {

using core::MsgStatus;
using Ids = std::vector<std::string>;

constexpr int64_t kHour = 3'600'000;

// What a correct backend must deliver: every message not acked, with when it is (or was)
// consumable from.
class PullOrderModel {
 public:
  // `m` answered the send of `sent`; the priority asked for is the one that counts.
  void Sent(const core::NewMessage& sent, const core::Message& m) {
    EXPECT_EQ(m.record.priority, sent.priority) << sent.msg_id;
    entries_[sent.msg_id] = Entry{sent.priority, m.record.visible_at, m.record.seq};
  }
  void SentAll(const std::vector<core::NewMessage>& sent, const std::vector<core::Message>& got) {
    ASSERT_EQ(sent.size(), got.size());
    for (size_t i = 0; i < sent.size(); ++i) Sent(sent[i], got[i]);
  }
  void Acked(const std::string& id) { entries_.erase(id); }
  void Nacked(const std::string& id, TimePoint now) { entries_.at(id).visible_at = now; }
  size_t size() const { return entries_.size(); }

  // The ids a pull of `batch` at `now` must deliver, in order.
  Ids Next(TimePoint now, size_t batch) const {
    std::vector<std::pair<const std::string*, const Entry*>> due;
    for (const auto& [id, e] : entries_) {
      if (e.visible_at <= now) due.emplace_back(&id, &e);
    }
    auto before = [](const auto& a, const auto& b) {
      return std::make_tuple(-a.second->priority, a.second->visible_at, a.second->seq) <
             std::make_tuple(-b.second->priority, b.second->visible_at, b.second->seq);
    };
    const size_t n = std::min(batch, due.size());
    std::partial_sort(due.begin(), due.begin() + static_cast<ptrdiff_t>(n), due.end(), before);
    Ids out;
    for (size_t i = 0; i < n; ++i) out.push_back(*due[i].first);
    return out;
  }

  // Checks a pull made at `now` against the model and records its deliveries.
  ::testing::AssertionResult CheckPull(const std::vector<core::Message>& got, TimePoint now,
                                       size_t batch, Millis ack_timeout) {
    const Ids want = Next(now, batch);
    Ids ids;
    for (const core::Message& m : got) ids.push_back(m.record.msg_id);
    ::testing::AssertionResult result = ::testing::AssertionSuccess();
    if (ids != want) {
      std::ostringstream why;
      why << "pull of " << batch << " at " << ToEpochMs(now) << " ms delivered " << ids.size()
          << " messages, expected " << want.size();
      for (size_t i = 0; i < std::max(ids.size(), want.size()); ++i) {
        const std::string a = i < ids.size() ? ids[i] : "(none)";
        const std::string b = i < want.size() ? want[i] : "(none)";
        if (a == b) continue;
        why << "; first difference at " << i << ": got " << Describe(a) << ", expected "
            << Describe(b);
        break;
      }
      result = ::testing::AssertionFailure() << why.str();
    }
    for (const core::Message& m : got) {
      auto it = entries_.find(m.record.msg_id);
      if (it == entries_.end()) continue;
      if (m.record.priority != it->second.priority) {
        result = ::testing::AssertionFailure()
                 << m.record.msg_id << " delivered with priority " << m.record.priority
                 << ", sent with " << it->second.priority;
      }
      it->second.visible_at = now + ack_timeout;
    }
    return result;
  }

 private:
  struct Entry {
    int32_t priority;
    TimePoint visible_at;
    uint64_t seq;
  };
  std::string Describe(const std::string& id) const {
    auto it = entries_.find(id);
    if (it == entries_.end()) return id + " (not expected at all)";
    std::ostringstream s;
    s << id << " (priority " << it->second.priority << ", visible at "
      << ToEpochMs(it->second.visible_at) << ", seq " << it->second.seq << ")";
    return s.str();
  }
  std::map<std::string, Entry> entries_;
};

std::string Id(int i) { return "m" + std::to_string(i); }

// A priority, 0..9, each about as often.
int32_t P(std::mt19937& rng) { return static_cast<int32_t>(rng() % 10); }

// ---- small cases, each one rule ----

TEST_P(BackendContractTest, HigherPriorityIsPulledFirst) {
  SendMsg(NewMsg("t", "p0", 0, 0));
  SendMsg(NewMsg("t", "p5", 0, 5));
  SendMsg(NewMsg("t", "p9", 0, 9));
  SendMsg(NewMsg("t", "p5b", 0, 5));
  SendMsg(NewMsg("t", "p1", 0, 1));
  EXPECT_EQ(PullIds("t", 2), (Ids{"p9", "p5"}));
  EXPECT_EQ(PullIds("t", 10), (Ids{"p5b", "p1", "p0"}));
}

TEST_P(BackendContractTest, PriorityIsKeptOnTheMessage) {
  for (int32_t p = 0; p <= 9; ++p) {
    core::Message m = SendMsg(NewMsg("t", "p" + std::to_string(p), 1'000, p));
    EXPECT_EQ(m.record.priority, p);
    EXPECT_EQ(Get("t", "p" + std::to_string(p)).record.priority, p);
  }
  Advance(1'000);
  std::vector<core::Message> got = Pull("t", 10);
  ASSERT_EQ(got.size(), 10u);
  for (size_t i = 0; i < got.size(); ++i) EXPECT_EQ(got[i].record.priority, 9 - int32_t(i));
}

TEST_P(BackendContractTest, WithinAPriorityOldestVisibilityFirst) {
  SendMsg(NewMsg("t", "late", 300, 4));
  SendMsg(NewMsg("t", "early", 100, 4));
  SendMsg(NewMsg("t", "same1", 200, 4));
  SendMsg(NewMsg("t", "same2", 200, 4));  // same trigger time, sent after same1
  SendMsg(NewMsg("t", "low", 0, 3));
  Advance(300);
  EXPECT_EQ(PullIds("t", 10), (Ids{"early", "same1", "same2", "late", "low"}));
}

TEST_P(BackendContractTest, HighPriorityThatBecameReadyLaterComesFirst) {
  SendMsg(NewMsg("t", "low", 0, 1));
  SendMsg(NewMsg("t", "high", 5'000, 8));
  Advance(4'999);
  EXPECT_EQ(PullIds("t", 1, kHour), Ids{"low"});
  SendMsg(NewMsg("t", "low2", 0, 1));
  Advance(1);
  EXPECT_EQ(PullIds("t", 10), (Ids{"high", "low2"}));
}

TEST_P(BackendContractTest, TimedOutHighPriorityDeliveryComesBeforeFreshLowPriority) {
  SendMsg(NewMsg("t", "p9", 0, 9));
  ASSERT_EQ(PullIds("t", 1, 1'000), Ids{"p9"});
  SendMsg(NewMsg("t", "p0old", 0, 0));
  Advance(999);
  SendMsg(NewMsg("t", "p0fresh", 0, 0));
  Advance(1);  // p9's ack deadline passes: consumable since 1,000, after both p0 messages
  std::vector<core::Message> got = Pull("t", 3);
  ASSERT_EQ(got.size(), 3u);
  EXPECT_EQ(got[0].record.msg_id, "p9");
  EXPECT_EQ(got[0].record.retry, 2);
  EXPECT_EQ(got[1].record.msg_id, "p0old");
  EXPECT_EQ(got[2].record.msg_id, "p0fresh");
}

TEST_P(BackendContractTest, TimedOutDeliveryIsPulledFirstEvenBeforeTimersRun) {
  SendMsg(NewMsg("t", "p7", 0, 7));
  ASSERT_EQ(PullIds("t", 1, 1'000), Ids{"p7"});
  SendMsg(NewMsg("t", "p2", 0, 2));
  AdvanceClockOnly(1'000);  // no timer ran: the pull itself must see the deadline passed
  EXPECT_EQ(PullIds("t", 2), (Ids{"p7", "p2"}));
}

TEST_P(BackendContractTest, NackedHighPriorityComesBeforeOlderLowPriority) {
  SendMsg(NewMsg("t", "p0", 0, 0));
  SendMsg(NewMsg("t", "p6", 0, 6));
  SendMsg(NewMsg("t", "p6b", 0, 6));
  ASSERT_EQ(PullIds("t", 1), Ids{"p6"});
  Advance(10);
  ASSERT_TRUE(b_->Ack("t", "p6", false).ok());
  // p6b has been consumable since 0, p6 since the nack at 10: same priority, older first.
  EXPECT_EQ(PullIds("t", 3), (Ids{"p6b", "p6", "p0"}));
}

TEST_P(BackendContractTest, WaitingHighPriorityIsNotPulledEarly) {
  SendMsg(NewMsg("t", "p9", 1'000, 9));
  SendMsg(NewMsg("t", "p0", 0, 0));
  EXPECT_EQ(PullIds("t", 10), Ids{"p0"});
  EXPECT_EQ(StatusOf("t", "p9"), MsgStatus::kWaiting);
}

TEST_P(BackendContractTest, PriorityOfOneTopicDoesNotReorderAnother) {
  SendMsg(NewMsg("a", "a0", 0, 0));
  SendMsg(NewMsg("b", "b9", 0, 9));
  SendMsg(NewMsg("a", "a1", 0, 1));
  EXPECT_EQ(PullIds("a", 10), (Ids{"a1", "a0"}));
  EXPECT_EQ(PullIds("b", 10), Ids{"b9"});
}

// ---- large cases against the model ----

// 10,000 messages of mixed priorities, each consumable from a different time, all consumable at
// the first pull: every batch is the next 100 in (priority desc, visible_at, seq) order.
TEST_P(BackendContractTest, PriorityOrderOfTenThousandReadyMessages) {
  constexpr int kN = 10'000;
  std::mt19937 rng(14);
  std::vector<int64_t> delays(kN);
  std::iota(delays.begin(), delays.end(), 0);
  std::shuffle(delays.begin(), delays.end(), rng);
  std::vector<core::NewMessage> msgs;
  for (int i = 0; i < kN; ++i) {
    msgs.push_back(NewMsg("t", Id(i), delays[i], P(rng)));
  }
  PullOrderModel model;
  model.SentAll(msgs, SendAll(msgs));
  Advance(kN);
  EXPECT_EQ(Info("t").ready, kN);
  for (int pull = 0; pull < kN / 100; ++pull) {
    std::vector<core::Message> got = Pull("t", 100, kHour);
    ASSERT_TRUE(model.CheckPull(got, Now(), 100, Millis(kHour))) << "pull " << pull;
    if (pull == 0) {
      for (const core::Message& m : got) EXPECT_EQ(m.record.priority, 9);
    }
    if (pull == kN / 100 - 1) {
      for (const core::Message& m : got) EXPECT_EQ(m.record.priority, 0);
    }
  }
  EXPECT_TRUE(Pull("t", 100).empty());
}

// Messages become consumable while pulls go on; each delivery is then nacked, acked or left to
// time out. Every pull must match the model, whatever mix of fresh, nacked and timed-out
// messages it chooses from.
TEST_P(BackendContractTest, PriorityOrderWhileMessagesBecomeReadyAndAreNackedOrTimeOut) {
  constexpr int kN = 10'000;
  constexpr int32_t kBatch = 50;
  constexpr int64_t kAckTimeout = 1'000;
  std::mt19937 rng(1414);
  std::vector<core::NewMessage> msgs;
  for (int i = 0; i < kN; ++i) {
    core::NewMessage m = NewMsg("t", Id(i), rng() % 20'000, P(rng));
    m.max_retry = 100'000;  // never exhausted here
    m.ttl = Millis(100 * kHour);
    msgs.push_back(std::move(m));
  }
  PullOrderModel model;
  model.SentAll(msgs, SendAll(msgs));
  int pulls = 0;
  while (model.size() > 0) {
    ASSERT_LT(pulls, 5'000) << model.size() << " messages never acked";
    Advance(rng() % 300);
    std::vector<core::Message> got = Pull("t", kBatch, kAckTimeout);
    ASSERT_TRUE(model.CheckPull(got, Now(), kBatch, Millis(kAckTimeout))) << "pull " << pulls;
    ++pulls;
    std::vector<std::pair<std::string, bool>> acks;
    for (size_t k = 0; k < got.size(); ++k) {
      const std::string& id = got[k].record.msg_id;
      switch (rng() % 3) {
        case 0:
          acks.emplace_back(id, false);
          model.Nacked(id, Now());
          break;
        case 1:
          acks.emplace_back(id, true);
          model.Acked(id);
          break;
        default:  // left to time out
          break;
      }
    }
    AckAll("t", acks);
  }
  EXPECT_EQ(Info("t"), core::TopicInfo{.topic = "t"});
}

// The order survives a restart: pending, nacked and delivered messages of every priority, with
// deadlines before and after the restart.
TEST_P(BackendContractTest, PriorityOrderSurvivesRestart) {
  constexpr int kN = 2'000;
  constexpr int64_t kAckTimeout = 5'000;
  std::mt19937 rng(41);
  std::vector<core::NewMessage> msgs;
  for (int i = 0; i < kN; ++i) {
    core::NewMessage m = NewMsg("t", Id(i), rng() % 10'000, P(rng));
    m.max_retry = 100'000;
    msgs.push_back(std::move(m));
  }
  PullOrderModel model;
  model.SentAll(msgs, SendAll(msgs));
  // Before the restart: some deliveries, of which some are nacked and some acked.
  for (int pull = 0; pull < 20; ++pull) {
    Advance(250);
    std::vector<core::Message> got = Pull("t", 20, kAckTimeout);
    ASSERT_TRUE(model.CheckPull(got, Now(), 20, Millis(kAckTimeout))) << "pull " << pull;
    std::vector<std::pair<std::string, bool>> acks;
    for (size_t k = 0; k < got.size(); k += 3) {
      acks.emplace_back(got[k].record.msg_id, k % 2 == 0);
      if (k % 2 == 0) {
        model.Acked(got[k].record.msg_id);
      } else {
        model.Nacked(got[k].record.msg_id, Now());
      }
    }
    AckAll("t", acks);
  }
  ASSERT_TRUE(Restart());
  int pulls = 0;
  while (model.size() > 0) {
    ASSERT_LT(pulls, 2'000) << model.size() << " messages never acked";
    Advance(500);
    std::vector<core::Message> got = Pull("t", 40, kAckTimeout);
    ASSERT_TRUE(model.CheckPull(got, Now(), 40, Millis(kAckTimeout))) << "pull " << pulls;
    ++pulls;
    std::vector<std::pair<std::string, bool>> acks;
    for (const core::Message& m : got) {
      if (m.record.priority % 2 == 0 || m.record.retry > 1) {
        acks.emplace_back(m.record.msg_id, true);
        model.Acked(m.record.msg_id);
      }
    }
    AckAll("t", acks);
  }
}

}  // namespace
}  // namespace chronoq::contract
