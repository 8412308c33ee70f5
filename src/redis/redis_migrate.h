// The offline migration of a namespace's topics from layouts 1-3 to layout 4 (redis-format 4,
// build step 7: docs/redis.md "Migration from layouts 1-3"), for `chronoq redis-migrate`. Per
// topic: the migration script (scripts_migrate.cc) in calls of up to `batch` messages until it
// answers that the topic is in layout 4. While it runs the topic's 'lay' is 'm' and every node of
// this build answers the topic's requests with kTryLater (code 503). A run stopped at any point
// and started again finishes the job: nothing is lost or doubled.
//
// Blocking: waits for each reply. REQUIRES: not called on the sink's event-loop thread.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "base/clock.h"
#include "base/result.h"
#include "redis/command_sink.h"

namespace chronoq::redis {

struct MigrateOptions {
  int64_t batch = 1000;   // messages per script call (1..10,000)
  int64_t max_calls = 0;  // stop after this many calls (0: until done); tests stop part-way
  // Called after each call with the messages it moved.
  std::function<void(int64_t moved)> progress;
};

struct MigrateResult {
  enum class Outcome {
    kDone,     // the topic is in layout 4 (now, or it was already)
    kNoTopic,  // the namespace has no such topic (no 'seq' key)
    kStopped,  // max_calls reached first
  };
  Outcome outcome = Outcome::kDone;
  int64_t moved = 0;  // messages moved by this run
  int64_t calls = 0;
};

Result<MigrateResult> MigrateTopic(CommandSink& sink, const base::Clock& clock,
                                   const std::string& ns, const std::string& topic,
                                   const MigrateOptions& options);

// The topics of namespace `ns` (its 'topics' set: every topic a send created).
Result<std::vector<std::string>> NamespaceTopics(CommandSink& sink, const std::string& ns);

// Layout 4's member of the message `seq` named `msg_id` (docs/redis.md "Key id and member").
std::string Layout4Member(uint64_t seq, std::string_view msg_id);

}  // namespace chronoq::redis
