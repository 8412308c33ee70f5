// Online backup (`chronoq backup`, POST /chronoq/admin/backup; docs/operations.md): a copy taken
// while several connections send, pull and ack opens as a complete store, and a server started on
// it has every message whose last operation was answered before the backup was asked for, in the
// status that answer left it in. Bad targets and storages that cannot be backed up get a sentence
// naming the problem.
#include <atomic>
#include <filesystem>
#include <map>
#include <mutex>
#include <thread>

#include "tests/integration/it_util.h"
#include "tests/testutil/temp_dir.h"

namespace chronoq::it {
namespace {

using namespace std::chrono_literals;
using testutil::ExitResult;
using testutil::RunBinary;
using testutil::TempDir;

constexpr std::string_view kBackupPath = "/chronoq/admin/backup";

ApiResponse Backup(ApiClient& c, const std::string& to) {
  return c.Post(kBackupPath, {{"to", to}});
}

// What one load thread did: each message goes through one fixed sequence of operations on its
// own msgId; once the last answer is in, the message's status is known and stays so (the test
// clock does not move, so no ack deadline or ttl passes).
struct Expected {
  std::string topic;
  int64_t status = 0;
};

void Load(const ServerProcess& server, int thread, const std::atomic<bool>& backup_started,
          const std::atomic<bool>& stop, std::mutex& mu,
          std::map<std::string, Expected>& must_have) {
  ApiClient c(server.endpoint());
  const std::string n = std::to_string(thread);
  for (int i = 0; !stop.load(); ++i) {
    const std::string id = "m" + n + "-" + std::to_string(i);
    std::string topic;
    int64_t status = 0;
    switch (i % 4) {
      case 0:  // waiting: triggers in a day
        topic = "backup-waiting";
        if (c.Queue("sendMsg", {{"topic", topic},
                                {"msgId", id},
                                {"msg", "w" + id},
                                {"delayMillis", std::to_string(kDay)}})
                .code() != 200) {
          continue;
        }
        status = 1;
        break;
      case 1:  // ready: nobody pulls this topic
        topic = "backup-ready";
        if (c.Queue("sendMsg",
                    {{"topic", topic}, {"msgId", id}, {"msg", "r" + id}, {"delayMillis", "0"}})
                .code() != 200) {
          continue;
        }
        status = 2;
        break;
      case 2:
      case 3: {                         // consuming (pulled, ack deadline in a day), or acked
        topic = "backup-consume-" + n;  // this thread's own: the pull takes this message
        if (c.Queue("sendMsg",
                    {{"topic", topic}, {"msgId", id}, {"msg", "c" + id}, {"delayMillis", "0"}})
                .code() != 200) {
          continue;
        }
        ApiResponse p =
            c.Queue("pullMsg",
                    {{"topic", topic}, {"batch", "1"}, {"ackTimeoutMillis", std::to_string(kDay)}});
        const json::value* list =
            p.json.is_object() ? p.json.as_object().if_contains("delayMsgList") : nullptr;
        if (p.code() != 200 || list == nullptr || !list->is_array() ||
            list->as_array().size() != 1 ||
            list->as_array()[0].as_object().at("msgId").as_string() != id) {
          ADD_FAILURE() << "pull of " << id << ": " << p.Describe();
          return;
        }
        status = 3;
        if (i % 4 == 3) {
          if (c.Queue("ackMsg", {{"topic", topic}, {"msgId", id}, {"ack", "true"}}).code() != 200) {
            continue;
          }
          status = 4;
        }
        break;
      }
    }
    // Answered before the backup was asked for: the copy must have it in this status.
    if (!backup_started.load()) {
      std::lock_guard<std::mutex> lock(mu);
      must_have[id] = Expected{topic, status};
    }
  }
}

TEST(BackupTest, ACopyTakenUnderLoadHasEveryMessageAnsweredBeforeItWithItsStatus) {
  ServerProcess source;
  Status st = source.Start({"--storage=embedded", "--test-clock", "--log-level=warn"});
  ASSERT_TRUE(st.ok()) << st.message();
  TempDir backups;
  const std::string copy = backups.Sub("copy");

  std::atomic<bool> backup_started{false};
  std::atomic<bool> stop{false};
  std::mutex mu;
  std::map<std::string, Expected> must_have;
  std::vector<std::thread> threads;
  constexpr int kThreads = 4;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] { Load(source, t, backup_started, stop, mu, must_have); });
  }
  // Let the load build a backlog (memtables, WAL) before the backup.
  while (true) {
    std::this_thread::sleep_for(50ms);
    std::lock_guard<std::mutex> lock(mu);
    if (must_have.size() >= 2000) break;
  }
  backup_started.store(true);
  ExitResult cli = RunBinary(
      {"backup", "--server=http://127.0.0.1:" + std::to_string(source.port()), "--to=" + copy},
      60s);
  // The load goes on a little after the backup, then stops.
  std::this_thread::sleep_for(100ms);
  stop.store(true);
  for (std::thread& t : threads) t.join();
  ASSERT_EQ(cli.exit_code, 0) << cli.out << cli.err;
  EXPECT_EQ(cli.out.rfind("backup written to " + copy + ": ", 0), 0u) << cli.out;
  EXPECT_NE(cli.out.find(" files, "), std::string::npos) << cli.out;
  EXPECT_TRUE(std::filesystem::exists(copy + "/CHRONOQ"));
  EXPECT_FALSE(std::filesystem::exists(copy + ".partial"));
  EXPECT_FALSE(std::filesystem::exists(copy + "/chronoq.pid")) << "the source's, not the copy's";

  // A second server on the copy, while the source still serves.
  ServerProcess restored;
  st = restored.Start(
      {"--storage=embedded", "--test-clock", "--log-level=warn", "--data-dir=" + copy});
  ASSERT_TRUE(st.ok()) << st.message();
  ApiClient c(restored.endpoint());
  std::map<int64_t, int> by_status;
  int wrong = 0;
  for (const auto& [id, want] : must_have) {
    ApiResponse r = c.Queue("getMsg", {{"topic", want.topic}, {"msgId", id}});
    const json::value& m = r.at("delayMsg");
    const int64_t got = m.is_object() ? m.as_object().at("status").to_number<int64_t>() : -1;
    if (got != want.status && ++wrong <= 5) {
      ADD_FAILURE() << id << " in " << want.topic << ": want status " << want.status << ", "
                    << r.Describe();
    }
    if (got == want.status) ++by_status[got];
  }
  EXPECT_EQ(wrong, 0) << "of " << must_have.size() << " messages";
  for (int64_t s = 1; s <= 4; ++s) EXPECT_GT(by_status[s], 100) << "status " << s;
  EXPECT_EQ(restored.Stop(SIGTERM), 0);
  EXPECT_EQ(source.Stop(SIGTERM), 0);
}

