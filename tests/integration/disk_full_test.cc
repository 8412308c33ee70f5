// A full disk under the embedded store, on the real binary (README "Operations: disk full",
// docs/storage-format.md "Disk full"). The data directory sits on a small tmpfs that a ballast
// file fills. Then every write (sendMsg, pullMsg, ackMsg, deleteMsg, expiry) answers code
// 500 with a msg saying the disk is full and changes nothing, while reads (getMsg, getTopicInfo,
// getTopicInfoList, /metrics) go on. Once the ballast is deleted, writes succeed again without a
// restart, and a restart finds every acknowledged message and none that was refused.
//
// Mounting the tmpfs needs root (or CAP_SYS_ADMIN): without it the test fails, saying so.
// Runs on storage=embedded only, whatever CQ_TEST_STORAGE says (its own ctest target).
#include <fcntl.h>
#include <fmt/format.h>
#include <sys/mount.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <map>

#include "tests/integration/it_util.h"
#include "tests/testutil/temp_dir.h"

namespace chronoq::it {
namespace {

enum : int64_t { kWaiting = 1, kReady = 2, kConsuming = 3, kExpire = 5 };

// A tmpfs mounted at a directory until Unmount() or destruction.
class Tmpfs {
 public:
  ~Tmpfs() { Unmount(); }
  Status Mount(const std::string& dir, const std::string& size) {
    if (::mount("tmpfs", dir.c_str(), "tmpfs", 0, ("size=" + size).c_str()) != 0) {
      return Internal(fmt::format(
          "cannot mount a {} tmpfs at {}: {}. This test fills a small file system under the "
          "server's data directory and needs root (or CAP_SYS_ADMIN) to mount one.",
          size, dir, std::strerror(errno)));
    }
    dir_ = dir;
    return Status::Ok();
  }
  void Unmount() {
    if (dir_.empty()) return;
    if (::umount2(dir_.c_str(), 0) != 0) ::umount2(dir_.c_str(), MNT_DETACH);
    dir_.clear();
  }

 private:
  std::string dir_;
};

// Writes `path` until the file system has no byte left; returns the bytes written.
Result<size_t> FillDisk(const std::string& path) {
  int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) return Internal(fmt::format("cannot create {}: {}", path, std::strerror(errno)));
  size_t total = 0;
  const std::string chunk(size_t{1} << 20, 'b');
  for (size_t size = chunk.size(); size >= 1; size /= 16) {
    for (;;) {
      ssize_t n = ::write(fd, chunk.data(), size);
      if (n > 0) {
        total += static_cast<size_t>(n);
        continue;
      }
      if (n < 0 && errno != ENOSPC) {
        int e = errno;
        ::close(fd);
        return Internal(fmt::format("writing {}: {}", path, std::strerror(e)));
      }
      break;
    }
  }
  ::close(fd);
  return total;
}

uint64_t FreeBytes(const std::string& dir) {
  struct statvfs st {};
  if (::statvfs(dir.c_str(), &st) != 0) return UINT64_MAX;
  return static_cast<uint64_t>(st.f_bavail) * st.f_frsize;
}

class DiskFullTest : public ServerTest {
 protected:
  std::vector<std::string> Flags() const override {
    return {"--storage=embedded", "--data-dir=" + mnt_ + "/data"};
  }
  void SetUp() override {
    ASSERT_TRUE(std::filesystem::create_directories(mnt_));
    // 32 MB: once the ballast is gone, the memtables fit with room to spare (the store resumes
    // writing only then).
    Status s = tmpfs_.Mount(mnt_, "32m");
    ASSERT_TRUE(s.ok()) << s.message();
    ServerTest::SetUp();
    started_ = !HasFatalFailure();
  }
  void TearDown() override {
    if (started_ && server().running()) server().Stop(SIGTERM);
    tmpfs_.Unmount();  // even when the test failed half-way
  }

