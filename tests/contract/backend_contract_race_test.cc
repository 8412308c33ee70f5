// Contract cases for updateMsg and countMsg racing with pulls (API-EXTENSIONS.md section 3: "a
// message is either updated or delivered, never both"). Threads hammer Update and Count while
// other threads pull the same messages; afterwards every delivery is checked against the answers
// the updaters and counters got. See backend_contract.h.
#include <atomic>
#include <map>
#include <mutex>
#include <thread>

#include "tests/contract/backend_contract.h"

namespace chronoq::contract {
namespace {

using core::MsgStatus;

constexpr int64_t kHour = 3'600'000;

// What one updater saw for one message, in the order it asked (one thread per message, so this
// is the order the backend applied them in).
struct UpdateAnswers {
  std::vector<int> applied;  // the rounds answered with success
  int first_refused = -1;    // the first round answered kInvalidState
  std::vector<std::string> problems;
};

std::string UPayload(const std::string& id, int round) {
  return id + " update " + std::to_string(round);
}
int32_t UPriority(int round) { return round % 10; }

TEST_P(BackendContractTest, UpdateAndCountRaceSafelyWithPulls) {
  constexpr int kUpdated = 200;  // half start READY, half WAITING (their first update: trigger now)
  constexpr int kCounted = 100;  // WAITING with a count trigger
  constexpr int kRounds = 8;
  constexpr int64_t kTrigger = 5;
  constexpr int kUpdaters = 2, kCounters = 2, kPullers = 3;
  std::vector<core::NewMessage> msgs;
  for (int i = 0; i < kUpdated; ++i) {
    msgs.push_back(NewMsg("t", "u" + std::to_string(i), i % 2 == 0 ? 0 : kHour, 0, "original"));
  }
  for (int i = 0; i < kCounted; ++i) {
    core::NewMessage m = NewMsg("t", "c" + std::to_string(i), kHour, 0, "counted");
    m.count_trigger = kTrigger;
    msgs.push_back(std::move(m));
  }
  SendAll(msgs);

  std::vector<UpdateAnswers> updates(kUpdated);
  std::vector<std::vector<Result<core::Message>>> counts(kCounted);
  std::mutex mu;
  std::map<std::string, std::vector<core::Message>> delivered;
  std::vector<std::string> puller_errors;
  std::atomic<int> writers_left{kUpdaters + kCounters};

  std::vector<std::thread> threads;
  for (int w = 0; w < kUpdaters; ++w) {
    threads.emplace_back([&, w] {
      for (int round = 0; round < kRounds; ++round) {
        for (int i = w; i < kUpdated; i += kUpdaters) {
          const std::string id = "u" + std::to_string(i);
          core::MessageUpdate u;
          u.payload = UPayload(id, round);
          u.priority = UPriority(round);
          if (round == 0 && i % 2 == 1) u.trigger_time = h_->clock()->Now();  // trigger now
          Result<core::Message> r = b_->Update("t", id, u);
          UpdateAnswers& a = updates[i];
          if (r.has_value()) {
            a.applied.push_back(round);
            if (r->record.payload != *u.payload || r->record.priority != *u.priority) {
              a.problems.push_back("round " + std::to_string(round) + " answered another message");
            }
            if (r->status != MsgStatus::kReady) {
              a.problems.push_back("round " + std::to_string(round) + " answered status " +
                                   std::string(core::StatusName(r->status)));
            }
            if (a.first_refused >= 0) {
              a.problems.push_back("round " + std::to_string(round) +
                                   " applied after a refusal: delivered messages were updated");
            }
          } else if (r.error().code() == Errc::kInvalidState) {
            if (a.first_refused < 0) a.first_refused = round;
          } else {
            a.problems.push_back("round " + std::to_string(round) + ": " + r.error().ToString());
          }
        }
      }
      writers_left.fetch_sub(1);
    });
  }
  for (int w = 0; w < kCounters; ++w) {
    threads.emplace_back([&, w] {
      for (int64_t round = 0; round < kTrigger + 3; ++round) {
        for (int i = w; i < kCounted; i += kCounters) {
          counts[i].push_back(b_->Count("t", "c" + std::to_string(i), 1));
        }
      }
      writers_left.fetch_sub(1);
    });
  }
  for (int p = 0; p < kPullers; ++p) {
    threads.emplace_back([&] {
      // Pull until the writers are done and then one pull finds nothing.
      for (;;) {
        const bool last = writers_left.load() == 0;
        Result<std::vector<core::Message>> got = b_->Pull("t", 5, Millis(kHour));
        std::lock_guard l(mu);
        if (!got.has_value()) {
          puller_errors.push_back(got.error().ToString());
          return;
        }
        for (core::Message& m : *got) delivered[m.record.msg_id].push_back(std::move(m));
        if (last && got->empty()) return;
      }
    });
  }
  for (std::thread& t : threads) t.join();

  EXPECT_TRUE(puller_errors.empty()) << puller_errors.front();
  // Updated messages: delivered once, with the last update applied before the delivery.
  for (int i = 0; i < kUpdated; ++i) {
    const std::string id = "u" + std::to_string(i);
    const UpdateAnswers& a = updates[i];
    for (const std::string& p : a.problems) ADD_FAILURE() << id << ": " << p;
    ASSERT_EQ(delivered[id].size(), 1u) << id << " delivered " << delivered[id].size() << " times";
    const core::Message& d = delivered[id][0];
    if (i % 2 == 1) {
      ASSERT_FALSE(a.applied.empty()) << id << ": its trigger-now update was refused";
      EXPECT_EQ(a.applied.front(), 0) << id;
    }
    if (a.applied.empty()) {
      EXPECT_EQ(d.record.payload, "original") << id;
      EXPECT_EQ(d.record.priority, 0) << id;
    } else {
      EXPECT_EQ(d.record.payload, UPayload(id, a.applied.back()))
          << id << ": an update answered with success is missing from the delivery";
      EXPECT_EQ(d.record.priority, UPriority(a.applied.back())) << id;
    }
    EXPECT_EQ(d.record.retry, 1) << id;
    core::Message now = Get("t", id);
    EXPECT_EQ(now.status, MsgStatus::kConsuming) << id;
    EXPECT_EQ(now.record.payload, d.record.payload) << id << ": updated after its delivery";
  }
  // Counted messages: exactly kTrigger counts succeed, the last of them makes it READY, every
  // later one is refused; delivered once, with count kTrigger.
  for (int i = 0; i < kCounted; ++i) {
    const std::string id = "c" + std::to_string(i);
    int64_t ok = 0;
    for (size_t k = 0; k < counts[i].size(); ++k) {
      const Result<core::Message>& r = counts[i][k];
      if (static_cast<int64_t>(k) < kTrigger) {
        ASSERT_TRUE(r.has_value()) << id << " count " << k << ": " << r.error().ToString();
        ++ok;
        EXPECT_EQ(r->record.count, ok) << id;
        EXPECT_EQ(r->status, ok == kTrigger ? MsgStatus::kReady : MsgStatus::kWaiting) << id;
      } else {
        ASSERT_FALSE(r.has_value()) << id << " counted past its trigger";
        EXPECT_EQ(r.error().code(), Errc::kInvalidState) << id;
      }
    }
    ASSERT_EQ(delivered[id].size(), 1u) << id << " delivered " << delivered[id].size() << " times";
    EXPECT_EQ(delivered[id][0].record.count, kTrigger) << id;
    EXPECT_EQ(Get("t", id).record.count, kTrigger) << id;
  }
  EXPECT_EQ(delivered.size(), static_cast<size_t>(kUpdated + kCounted));
}

}  // namespace
}  // namespace chronoq::contract
