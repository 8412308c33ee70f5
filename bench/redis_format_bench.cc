// Redis memory and CPU per message of one redis-format (docs/redis.md "Format 4", build step 4):
// RedisBackend itself, with the real scripts, against a redis-server the caller started
// (bench/redis-format4.sh). Sends N messages of a 100-byte payload, 1 hour ahead, to a fresh
// topic in sendMsgBatch-sized batches (about what the coalescer makes of 64 connections), with
// generated msgIds (32 hex digits, base::NewMsgId); then, with --life, moves the clock past the
// trigger time and pulls them in batches of 100, acking each batch. Prints one line: the format,
// used_memory per waiting message, and Redis CPU (INFO cpu) per send and per pull+ack. With
// --spread the trigger times are spread evenly at random over the next day instead; with
// --info=K, topic info is asked K times after the sends and its Redis time per call printed
// (INFO commandstats, the EVALSHA usec).
//
//   redis_format_bench --port=P [--format=3] [--messages=20000] [--batch=17] [--payload=100]
//                      [--life] [--migrate] [--topic=t] [--spread] [--info=K]
//
// --migrate (build step 7): after the sends, migrates the topic to layout 4 (redis::MigrateTopic,
// as `chronoq redis-migrate`) and prints used_memory per waiting message after it, the Redis CPU
// per message moved and the run's wall time.
//
// With --format=4 new topics are created in layout 4, as by a node with `redis-format = 4`.
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <random>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "base/clock.h"
#include "base/random.h"
#include "base/scheduler.h"
#include "redis/command_sink.h"
#include "redis/connection.h"
#include "redis/event_loop.h"
#include "redis/redis_backend.h"
#include "redis/redis_migrate.h"
#include "tests/testutil/redis_servers.h"
#include "tests/testutil/sync_backend.h"

