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
// --spread-ms=N spreads the trigger times over N ms from 1 s ahead; --real-clock sets the clock
// to the real time before each batch (trigger times then fall due while it runs); --rate=R and
// --seconds=S then send R messages a second for S seconds (one batch every batch/R seconds) and
// print the Redis CPU per send and the time per send script of that phase (the slow-script
// check of docs/benchmarks.md "Format 4: slow scripts").
//
// --migrate (build step 7): after the sends, migrates the topic to layout 4 (redis::MigrateTopic,
// as `chronoq redis-migrate`) and prints used_memory per waiting message after it, the Redis CPU
// per message moved and the run's wall time.
//
// With --format=4 new topics are created in layout 4, as by a node with `redis-format = 4`.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <random>
#include <string>
#include <string_view>
#include <thread>
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
  int64_t spread_ms = 0;  // trigger times spread over this many ms (--spread: a day)
  bool real_clock = false;
  int rate = 0;  // then sends at this rate (messages/s) for `seconds`
  int seconds = 0;
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
    if (const char* v = value("--spread-ms=")) f.spread_ms = std::atoll(v);
    if (a == "--real-clock") f.real_clock = true;
    if (const char* v = value("--rate=")) f.rate = std::atoi(v);
    if (const char* v = value("--seconds=")) f.seconds = std::atoi(v);
    if (a == "--migrate") f.migrate = true;
  }
  if (f.spread && f.spread_ms == 0) f.spread_ms = 86'400'000;
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
  co.command_timeout = std::chrono::seconds(30);  // a loaded host: measure, do not fail
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
  // One batch of `n` sends, the clock first set to the real time with --real-clock.
  auto send_batch = [&](int n) {
    if (f.real_clock) clock.Set(base::SystemClock::Get()->Now());
    std::vector<core::NewMessage> batch;
    for (int i = 0; i < n; ++i) {
      const Millis delay(
          f.spread_ms > 0 ? 1'000 + static_cast<int64_t>(rnd() % static_cast<uint64_t>(f.spread_ms))
                          : 3'600'000);
      batch.push_back(core::NewMessage{f.topic, base::NewMsgId(), payload, delay});
    }
    Result<std::vector<backend::Sent>> r = b.SendBatch(std::move(batch));
    if (!r.has_value()) std::fprintf(stderr, "send failed: %s\n", r.error().ToString().c_str());
    return r.has_value();
  };
  for (int sent = 0; sent < f.messages; sent += f.batch) {
    if (!send_batch(std::min(f.batch, f.messages - sent))) return 1;
  }
  if (f.rate > 0) {  // paced: a batch every batch/rate seconds, on the real clock
    const double pc0 = Cpu(*raw), pu0 = EvalStat(*raw, "usec"), pn0 = EvalStat(*raw, "calls");
    int64_t paced = 0;
    const auto every = std::chrono::duration<double>(static_cast<double>(f.batch) / f.rate);
    const auto t0 = std::chrono::steady_clock::now();
    for (int64_t k = 0; k * f.batch < static_cast<int64_t>(f.rate) * f.seconds; ++k) {
      std::this_thread::sleep_until(t0 + std::chrono::duration_cast<std::chrono::nanoseconds>(
                                             every * static_cast<double>(k)));
      if (!send_batch(f.batch)) return 1;
      paced += f.batch;
    }
    const double calls = EvalStat(*raw, "calls") - pn0;
    std::printf("paced: sent %lld at %d/s redis_cpu_us/send %.1f evalsha_us/call %.0f\n",
                static_cast<long long>(paced), f.rate,
                (Cpu(*raw) - pc0) * 1e6 / static_cast<double>(paced > 0 ? paced : 1),
                (EvalStat(*raw, "usec") - pu0) / (calls > 0 ? calls : 1));
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
