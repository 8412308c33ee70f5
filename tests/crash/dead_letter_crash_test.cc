// Crash test of dead letters (API-EXTENSIONS.md section 4): a child process runs the embedded
// engine on a RocksDB store while messages with short ttls and one delivery expire and exhaust
// into a dead-letter topic; it is killed with SIGKILL at random moments and run again on the same
// directory, many times. After each kill the store, read directly, must hold every answered
// message exactly once: in life in its source, or ended there (5 or 6) and present in the
// dead-letter topic, never both in life, never neither. At the end a recovery far in the future
// ends everything, and every expired or exhausted message must be a dead letter.
//
// Real time is the subject (the child dies at arbitrary instants), so the child runs on the real
// clock; the final check uses a manual clock.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <random>
#include <set>
#include <string>
#include <thread>

#include "base/clock.h"
#include "base/scheduler.h"
#include "engine/engine.h"
#include "storage/message_store.h"
#include "storage/rocksdb/rocks_kv.h"
#include "tests/testutil/await.h"
#include "tests/testutil/temp_dir.h"

namespace chronoq {
namespace {

using core::MsgStatus;
using core::Phase;

constexpr const char* kSource = "src";
constexpr const char* kDeadLetters = "dlq";

using testutil::Await;

// The child: configures the source topic (idempotent), then sends, pulls and nacks until killed,
// writing the id of every answered send to `out` (one line each).
[[noreturn]] void RunChild(const std::string& dir, int round, int out) {
  auto kv = storage::RocksKv::Open(storage::RocksOptions{dir, round % 2 == 1});
  if (!kv.has_value()) _exit(2);
  storage::MessageStore store(kv->get(), "ns");
  base::SystemClock clock;
  base::ThreadScheduler sched(&clock);
  engine::Engine engine(engine::EngineOptions{}, &store, &clock, &sched);
  core::TopicDefaults defaults;
  engine.SetTopicDefaults(&defaults);
  if (!engine.Recover().ok()) _exit(3);
  core::TopicConfig c;
  c.dead_letter_topic = kDeadLetters;
  c.max_retry = 0;
  c.ack_timeout = Millis(40);
  auto set = Await<Result<core::TopicConfig>>(
      [&](auto cb) { engine.SetTopicConfig(kSource, c, std::move(cb)); });
  if (!set.has_value()) _exit(4);
  std::mt19937 rng(static_cast<unsigned>(round * 7919 + 1));
  std::thread consumer([&] {
    for (;;) {
      auto got = Await<Result<std::vector<core::Message>>>([&](auto cb) {
        engine.Pull(backend::PullRequest{kSource, 8, std::nullopt}, std::move(cb));
      });
      if (got.has_value()) {
        for (const core::Message& m : *got) {
          // Acked, nacked (exhausted: a dead letter) or left to time out (the same, later).
          const int what = static_cast<int>(m.record.seq % 3);
          if (what == 2) continue;
          Await<Status>([&](auto cb) {
            engine.Ack(kSource, m.record.msg_id, what == 0, std::move(cb));
          }).IgnoreError();
        }
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(2));
    }
  });
  for (int i = 0;; ++i) {
    std::vector<core::NewMessage> batch;
    for (int k = 0; k < 10; ++k) {
      core::NewMessage m;
      m.topic = kSource;
      m.msg_id = std::to_string(round) + "-" + std::to_string(i) + "-" + std::to_string(k);
      m.payload = "p";
      m.ttl = Millis(5 + static_cast<int64_t>(rng() % 60));
      batch.push_back(std::move(m));
    }
    auto r = Await<Result<std::vector<Result<backend::Sent>>>>(
        [&](auto cb) { engine.SendBatch(std::move(batch), std::move(cb)); });
    if (!r.has_value()) continue;
    std::string lines;
    for (const auto& item : *r) {
      if (item.has_value()) lines += item->message.record.msg_id + "\n";
    }
    if (::write(out, lines.data(), lines.size()) < 0) _exit(5);
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
}

class DeadLetterCrashTest : public ::testing::Test {
 protected:
  // The store as a killed process left it: each answered message in exactly one place.
  void CheckStore(const char* when, bool all_ended) {
    auto kv = storage::RocksKv::Open(storage::RocksOptions{dir_.path(), false});
    ASSERT_TRUE(kv.has_value()) << kv.error().ToString();
    storage::MessageStore store(kv->get(), "ns");
    int64_t dead = 0;
    for (const std::string& id : answered_) {
      auto src = store.GetRecord(kSource, id, false);
      auto dl = store.GetRecord(kDeadLetters, id, false);
      ASSERT_TRUE(src.has_value() && dl.has_value());
      ASSERT_TRUE(src->has_value()) << when << ": answered message " << id << " is lost";
      const core::MessageRecord& s = **src;
      const bool dead_end = s.phase == Phase::kEnded && (s.end_status == MsgStatus::kExpire ||
                                                         s.end_status == MsgStatus::kRetryExhaust);
      if (s.phase != Phase::kEnded) {
        EXPECT_FALSE(all_ended) << when << ": " << id << " still in life";
        EXPECT_FALSE(dl->has_value()) << when << ": " << id << " in life in both topics";
      } else if (dead_end) {
        ASSERT_TRUE(dl->has_value()) << when << ": " << id << " ended as "
                                     << static_cast<int>(s.end_status) << " without dead letter";
        ASSERT_TRUE((*dl)->dead_letter.has_value());
        EXPECT_EQ((*dl)->dead_letter->topic, kSource);
        EXPECT_EQ((*dl)->dead_letter->status, s.end_status);
        // (At the end an hour later the dead letters have outlived the default ttl too.)
        if (!all_ended) {
          EXPECT_NE((*dl)->phase, Phase::kEnded) << when << ": " << id;
        }
        ++dead;
      } else {
        EXPECT_EQ(s.end_status, MsgStatus::kConsumeOk) << id;
        EXPECT_FALSE(dl->has_value()) << when << ": acked " << id << " became a dead letter";
      }
    }
    dead_letters_ = dead;
  }

  // Ends everything by recovering an hour later on a manual clock.
  void EndEverything() {
    auto kv = storage::RocksKv::Open(storage::RocksOptions{dir_.path(), true});
    ASSERT_TRUE(kv.has_value());
    storage::MessageStore store(kv->get(), "ns");
    base::ManualClock clock(base::SystemClock().Now() + Millis(3'600'000));
    base::ManualScheduler sched(&clock);
    engine::Engine engine(engine::EngineOptions{}, &store, &clock, &sched);
    core::TopicDefaults defaults;
    engine.SetTopicDefaults(&defaults);
    ASSERT_TRUE(engine.Recover().ok());
    (*kv)->Close();
  }

  void ReadAnswered(int fd) {
    std::string buf;
    char chunk[4096];
    for (;;) {
      ssize_t n = ::read(fd, chunk, sizeof(chunk));
      if (n <= 0) break;
      buf.append(chunk, static_cast<size_t>(n));
    }
    size_t start = 0;
    for (size_t nl = buf.find('\n'); nl != std::string::npos; nl = buf.find('\n', start)) {
      answered_.insert(buf.substr(start, nl - start));
      start = nl + 1;
    }
  }

  testutil::TempDir dir_;
  std::set<std::string> answered_;
  int64_t dead_letters_ = 0;
};

TEST_F(DeadLetterCrashTest, EachEndIsInTheSourceOrTheDeadLetterTopicAfterKills) {
  const int kKills = 8;
  std::mt19937 rng(20261125);
  for (int round = 0; round < kKills; ++round) {
    int fds[2];
    ASSERT_EQ(::pipe(fds), 0);
    pid_t child = ::fork();
    ASSERT_GE(child, 0);
    if (child == 0) {
      ::close(fds[0]);
      RunChild(dir_.path(), round, fds[1]);
    }
    ::close(fds[1]);
    std::this_thread::sleep_for(std::chrono::milliseconds(200 + rng() % 400));  // kill at random
    ::kill(child, SIGKILL);
    int status = 0;
    ::waitpid(child, &status, 0);
    ASSERT_TRUE(WIFSIGNALED(status)) << "the child exited by itself with " << WEXITSTATUS(status);
    ReadAnswered(fds[0]);
    ::close(fds[0]);
    CheckStore("after a kill", /*all_ended=*/false);
    if (HasFatalFailure()) return;
  }
  EndEverything();
  if (HasFatalFailure()) return;
  CheckStore("at the end", /*all_ended=*/true);
  EXPECT_GT(answered_.size(), 500u) << "the load was too light to mean anything";
  EXPECT_GT(dead_letters_, 100);
  std::printf("dead-letter crash test: %d kills, %zu answered sends, %ld dead letters\n", kKills,
              answered_.size(), dead_letters_);
}

}  // namespace
}  // namespace chronoq