  // /metrics answers and shows `series` with `value`.
  void ExpectMetric(const std::string& series, int value) {
    ApiResponse r = api().Get("/metrics");
    ASSERT_EQ(r.status, 200) << r.Describe();
    EXPECT_NE(r.http.body.find("\n" + series + " " + std::to_string(value) + "\n"),
              std::string::npos)
        << series << " should be " << value << "\n"
        << server().Stderr();
  }
  // What getTopicInfo counts: waiting, ready, consuming.
  std::vector<int64_t> Counts(const std::string& t) {
    json::object i = TopicInfo(t);
    return {Int(i["waitingQueueSize"]), Int(i["readyQueueSize"]), Int(i["ackQueueSize"])};
  }
  // The payload of message `id`: the fill messages are large, so that a WAL block RocksDB
  // preallocated before the disk filled up is soon used up.
  static std::string Payload(const std::string& id) {
    return "payload-" + id + (id[0] == 'f' ? std::string(size_t{32} << 10, '.') : "");
  }
  // Every acknowledged message answers getMsg with its payload and expected status (0: any).
  void ExpectAcknowledged(const std::string& t) {
    for (const auto& [id, status] : acked_) {
      ApiResponse r = GetMsg(t, id);
      ASSERT_EQ(r.code(), 200) << id << ": " << r.Describe();
      const json::value& m = r.at("delayMsg");
      ASSERT_TRUE(m.is_object()) << r.Describe();
      EXPECT_EQ(Str(m.as_object().at("msg")), Payload(id));
      if (status != 0) {
        EXPECT_EQ(Int(m.as_object().at("status")), status) << id;
      }
    }
  }
  // No refused send is visible.
  void ExpectRefusedAbsent(const std::string& t) {
    for (const std::string& id : refused_) {
      EXPECT_EQ(GetMsg(t, id).code(), 404) << id << " was refused but is visible";
    }
  }
  json::object SendAcked(const std::string& t, const std::string& id, int64_t delay, int64_t status,
                         const Form& extra = {}) {
    Form f = {{"msgId", id}};
    for (const auto& e : extra) f.push_back(e);
    json::object m = SendOk(t, Payload(id), delay, f);
    acked_[id] = status;
    return m;
  }
  // A write refused because the disk is full: code 500 with a msg that says so.
  void ExpectDiskFull(const ApiResponse& r) { ExpectAppCode(r, 500, "disk is full"); }

