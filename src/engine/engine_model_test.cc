// Randomized model check of the Engine over a KvStore (MemKv, or RocksKv in a temp directory):
// random sends (idempotent and replacing), pulls, acks, nacks, deletes (with and without release)
// on a few topics, with the scheduler advanced by small, exact and huge steps, and sometimes the
// clock moved without running any timer. Configurations vary the memory horizon and load chunk,
// so that many messages live in the far tier and are loaded in small steps. A reference model
// built only from core/ (CreateRecord, Apply, StatusAt) predicts every answer; after every step,
// each message's getMsg, every topic's counts and buckets, and the topic listing are compared
// with it.
#include <gtest/gtest.h>

#include <algorithm>
#include <limits>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "base/clock.h"
#include "base/scheduler.h"
#include "core/state_machine.h"
#include "engine/engine.h"
#include "storage/memory/mem_kv.h"
#include "storage/message_store.h"
#include "storage/rocksdb/rocks_kv.h"
#include "tests/testutil/sync_backend.h"
#include "tests/testutil/temp_dir.h"
#include "tests/testutil/topic_tally.h"

namespace chronoq::engine {
namespace {

using core::EventKind;
using core::MessageRecord;
using core::MsgStatus;
using core::Phase;

const TimePoint kT0 = FromEpochMs(1'700'000'000'000);
constexpr int64_t kMin = 60'000;
constexpr int64_t kHour = 60 * kMin;
constexpr int64_t kDay = 24 * kHour;
constexpr Millis kRetention(5 * kMin);
constexpr Millis kInactive(30 * kMin);
const std::vector<std::string> kTopics = {"alpha", "beta", "中文"};

using Key = std::pair<std::string, std::string>;  // topic, msg id

struct ModelConfig {
  const char* name;
  Millis memory_horizon;
  size_t load_chunk;
  bool rocks;  // RocksKv (sync_writes=false) instead of MemKv
};
const ModelConfig kConfigs[] = {
    {"DefaultHorizon", Millis(60'000), 4096, false},
    {"SmallHorizon", Millis(1'000), 2, false},
    {"RocksSmallHorizon", Millis(1'000), 2, true},
};

EngineOptions OptionsFor(const ModelConfig& c) {
  EngineOptions o;
  o.retention = kRetention;
  o.topic_inactive = kInactive;
  o.memory_horizon = c.memory_horizon;
  o.load_chunk = c.load_chunk;
  o.shards = 2;
  return o;
}

std::unique_ptr<storage::KvStore> MakeKv(const ModelConfig& c, const testutil::TempDir& dir) {
  if (!c.rocks) return std::make_unique<storage::MemKv>();
  storage::RocksOptions o;
  o.dir = dir.path();
  o.memtable_bytes = size_t{8} << 20;
  Result<std::unique_ptr<storage::RocksKv>> kv = storage::RocksKv::Open(o);
  EXPECT_TRUE(kv.has_value()) << kv.error().ToString();
  return kv.has_value() ? std::move(*kv) : nullptr;
}

class EngineModel {
 public:
  EngineModel(uint32_t seed, const ModelConfig& config)
      : rng_(seed),
        clock_(kT0),
        sched_(&clock_),
        kv_(MakeKv(config, dir_)),
        store_(kv_.get(), "ns"),
        engine_(OptionsFor(config), &store_, &clock_, &sched_),
        b_(&engine_) {
    EXPECT_TRUE(engine_.Recover().ok());
    sched_.RunDue();
  }

  void Step() {
    int op = static_cast<int>(Pick(100));
    if (op < 28) {
      Send();
    } else if (op < 43) {
      Pull();
    } else if (op < 58) {
      AckOrNack();
    } else if (op < 64) {
      Remove();
    } else if (op < 70) {
      Peek();
    } else {
      Advance();
    }
    Check();
  }

  int64_t ops_ok() const { return ops_ok_; }
  int64_t forgotten() const { return forgotten_; }

 private:
  struct TopicState {
    bool exists = false;
    TimePoint last_active{};
  };

  int64_t Pick(int64_t n) { return std::uniform_int_distribution<int64_t>(0, n - 1)(rng_); }
  template <typename T>
  T OneOf(std::initializer_list<T> xs) {
    return *(xs.begin() + Pick(static_cast<int64_t>(xs.size())));
  }
  TimePoint Now() const { return clock_.Now(); }
  std::string RandomTopic() { return kTopics[Pick(static_cast<int64_t>(kTopics.size()))]; }
  std::string RandomId() { return "id-" + std::to_string(Pick(25)); }

  // The reference view at `now`: records ended by time are finalized (ended at their natural
  // end), records past retention are purged, and idle topics without messages in life are
  // forgotten.
  void Normalize() {
    const TimePoint now = Now();
    for (auto it = ref_.begin(); it != ref_.end();) {
      MessageRecord& r = it->second;
      if (r.phase != Phase::kEnded && !core::InLife(core::StatusAt(r, now))) {
        r = *core::Apply(r, core::Event{EventKind::kFinalize}, now);
      }
      if (r.phase == Phase::kEnded && now >= r.ended_at + kRetention) {
        it = ref_.erase(it);
      } else {
        ++it;
      }
    }
    for (auto& [name, t] : topics_) {
      if (t.exists && Count(name) == 0 && now >= t.last_active + kInactive) {
        t.exists = false;
        ++forgotten_;
      }
    }
  }
  // In-life messages of a topic (ended ones, retained or not, do not keep a topic known).
  size_t Count(const std::string& topic) const {
    size_t n = 0;
    for (const auto& [k, r] : ref_) n += k.first == topic && r.phase != Phase::kEnded;
    return n;
  }
  void Touch(const std::string& topic) {
    topics_[topic].exists = true;
    topics_[topic].last_active = Now();
  }
  const MessageRecord* Find(const std::string& topic, const std::string& id) const {
    auto it = ref_.find(Key{topic, id});
    return it == ref_.end() ? nullptr : &it->second;
  }

  void Send() {
    Normalize();
    std::string topic = RandomTopic();
    core::NewMessage m{topic,
                       RandomId(),
                       OneOf<std::string>({"p", std::string("nul\0inside", 10), "中文😀", "x y"}),
                       Millis(OneOf<int64_t>({0, -7, 1, 999, kMin, kMin - 1, 10 * kMin, 2 * kHour,
                                              7 * kDay, 31 * kDay})),
                       Millis(OneOf<int64_t>({1, 1'000, 30'000, kHour, 2 * kDay,
                                              std::numeric_limits<int64_t>::max()})),
                       OneOf<int32_t>({0, 1, 3, std::numeric_limits<int32_t>::max()})};
    Result<core::Message> got = b_.Send(m);
    ASSERT_TRUE(got.has_value()) << got.error().ToString();
    Touch(topic);
    const MessageRecord* existing = Find(topic, m.msg_id);
    if (existing != nullptr && core::InLife(core::StatusAt(*existing, Now()))) {
      EXPECT_EQ(got->record, *existing) << "idempotent send must answer the existing message";
    } else {
      EXPECT_GT(got->record.seq, last_seq_);
      last_seq_ = got->record.seq;
      EXPECT_EQ(got->record, core::CreateRecord(m, Now(), got->record.seq));
      ref_[Key{topic, m.msg_id}] = got->record;
    }
    EXPECT_EQ(got->status, core::StatusAt(got->record, Now()));
    ++ops_ok_;
  }

  void Pull() {
    Normalize();
    std::string topic = RandomTopic();
    int32_t batch = OneOf<int32_t>({1, 2, 3, 50});
    Millis ack(OneOf<int64_t>({1, 1'000, 30'000, 3 * kHour}));
    Result<std::vector<core::Message>> got = b_.Pull(topic, batch, ack);
    ASSERT_TRUE(got.has_value()) << got.error().ToString();
    if (topics_[topic].exists) Touch(topic);
    std::vector<MessageRecord*> ready;
    for (auto& [k, r] : ref_) {
      if (k.first == topic && core::StatusAt(r, Now()) == MsgStatus::kReady) ready.push_back(&r);
    }
    std::sort(ready.begin(), ready.end(), [](const MessageRecord* a, const MessageRecord* b) {
      return std::tie(a->visible_at, a->seq) < std::tie(b->visible_at, b->seq);
    });
    if (ready.size() > static_cast<size_t>(batch)) ready.resize(batch);
    ASSERT_EQ(got->size(), ready.size()) << "pull of " << topic;
    for (size_t i = 0; i < ready.size(); ++i) {
      MessageRecord want = *core::Apply(*ready[i], core::Event{EventKind::kDeliver, ack}, Now());
      EXPECT_EQ((*got)[i].record, want) << "position " << i;
      EXPECT_EQ((*got)[i].status, MsgStatus::kConsuming);
      *ready[i] = want;
    }
    ops_ok_ += static_cast<int64_t>(ready.size());
  }

  // Ack, nack or delete through `call`, predicting the outcome with `event`.
  template <typename Call>
  void Mutate(core::Event event, bool release, Call call) {
    Normalize();
    std::string topic = RandomTopic();
    std::string id = RandomId();
    // Prefer ids that exist so that the legal paths are taken often.
    std::vector<std::string> known;
    for (const auto& [k, r] : ref_) {
      if (k.first == topic) known.push_back(k.second);
    }
    if (!known.empty() && Pick(4) != 0) id = known[Pick(static_cast<int64_t>(known.size()))];
    Status s = call(topic, id);
    const MessageRecord* r = Find(topic, id);
    if (r == nullptr) {
      EXPECT_EQ(s.code(), Errc::kNotFound) << s.ToString();
      return;
    }
    Result<MessageRecord> want = core::Apply(*r, event, Now());
    if (!want.has_value()) {
      EXPECT_EQ(s.code(), want.error().code()) << s.ToString();
      EXPECT_EQ(s.code(), Errc::kInvalidState);
      return;
    }
    ASSERT_TRUE(s.ok()) << s.ToString() << " for " << core::EventName(event.kind);
    Touch(topic);
    if (release) {
      ref_.erase(Key{topic, id});
    } else {
      ref_[Key{topic, id}] = *want;
    }
    ++ops_ok_;
  }
  void AckOrNack() {
    bool ack = Pick(3) != 0;
    Mutate(core::Event{ack ? EventKind::kAck : EventKind::kNack}, false,
           [&](const std::string& t, const std::string& id) { return b_.Ack(t, id, ack); });
  }
  void Remove() {
    bool release = Pick(2) == 0;
    Mutate(core::Event{EventKind::kDelete}, release,
           [&](const std::string& t, const std::string& id) { return b_.Delete(t, id, release); });
  }

  void Advance() {
    switch (Pick(5)) {
      case 0:
        sched_.Advance(Millis(Pick(3)));
        break;
      case 1:
        sched_.Advance(Millis(Pick(5'000)));
        break;
      case 2:
        sched_.Advance(
            Millis(OneOf<int64_t>({kMin, 5 * kMin, 30 * kMin, 2 * kHour, kDay, 40 * kDay})));
        break;
      default: {  // exactly onto the next time something is due, or just before it
        TimePoint next = kTimeMax;
        for (const auto& [k, r] : ref_) {
          for (TimePoint t : {r.visible_at, r.expire_time, r.ended_at + kRetention}) {
            if (t > Now()) next = std::min(next, t);
          }
        }
        if (next == kTimeMax || next > Now() + Millis(100 * kDay)) return;
        sched_.AdvanceTo(Pick(2) == 0 ? next : next - Millis(1));
      }
    }
  }

  // Moves the clock without running any timer, checks that what clients read is already true,
  // then lets the timers catch up.
  void Peek() {
    clock_.Advance(Millis(OneOf<int64_t>({1, 500, kMin, kHour, 3 * kDay})));
    Check();
    sched_.RunDue();
  }

  void Check() {
    Normalize();
    const TimePoint now = Now();
    for (const std::string& topic : kTopics) {
      core::TopicInfo want;
      want.topic = topic;
      for (int i = 0; i < 25; ++i) {
        std::string id = "id-" + std::to_string(i);
        Result<core::Message> got = b_.Get(topic, id);
        const MessageRecord* r = Find(topic, id);
        if (r == nullptr) {
          ASSERT_FALSE(got.has_value())
              << topic << "/" << id << " should be gone; status " << static_cast<int>(got->status)
              << " phase " << static_cast<int>(got->record.phase) << " natural end +"
              << (core::NaturalEndTime(got->record) - kT0).count() << " now +"
              << (now - kT0).count();
          EXPECT_EQ(got.error().code(), Errc::kNotFound);
          continue;
        }
        ASSERT_TRUE(got.has_value()) << topic << "/" << id << ": " << got.error().ToString();
        MsgStatus s = core::StatusAt(*r, now);
        EXPECT_EQ(got->status, s) << topic << "/" << id;
        if (got->record.phase == Phase::kEnded || r->phase != Phase::kEnded) {
          EXPECT_EQ(got->record, *r) << topic << "/" << id;
        } else {  // ended by time but not yet finalized: the live record, status already true
          EXPECT_EQ(core::StatusAt(got->record, now), s);
        }
        testutil::Tally(want, s, r->trigger_time - now);
      }
      Result<core::TopicInfo> info = b_.Info(topic);
      ASSERT_TRUE(info.has_value());
      ASSERT_EQ(*info, want) << topic << " at +" << (now - kT0).count() << " ms";
      infos_[topic] = want;
    }
    std::vector<core::TopicInfo> want_list;
    for (const std::string& topic : kTopics) {  // kTopics is sorted by bytes
      const TopicState& t = topics_[topic];
      const core::TopicInfo& i = infos_[topic];
      bool live = i.waiting + i.ready + i.consuming > 0;
      if (t.exists && (live || now - t.last_active < kInactive)) want_list.push_back(i);
    }
    Result<std::vector<core::TopicInfo>> list = b_.List();
    ASSERT_TRUE(list.has_value());
    EXPECT_EQ(*list, want_list);
  }

  std::mt19937 rng_;
  base::ManualClock clock_;
  base::ManualScheduler sched_;
  testutil::TempDir dir_;
  std::unique_ptr<storage::KvStore> kv_;
  storage::MessageStore store_;
  Engine engine_;
  testutil::SyncBackend b_;
  std::map<Key, MessageRecord> ref_;
  std::map<std::string, TopicState> topics_;
  std::map<std::string, core::TopicInfo> infos_;
  uint64_t last_seq_ = 0;
  int64_t ops_ok_ = 0;
  int64_t forgotten_ = 0;
};

class EngineModelTest : public ::testing::TestWithParam<std::tuple<int, uint32_t>> {};

TEST_P(EngineModelTest, EveryAnswerMatchesTheReferenceModel) {
  const auto [config, seed] = GetParam();
  EngineModel model(seed, kConfigs[config]);
  for (int i = 0; i < 1500; ++i) {
    model.Step();
    if (HasFailure()) FAIL() << "seed " << seed << " diverged at step " << i;
  }
  EXPECT_GT(model.ops_ok(), 300);
  EXPECT_GT(model.forgotten(), 0);
}

std::string ModelName(const ::testing::TestParamInfo<std::tuple<int, uint32_t>>& i) {
  return std::string(kConfigs[std::get<0>(i.param)].name) + "_" +
         std::to_string(std::get<1>(i.param));
}

INSTANTIATE_TEST_SUITE_P(Memory, EngineModelTest,
                         ::testing::Combine(::testing::Values(0, 1),
                                            ::testing::Range<uint32_t>(1, 13)),
                         ModelName);
INSTANTIATE_TEST_SUITE_P(Rocks, EngineModelTest,
                         ::testing::Combine(::testing::Values(2), ::testing::Range<uint32_t>(1, 4)),
                         ModelName);

}  // namespace
}  // namespace chronoq::engine
