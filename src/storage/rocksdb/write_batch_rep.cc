#include "storage/rocksdb/write_batch_rep.h"

#include <algorithm>
#include <cstring>
#include <utility>

#include "base/check.h"

namespace chronoq::storage {
namespace {

// RocksDB's record types (db/dbformat.h, ValueType): one tag for a record of the default column
// family, another for one that names its column family.
constexpr uint8_t kTypeDeletion = 0x0;
constexpr uint8_t kTypeValue = 0x1;
constexpr uint8_t kTypeMerge = 0x2;
constexpr uint8_t kTypeColumnFamilyDeletion = 0x4;
constexpr uint8_t kTypeColumnFamilyValue = 0x5;
constexpr uint8_t kTypeColumnFamilyMerge = 0x6;

constexpr size_t kHeader = 12;          // sequence (fixed64) and count (fixed32)
constexpr size_t kKeptBytes = 1 << 20;  // the most room Clear keeps beyond what it is asked for

char* PutVarint32(char* p, uint32_t v) {
  while (v >= 0x80) {
    *p++ = static_cast<char>(v | 0x80);
    v >>= 7;
  }
  *p++ = static_cast<char>(v);
  return p;
}

char* PutBytes(char* p, std::string_view bytes) {
  p = PutVarint32(p, static_cast<uint32_t>(bytes.size()));
  if (!bytes.empty()) std::memcpy(p, bytes.data(), bytes.size());
  return p + bytes.size();
}

}  // namespace

void WriteBatchRep::Clear(size_t reserve) {
  used_ = 0;
  reserve = std::max(reserve, kHeader);
  // A buffer kept after a large batch (many or large payloads) goes back to the heap.
  if (capacity_ < reserve || capacity_ > std::max(reserve, kKeptBytes)) Grow(reserve);
  std::memset(buf_.get(), 0, kHeader);
  used_ = kHeader;
  count_ = 0;
}

void WriteBatchRep::Grow(size_t bytes) {
  std::unique_ptr<char[]> bigger(new char[bytes]);  // uninitialized
  if (used_ > 0) std::memcpy(bigger.get(), buf_.get(), used_);
  buf_ = std::move(bigger);
  capacity_ = bytes;
}

char* WriteBatchRep::Record(uint8_t default_tag, uint8_t cf_tag, uint32_t cf_id,
                            std::string_view key, size_t value_size) {
  // RocksDB's lengths are 32-bit (WriteBatch::Put refuses more); chronoq's limits on payloads
  // and names keep every field far below.
  CQ_CHECK(key.size() <= UINT32_MAX && value_size <= UINT32_MAX,
           "a key or value of 4 GiB or more for the store");
  const size_t most = Bound(key.size(), value_size);
  if (capacity_ - used_ < most) Grow(std::max(capacity_ * 2, used_ + most));
  char* p = buf_.get() + used_;
  if (cf_id == 0) {
    *p++ = static_cast<char>(default_tag);
  } else {
    *p++ = static_cast<char>(cf_tag);
    p = PutVarint32(p, cf_id);
  }
  ++count_;
  return PutBytes(p, key);
}

void WriteBatchRep::Put(uint32_t cf_id, std::string_view key, std::string_view value) {
  char* p = Record(kTypeValue, kTypeColumnFamilyValue, cf_id, key, value.size());
  used_ = static_cast<size_t>(PutBytes(p, value) - buf_.get());
}

void WriteBatchRep::Delete(uint32_t cf_id, std::string_view key) {
  char* p = Record(kTypeDeletion, kTypeColumnFamilyDeletion, cf_id, key, 0);
  used_ = static_cast<size_t>(p - buf_.get());
}

void WriteBatchRep::Merge(uint32_t cf_id, std::string_view key, std::string_view value) {
  char* p = Record(kTypeMerge, kTypeColumnFamilyMerge, cf_id, key, value.size());
  used_ = static_cast<size_t>(PutBytes(p, value) - buf_.get());
}

rocksdb::WriteBatch WriteBatchRep::Release() {
  for (int i = 0; i < 4; ++i) buf_[8 + i] = static_cast<char>((count_ >> (8 * i)) & 0xff);
  rocksdb::WriteBatch batch(std::string(buf_.get(), used_));
  Clear(0);
  return batch;
}

}  // namespace chronoq::storage