namespace chronoq {
namespace {

struct Flags {
  int port = 0;
  int format = 3;
  int messages = 20000;
  int batch = 17;
  int payload = 100;
  bool life = false;
  bool spread = false;
  int info = 0;
  bool migrate = false;
  std::string topic = "t";
};

Flags Parse(int argc, char** argv) {
  Flags f;
  for (int i = 1; i < argc; ++i) {
    const std::string_view a = argv[i];
    auto value = [&](std::string_view name) -> const char* {
      return a.substr(0, name.size()) == name ? argv[i] + name.size() : nullptr;
    };
    if (const char* v = value("--port=")) f.port = std::atoi(v);
    if (const char* v = value("--format=")) f.format = std::atoi(v);
    if (const char* v = value("--messages=")) f.messages = std::atoi(v);
    if (const char* v = value("--batch=")) f.batch = std::atoi(v);
    if (const char* v = value("--payload=")) f.payload = std::atoi(v);
    if (const char* v = value("--topic=")) f.topic = v;
    if (const char* v = value("--info=")) f.info = std::atoi(v);
    if (a == "--life") f.life = true;
    if (a == "--spread") f.spread = true;
    if (a == "--migrate") f.migrate = true;
  }
  return f;
}

// A field of an INFO section ("used_memory", "used_cpu_user"...), as a number.
double Info(testutil::RedisConn& c, const std::string& section, const std::string& field) {
  Result<testutil::RedisReply> r = c.Command({"INFO", section});
  if (!r.has_value()) return -1;
  const std::string key = "\n" + field + ":";
  const size_t at = ("\n" + r->str).find(key);
  return at == std::string::npos ? -1 : std::atof(r->str.c_str() + at + key.size() - 1);
}

// A field ("calls", "usec") of EVALSHA's line of INFO commandstats.
double EvalStat(testutil::RedisConn& c, const std::string& field) {
  Result<testutil::RedisReply> r = c.Command({"INFO", "commandstats"});
  if (!r.has_value()) return -1;
  const size_t at = r->str.find("cmdstat_evalsha:");
  if (at == std::string::npos) return -1;
  const size_t u = r->str.find(field + "=", at);
  return u == std::string::npos ? -1 : std::atof(r->str.c_str() + u + field.size() + 1);
}

double Cpu(testutil::RedisConn& c) {
  return Info(c, "cpu", "used_cpu_user") + Info(c, "cpu", "used_cpu_sys");
}

int Run(const Flags& f) {
  Result<testutil::RedisConn> raw =
      testutil::RedisConn::Connect(static_cast<uint16_t>(f.port), {}, std::chrono::seconds(60));
  if (!raw.has_value()) {
    std::fprintf(stderr, "connect: %s\n", raw.error().ToString().c_str());
    return 1;
  }
  base::ManualClock clock(FromEpochMs(1'700'000'000'000));
  base::ManualScheduler scheduler(&clock);
  redis::EventLoop loop;
  redis::ConnectionOptions co;
  co.endpoint = redis::RedisEndpoint{"127.0.0.1", static_cast<uint16_t>(f.port)};
  redis::RedisConnection conn(&loop, co);
  redis::SingleServer sink(&conn);
  redis::RedisBackendOptions o;
  o.ns = "bench";
  o.record_format = f.format;
  redis::RedisBackend backend(o, &sink, &clock, &scheduler);
  testutil::SyncBackend b(&backend);
  // Warm-up: the scripts loaded, the topic list written (another topic).
  if (!b.Send(f.topic + "-warm", base::NewMsgId(), "w", Millis(0)).has_value()) {
    std::fprintf(stderr, "warm-up send failed\n");
    return 1;
  }
  const std::string payload(static_cast<size_t>(f.payload), 'x');
  std::mt19937_64 rnd(42);
  const double m0 = Info(*raw, "memory", "used_memory");
  const double c0 = Cpu(*raw);
  for (int sent = 0; sent < f.messages;) {
    std::vector<core::NewMessage> batch;
    for (int i = 0; i < f.batch && sent < f.messages; ++i, ++sent) {
      const Millis delay(f.spread ? 1'000 + static_cast<int64_t>(rnd() % 86'400'000) : 3'600'000);
      batch.push_back(core::NewMessage{f.topic, base::NewMsgId(), payload, delay});
    }
    if (auto r = b.SendBatch(std::move(batch)); !r.has_value()) {
      std::fprintf(stderr, "send failed: %s\n", r.error().ToString().c_str());
      return 1;
    }
  }
  double c1 = Cpu(*raw);
  const double m1 = Info(*raw, "memory", "used_memory");
  std::printf("format %d messages %d batch %d used_memory/msg %.0f redis_cpu_us/send %.1f",
              f.format, f.messages, f.batch, (m1 - m0) / f.messages, (c1 - c0) * 1e6 / f.messages);
  if (f.info > 0) {
    // Per call that ran (a call over the node's command timeout fails at the node but runs on).
    const double u0 = EvalStat(*raw, "usec"), n0 = EvalStat(*raw, "calls");
    int failed = 0;
    for (int i = 0; i < f.info; ++i) failed += b.Info(f.topic).has_value() ? 0 : 1;
    const double ran = EvalStat(*raw, "calls") - n0;
    std::printf(" topic_info_redis_us %.0f (%d failed at the node)",
                (EvalStat(*raw, "usec") - u0) / (ran > 0 ? ran : 1), failed);
  }
  if (f.migrate) {
    c1 = Cpu(*raw);  // after --info's calls
    const auto t0 = std::chrono::steady_clock::now();
    Result<redis::MigrateResult> r = redis::MigrateTopic(sink, clock, "bench", f.topic, {});
    const double wall =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    if (!r.has_value()) {
      std::fprintf(stderr, "\nmigration failed: %s\n", r.error().ToString().c_str());
      return 1;
    }
    const double c2 = Cpu(*raw);
    std::printf(
        " migrated %lld in %lld calls used_memory/msg after %.0f redis_cpu_us/migrated %.1f "
        "wall_s %.1f",
        static_cast<long long>(r->moved), static_cast<long long>(r->calls),
        (Info(*raw, "memory", "used_memory") - m0) / f.messages,
        (c2 - c1) * 1e6 / static_cast<double>(r->moved > 0 ? r->moved : 1), wall);
    std::fflush(stdout);
    c1 = c2;  // --life then measures the pulls and acks of layout 4
  }
  if (f.life) {
    clock.Advance(Millis(3'600'001));
    int done = 0;
    for (;;) {
      Result<std::vector<core::Message>> got = b.Pull(f.topic, 100);
      if (!got.has_value() || got->empty()) break;
      std::vector<backend::AckItem> acks;
      for (const core::Message& m : *got) {
        backend::AckItem a;
        a.msg_id = m.record.msg_id;
        acks.push_back(std::move(a));
      }
      done += static_cast<int>(got->size());
      if (!b.AckBatch(f.topic, std::move(acks)).has_value()) break;
    }
    std::printf(" pulled+acked %d redis_cpu_us/pull+ack %.1f", done,
                (Cpu(*raw) - c1) * 1e6 / (done > 0 ? done : 1));
  }
  std::printf("\n");
  return 0;
}

}  // namespace
}  // namespace chronoq

int main(int argc, char** argv) {
  const chronoq::Flags f = chronoq::Parse(argc, argv);
  if (f.port == 0) {
    std::fprintf(stderr, "usage: redis_format_bench --port=P [--format=3] [--messages=N] ...\n");
    return 2;
  }
  return chronoq::Run(f);
}