TEST(BackupTest, RefusesARelativeExistingOrUnwritableTargetWithASentence) {
  ServerProcess server;
  Status st = server.Start({"--storage=embedded", "--log-level=warn"});
  ASSERT_TRUE(st.ok()) << st.message();
  ApiClient c(server.endpoint());
  TempDir dir;

  ApiResponse r = Backup(c, "relative/dir");
  EXPECT_EQ(r.code(), 400) << r.Describe();
  EXPECT_EQ(r.msg(),
            "the backup directory 'to' must be an absolute path on the server's machine, not "
            "relative/dir");

  r = Backup(c, dir.path());
  EXPECT_EQ(r.code(), 400) << r.Describe();
  EXPECT_EQ(r.msg(), "the backup directory " + dir.path() +
                         " already exists; give a new directory (a backup never overwrites one)");

  r = Backup(c, dir.Sub("missing/copy"));
  EXPECT_EQ(r.code(), 400) << r.Describe();
  EXPECT_EQ(r.msg(), "the backup directory's parent " + dir.Sub("missing") +
                         " does not exist or is not a directory");

  r = c.Post(kBackupPath, {});
  EXPECT_EQ(r.status, 400) << r.Describe();
  EXPECT_EQ(r.msg(), "required parameter 'to' is missing");

  r = c.Get(std::string(kBackupPath));
  EXPECT_EQ(r.status, 405) << r.Describe();

  if (::geteuid() != 0) {  // root writes anywhere
    std::filesystem::create_directory(dir.Sub("ro"));
    std::filesystem::permissions(
        dir.Sub("ro"), std::filesystem::perms::owner_read | std::filesystem::perms::owner_exec);
    r = Backup(c, dir.Sub("ro/copy"));
    EXPECT_EQ(r.code(), 400) << r.Describe();
    EXPECT_EQ(
        r.msg().rfind("the backup directory's parent " + dir.Sub("ro") + " is not writable", 0), 0u)
        << r.msg();
  }
  EXPECT_TRUE(std::filesystem::is_empty(dir.path()) ||
              !std::filesystem::exists(dir.Sub("missing")));

  // The CLI prints the server's sentence and exits 1.
  ExitResult cli = RunBinary(
      {"backup", "--server=http://127.0.0.1:" + std::to_string(server.port()), "--to=rel"}, 10s);
  EXPECT_EQ(cli.exit_code, 1);
  EXPECT_NE(cli.err.find("must be an absolute path on the server's machine, not rel"),
            std::string::npos)
      << cli.err;
  EXPECT_EQ(server.Stop(SIGTERM), 0);
}

TEST(BackupTest, AMemoryServerHasNothingToBackUp) {
  ServerProcess server;
  Status st = server.Start({"--storage=memory", "--log-level=warn"});
  ASSERT_TRUE(st.ok()) << st.message();
  ApiClient c(server.endpoint());
  TempDir dir;
  ApiResponse r = Backup(c, dir.Sub("copy"));
  EXPECT_EQ(r.code(), 400) << r.Describe();
  EXPECT_EQ(r.msg(),
            "this server keeps its messages in memory (storage=memory): there is no store on disk "
            "to back up");
  EXPECT_FALSE(std::filesystem::exists(dir.Sub("copy")));
  EXPECT_EQ(server.Stop(SIGTERM), 0);
}

}  // namespace
}  // namespace chronoq::it