  testutil::TempDir tmp_;
  const std::string mnt_ = tmp_.Sub("mnt");
  Tmpfs tmpfs_;
  bool started_ = false;
  std::map<std::string, int64_t> acked_;  // msgId -> status expected (0: not checked)
  std::vector<std::string> refused_;
};

TEST_F(DiskFullTest, WritesFailCleanlyReadsGoOnAndWritesResumeWhenSpaceIsFreed) {
  const std::string t = Topic();
  // Before: four ready messages (two of them delivered), two waiting (one far beyond the
  // memory horizon).
  SendAcked(t, "r1", 0, kConsuming);
  SendAcked(t, "r2", 0, kConsuming);
  SendAcked(t, "r3", 0, kReady);
  SendAcked(t, "w1", 10 * kMinute, kWaiting);
  SendAcked(t, "w2", kDay, kWaiting);
  SendAcked(t, "x1", 0, kReady, {{"ttlMillis", "20000"}});  // expires while the disk is full
  std::vector<json::object> pulled = PullOk(t, 2, 30'000);
  ASSERT_EQ(pulled.size(), 2u);
  EXPECT_EQ(MsgId(pulled[0]), "r1");
  EXPECT_EQ(MsgId(pulled[1]), "r2");
  ExpectMetric("cq_storage_writable", 1);

  // Fill the disk. What RocksDB preallocated for the WAL may still take a few sends: send until
  // one is refused.
  Result<size_t> ballast = FillDisk(mnt_ + "/ballast");
  ASSERT_TRUE(ballast.has_value()) << ballast.error().message();
  ASSERT_EQ(FreeBytes(mnt_), 0u);
  int sent = 0;
  for (;; ++sent) {
    ASSERT_LT(sent, 500) << "sends still succeed on a full disk";
    const std::string id = "f" + std::to_string(sent);
    ApiResponse r = Send(t, Payload(id), 5 * kMinute, {{"msgId", id}});
    if (r.code() == 200) {
      acked_[id] = kWaiting;
      continue;
    }
    ExpectDiskFull(r);
    refused_.push_back(id);
    break;
  }
  // The failed write makes the server reload its state from the store (at the next timer run).
  Advance(0);
  const std::vector<int64_t> counts = {2 + sent, 2, 2};  // waiting, ready, consuming
  EXPECT_EQ(Counts(t), counts);

  {
    SCOPED_TRACE("disk full: writes answer 500 and change nothing");
    for (int i = 0; i < 3; ++i) {
      const std::string id = "refused" + std::to_string(i);
      ExpectDiskFull(Send(t, Payload(id), i == 0 ? 0 : kMinute, {{"msgId", id}}));
      refused_.push_back(id);
      Advance(0);
    }
    ExpectDiskFull(Send(t, "generated id", 0));  // a new topic would be created by it
    ExpectDiskFull(Send(Topic("new"), "m", 0));
    Advance(0);
    ExpectDiskFull(Pull(t, 1, 30'000));  // delivering r3 writes its state
    Advance(0);
    ExpectDiskFull(Ack(t, "r1"));
    Advance(0);
    ExpectDiskFull(Ack(t, "r2", /*ack=*/false));
    Advance(0);
    ExpectDiskFull(Delete(t, "w1"));
    Advance(0);
  }
  {
    SCOPED_TRACE("disk full: reads go on and show the state from before");
    ExpectAcknowledged(t);
    ExpectRefusedAbsent(t);
    EXPECT_EQ(Counts(t), counts);
    EXPECT_TRUE(Listed(t));
    EXPECT_FALSE(Listed(Topic("new")));
    EXPECT_TRUE(PullOk(Topic("empty")).empty());  // nothing to deliver: nothing to write
    ExpectMetric("cq_storage_writable", 0);
    EXPECT_EQ(api().Get("/camellia/health/check").status, 200);
  }
  {
    SCOPED_TRACE("disk full: time passes (what ends by time cannot be written)");
    Advance(31'000);  // r1 and r2 reach their ack deadline, x1 its ttl
    acked_["r1"] = acked_["r2"] = acked_["x1"] = 0;
    ExpectAcknowledged(t);
    ExpectRefusedAbsent(t);
  }

  // Free the space: writes succeed again, without a restart.
  ASSERT_TRUE(std::filesystem::remove(mnt_ + "/ballast"));
  {
    SCOPED_TRACE("space freed: writes succeed again");
    Advance(1'000);  // the timers retry what ended by time: it is written now
    acked_["x1"] = kExpire;
    SendAcked(t, "after1", 0, 0);
    Advance(0);
    ExpectMetric("cq_storage_writable", 1);
    SendAcked(t, "after2", kMinute, kWaiting);
    // r1 and r2 timed out meanwhile: ready again, with r3 and after1.
    std::vector<json::object> l = PullOk(t, 10, 30'000);
    std::vector<std::string> ids;
    for (const auto& m : l) ids.push_back(MsgId(m));
    std::sort(ids.begin(), ids.end());
    EXPECT_EQ(ids, (std::vector<std::string>{"after1", "r1", "r2", "r3"}));
    for (const char* id : {"after1", "r1", "r2", "r3"}) acked_[id] = kConsuming;
    ExpectAppCode(Ack(t, "r1"), 200);
    acked_["r1"] = 0;  // ended: consumed
    ExpectAppCode(Delete(t, "w1"), 200);
    acked_.erase("w1");
    EXPECT_EQ(GetMsg(t, "w1").code(), 200);  // ended (deleted), still retained
    ExpectAcknowledged(t);
    ExpectRefusedAbsent(t);
    EXPECT_EQ(Counts(t), (std::vector<int64_t>{2 + sent, 0, 3}));
  }

  // A restart on the same store finds all of it.
  Status s = RestartServer();
  ASSERT_TRUE(s.ok()) << s.message();
  {
    SCOPED_TRACE("after a restart");
    for (auto& [id, status] : acked_) status = 0;  // the new process's clock is another one
    ExpectAcknowledged(t);
    ExpectRefusedAbsent(t);
    EXPECT_FALSE(Listed(Topic("new")));
    ExpectMetric("cq_storage_writable", 1);
  }
}

}  // namespace
}  // namespace chronoq::it
