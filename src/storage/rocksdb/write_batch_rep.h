// WriteBatchRep: a rocksdb::WriteBatch written in its serialized form (RocksDB's WAL record
// format), handed to RocksDB through its public WriteBatch(std::string&&) constructor.
//
// Why: WriteBatch::Put costs about 500 instructions per record in Debian's build (a virtual
// call to find the column family's id, a timestamp-size lookup through its comparator, a
// save point for a size limit we do not set, the content flags, a std::string append per
// field); a group commit writes about 17 records. Writing the bytes through a pointer into a
// buffer sized once costs a tenth of that (docs/benchmarks.md, "Eighth session: the store's
// write").
//
// The format (RocksDB's db/write_batch.cc, stable since LevelDB): a 12-byte header (the sequence
// number, fixed64, 0 until RocksDB assigns it; the record count, fixed32; both little-endian),
// then per record a type tag, for a column family other than the default its id (varint32), the
// key and, but for a delete, the value (each a varint32 length and the bytes).
// write_batch_rep_test.cc checks it byte for byte against WriteBatch's own Put, Delete and Merge
// for every kind of record written here, so that a RocksDB that changes it fails that test.
#pragma once

#include <rocksdb/write_batch.h>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

namespace chronoq::storage {

// The records are written into a buffer of its own, kept from one batch to the next (Clear), and
// copied into the WriteBatch's string once (Release): a string sized in advance would be filled
// with zeros first, which costs about as much as writing the records.
class WriteBatchRep {
 public:
  // Room for `reserve` bytes, header included: a caller that reserves at least Bound() per
  // record never makes the buffer grow (it still grows, by doubling, when asked for more).
  explicit WriteBatchRep(size_t reserve = 0) { Clear(reserve); }
  // Empty again (the header alone), with room for `reserve` bytes.
  void Clear(size_t reserve);

  // The most bytes one record of a key and a value of these sizes takes.
  static constexpr size_t Bound(size_t key, size_t value) { return 16 + key + value; }

  void Put(uint32_t cf_id, std::string_view key, std::string_view value);
  void Delete(uint32_t cf_id, std::string_view key);
  void Merge(uint32_t cf_id, std::string_view key, std::string_view value);

  uint32_t count() const { return count_; }
  size_t size() const { return used_; }
  size_t capacity() const { return capacity_; }

  // The batch of the records written (this is left empty, its room kept).
  rocksdb::WriteBatch Release();

 private:
  // Appends a record's tag, column family id (unless the default one) and key, with room for
  // `value_size` bytes more; returns where the record ends so far.
  char* Record(uint8_t default_tag, uint8_t cf_tag, uint32_t cf_id, std::string_view key,
               size_t value_size);

  void Grow(size_t bytes);

  std::unique_ptr<char[]> buf_;  // the first used_ bytes are the batch
  size_t capacity_ = 0;
  size_t used_ = 0;
  uint32_t count_ = 0;
};

}  // namespace chronoq::storage
