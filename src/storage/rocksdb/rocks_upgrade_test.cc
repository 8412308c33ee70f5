// A store written by the build before issue 14 (format 1: no `ended` column family) opens, is
// upgraded in place, and works: ended messages are listed per status, in-life ones as before,
// their payloads read from `payloads` (format 4 writes new messages to `sent`).
// The old store is built here byte by byte as that build wrote it (docs/storage-format.md of
// format 1), through RocksDB directly, so that the test does not depend on today's encoders.
#include <gtest/gtest.h>
#include <rocksdb/db.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include "base/clock.h"
#include "base/scheduler.h"
#include "engine/engine.h"
#include "storage/codec.h"
#include "storage/message_store.h"
#include "storage/rocksdb/rocks_kv.h"
#include "tests/testutil/sync_backend.h"
#include "tests/testutil/temp_dir.h"

namespace chronoq::storage {
namespace {

namespace fs = std::filesystem;
using core::MsgStatus;

const TimePoint kT0 = FromEpochMs(1'700'000'000'000);
constexpr Millis kRetention(300'000);

template <typename T>
void Little(std::string& out, T v) {
  char buf[sizeof(T)];
  std::memcpy(buf, &v, sizeof(T));
  out.append(buf, sizeof(T));
}

// Record metadata version 1 (63 bytes), as format 1 wrote it.
struct OldMeta {
  int64_t produce = 0, trigger = 0, expire = 0;
  int32_t max_retry = 3;
  int64_t retry = 0;
  uint8_t phase = 0, status = 1;
  int64_t visible = 0, ended = 0;
  uint64_t seq = 0;
  std::string Encode() const {
    std::string out(1, '\x01');
    Little(out, produce);
    Little(out, trigger);
    Little(out, expire);
    Little(out, max_retry);
    Little(out, retry);
    out.push_back(static_cast<char>(phase));
    out.push_back(static_cast<char>(status));
    Little(out, visible);
    Little(out, ended);
    Little(out, seq);
    return out;
  }
};

std::string Str(std::string_view s) {
  std::string out(1, static_cast<char>(s.size()));  // short strings: a one-byte varint
  out.append(s);
  return out;
}

std::string Big(uint64_t v) {
  std::string out;
  for (int i = 7; i >= 0; --i) out.push_back(static_cast<char>((v >> (8 * i)) & 0xff));
  return out;
}

std::string TimeKey(TimePoint t) {
  return Big(static_cast<uint64_t>(ToEpochMs(t)) ^ (uint64_t{1} << 63));
}

// Writes a format-1 store of namespace "ns" into `dir`: topic "t" with three acked messages, one
// deleted, one retention entry whose msgId a newer (waiting) message took, and one waiting message.
void WriteFormat1Store(const fs::path& dir) {
  std::ofstream(dir / "CHRONOQ") << "chronoq store\nformat 1\nThis directory is a chronoq data "
                                    "directory (docs/storage-format.md).\n";
  rocksdb::DBOptions o;
  o.create_if_missing = true;
  o.create_missing_column_families = true;
  std::vector<rocksdb::ColumnFamilyDescriptor> descs;
  descs.emplace_back(rocksdb::kDefaultColumnFamilyName, rocksdb::ColumnFamilyOptions());
  for (const char* name : {"meta", "records", "payloads", "vis", "hist", "retention"}) {
    descs.emplace_back(name, rocksdb::ColumnFamilyOptions());
  }
  std::vector<rocksdb::ColumnFamilyHandle*> cf;
  rocksdb::DB* raw = nullptr;
  ASSERT_TRUE(rocksdb::DB::Open(o, dir.string(), descs, &cf, &raw).ok());
  std::unique_ptr<rocksdb::DB> db(raw);
  rocksdb::ColumnFamilyHandle* meta = cf[1];
  rocksdb::ColumnFamilyHandle* records = cf[2];
  rocksdb::ColumnFamilyHandle* payloads = cf[3];
  rocksdb::ColumnFamilyHandle* vis = cf[4];
  rocksdb::ColumnFamilyHandle* hist = cf[5];
  rocksdb::ColumnFamilyHandle* retention = cf[6];
  const std::string topic = Str("ns") + Str("t");
  rocksdb::WriteBatch b;
  auto ended = [&](const std::string& id, int64_t ended_ms, uint8_t status, uint64_t seq) {
    OldMeta m;
    m.produce = ToEpochMs(kT0) - 100'000;
    m.trigger = m.produce;
    m.expire = m.produce + 3'600'000;
    m.retry = 1;
    m.phase = 2;
    m.status = status;
    m.ended = ToEpochMs(kT0) + ended_ms;
    m.seq = seq;
    b.Put(records, topic + id, m.Encode()).PermitUncheckedError();
    b.Put(payloads, topic + id, "payload of " + id).PermitUncheckedError();
    TimePoint purge = FromEpochMs(m.ended) + kRetention;
    b.Put(retention, Str("ns") + TimeKey(purge) + Big(seq), Str("t") + id).PermitUncheckedError();
  };
  ended("acked-2", -20'000, 4, 12);
  ended("acked-1", -30'000, 4, 11);
  ended("acked-3", -20'000, 4, 13);
  ended("deleted", -10'000, 7, 14);
  // "reused" ended (seq 15), then a new message took its id (seq 16, waiting): the old retention
  // entry stays until the purge, and names a record that is no longer the ended one.
  b.Put(retention, Str("ns") + TimeKey(kT0 - Millis(5'000) + kRetention) + Big(15),
        Str("t") + "reused")
      .PermitUncheckedError();
  auto waiting = [&](const std::string& id, uint64_t seq, int64_t trigger_ms) {
    OldMeta m;
    m.produce = ToEpochMs(kT0) - 1'000;
    m.trigger = ToEpochMs(kT0) + trigger_ms;
    m.expire = m.trigger + 3'600'000;
    m.visible = m.trigger;
    m.seq = seq;
    b.Put(records, topic + id, m.Encode()).PermitUncheckedError();
    b.Put(payloads, topic + id, "payload of " + id).PermitUncheckedError();
    b.Put(vis, topic + std::string(1, '\0') + TimeKey(FromEpochMs(m.visible)) + Big(seq),
          Str(id) + m.Encode())
        .PermitUncheckedError();
    std::string one;
    Little<int64_t>(one, 1);
    b.Put(hist, topic + TimeKey(FromEpochMs(m.trigger)), one).PermitUncheckedError();
  };
  waiting("reused", 16, 600'000);
  waiting("waiting", 17, 600'001);
  std::string seq;
  Little<int64_t>(seq, 1'000'000);
  b.Put(meta, Str("ns") + Str("") + "seq", seq).PermitUncheckedError();
  ASSERT_TRUE(db->Write(rocksdb::WriteOptions(), &b).ok());
  for (auto* h : cf) ASSERT_TRUE(db->DestroyColumnFamilyHandle(h).ok());
  ASSERT_TRUE(db->Close().ok());
}

std::string Marker(const fs::path& dir) {
  std::ifstream in(dir / "CHRONOQ");
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

std::unique_ptr<RocksKv> MustOpen(const fs::path& dir) {
  RocksOptions o;
  o.dir = dir.string();
  o.memtable_bytes = size_t{4} << 20;
  o.block_cache_bytes = size_t{4} << 20;
  Result<std::unique_ptr<RocksKv>> kv = RocksKv::Open(o);
  EXPECT_TRUE(kv.has_value()) << kv.error().ToString();
  return kv.has_value() ? std::move(*kv) : nullptr;
}

std::vector<std::string> Ids(const std::vector<core::Message>& msgs) {
  std::vector<std::string> out;
  for (const core::Message& m : msgs) out.push_back(m.record.msg_id);
  return out;
}

TEST(RocksUpgradeTest, AFormat1StoreIsUpgradedInPlaceAndListsItsEndedMessages) {
  testutil::TempDir tmp;
  const fs::path dir = tmp.path();
  ASSERT_NO_FATAL_FAILURE(WriteFormat1Store(dir));

  std::unique_ptr<RocksKv> kv = MustOpen(dir);
  ASSERT_NE(kv, nullptr);
  EXPECT_NE(Marker(dir).find("format " + std::to_string(kFormatVersion) + "\n"), std::string::npos)
      << Marker(dir);
  // One ended entry per retained ended message whose record is still the ended one.
  std::vector<std::string> keys;
  for (auto it = kv->Scan(Cf::kEnded, "", ""); it->Valid(); it->Next()) {
    keys.emplace_back(it->value());
  }
  EXPECT_EQ(keys, (std::vector<std::string>{"acked-1", "acked-2", "acked-3", "deleted"}));

  base::ManualClock clock(kT0);
  base::ManualScheduler sched(&clock);
  MessageStore store(kv.get(), "ns");
  engine::EngineOptions eo;
  eo.retention = kRetention;
  auto engine = std::make_unique<engine::Engine>(eo, &store, &clock, &sched);
  ASSERT_TRUE(engine->Recover().ok());
  testutil::SyncBackend b(engine.get());

  backend::ListRequest acked{"t", MsgStatus::kConsumeOk, 2, ""};
  Result<backend::ListPage> p1 = b.ListMsg(acked);
  ASSERT_TRUE(p1.has_value()) << p1.error().ToString();
  EXPECT_EQ(Ids(p1->messages), (std::vector<std::string>{"acked-1", "acked-2"}));
  EXPECT_EQ(p1->messages[0].record.payload, "payload of acked-1");
  EXPECT_EQ(p1->messages[0].status, MsgStatus::kConsumeOk);
  acked.cursor = p1->next_cursor;
  Result<backend::ListPage> p2 = b.ListMsg(acked);
  ASSERT_TRUE(p2.has_value()) << p2.error().ToString();
  EXPECT_EQ(Ids(p2->messages), std::vector<std::string>{"acked-3"});
  EXPECT_EQ(p2->next_cursor, "");

  Result<backend::ListPage> deleted = b.ListMsg({"t", MsgStatus::kDelete, 100, ""});
  ASSERT_TRUE(deleted.has_value());
  EXPECT_EQ(Ids(deleted->messages), std::vector<std::string>{"deleted"});
  Result<backend::ListPage> waiting = b.ListMsg({"t", MsgStatus::kWaiting, 100, ""});
  ASSERT_TRUE(waiting.has_value());
  EXPECT_EQ(Ids(waiting->messages), (std::vector<std::string>{"reused", "waiting"}));

  // The old store keeps working: its messages are read, ended ones purged at the end of their
  // retention (with their ended entries), in-life ones delivered.
  Result<core::Message> got = b.Get("t", "acked-2");
  ASSERT_TRUE(got.has_value());
  EXPECT_EQ(got->status, MsgStatus::kConsumeOk);
  sched.AdvanceTo(kT0 + kRetention);
  engine->TEST_Purge();
  EXPECT_EQ(b.Get("t", "acked-2").error().code(), Errc::kNotFound);
  size_t left = 0;
  for (auto it = kv->Scan(Cf::kEnded, "", ""); it->Valid(); it->Next()) ++left;
  EXPECT_EQ(left, 0u);
  // Its messages in life are delivered with their payloads (kept in `payloads`, format 4 reads
  // them there), and a change keeps them.
  sched.AdvanceTo(kT0 + Millis(600'001));
  Result<std::vector<core::Message>> pulled = b.Pull("t", 2);
  ASSERT_TRUE(pulled.has_value()) << pulled.error().ToString();
  ASSERT_EQ(pulled->size(), 2u);
  EXPECT_EQ((*pulled)[0].record.payload, "payload of reused");
  EXPECT_EQ((*pulled)[1].record.payload, "payload of waiting");
  Result<core::Message> delivered = b.Get("t", "waiting");
  ASSERT_TRUE(delivered.has_value());
  EXPECT_EQ(delivered->status, MsgStatus::kConsuming);
  EXPECT_EQ(delivered->record.payload, "payload of waiting");
  // A message sent now lives in `sent` beside them.
  ASSERT_TRUE(b.Send(core::NewMessage{"t", "fresh", "new payload", Millis(0), Millis(60'000), 3})
                  .has_value());
  Result<core::Message> fresh = b.Get("t", "fresh");
  ASSERT_TRUE(fresh.has_value());
  EXPECT_EQ(fresh->record.payload, "new payload");
  engine.reset();
  kv.reset();

  // Opening again finds format 2: nothing to upgrade, same answers.
  kv = MustOpen(dir);
  ASSERT_NE(kv, nullptr);
  EXPECT_NE(Marker(dir).find("format " + std::to_string(kFormatVersion) + "\n"), std::string::npos);
}

TEST(RocksUpgradeTest, AStoreOfANewerFormatIsStillRefused) {
  testutil::TempDir tmp;
  const fs::path dir = tmp.path();
  std::ofstream(dir / "CHRONOQ") << "chronoq store\nformat " << kFormatVersion + 1 << "\n";
  RocksOptions o;
  o.dir = dir.string();
  Result<std::unique_ptr<RocksKv>> kv = RocksKv::Open(o);
  ASSERT_FALSE(kv.has_value());
  EXPECT_EQ(kv.error().code(), Errc::kInvalidArgument);
}

}  // namespace
}  // namespace chronoq::storage
