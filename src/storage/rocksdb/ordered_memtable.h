// OrderedMemTable: chronoq's memtable representation for RocksDB (a skip list, one writer and
// lock-free readers, as RocksDB's own), built without RocksDB's debug assertions.
//
// Why: Debian's librocksdb is built with assertions on, and its skip list checks after every
// insert that the insert position brackets the key at every level: about 16 more key comparisons
// per insert than the search itself, each a call through the internal-key comparator. A send
// inserts two or three keys (docs/benchmarks.md, "Third session: the send path"). This one keeps
// RocksDB's per-prefix insert hints (a remembered position per topic: a key inserted after the
// previous one of its prefix costs one or two comparisons) and nothing else.
//
// Thread-safety: as MemTableRep requires: one writer at a time (allow_concurrent_memtable_write
// is off), any number of concurrent readers, lock-free.
#pragma once

#include <rocksdb/memtablerep.h>

#include <memory>

namespace chronoq::storage {

std::shared_ptr<rocksdb::MemTableRepFactory> NewOrderedMemTableFactory();

}  // namespace chronoq::storage
