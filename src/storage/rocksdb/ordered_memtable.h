// OrderedMemTable: chronoq's memtable representation for RocksDB (a skip list, one writer and
// lock-free readers, as RocksDB's own), built without RocksDB's debug assertions.
//
// Why: Debian's librocksdb is built with assertions on, and its skip list checks after every
// insert that the insert position brackets the key at every level: about 16 more key comparisons
// per insert than the search itself, each a call through the internal-key comparator. A send
// inserts two or three keys (docs/benchmarks.md, "Third session: the send path"). This one keeps
// per-prefix insert hints (a remembered position per topic: a key inserted after the previous
// one of its prefix costs one or two comparisons), its own (HintPrefixFn) or RocksDB's
// (memtable_insert_with_hint_prefix_extractor), and nothing else.
//
// Thread-safety: as MemTableRep requires: one writer at a time (allow_concurrent_memtable_write
// is off), any number of concurrent readers, lock-free.
//
// Uses RocksDB's public API only (rocksdb/memtablerep.h): nodes come from MemTableRep::Allocate
// (the memtable's arena, in chunks of 8 KB carved by the rep), keys are ordered by RocksDB's
// comparator (or, when a check at construction finds it bytewise, by the rep itself), point reads
// go through the default MemTableRep::Get (no LookupKey needed), and iterators never touch
// RocksDB's Arena (ordered_memtable.cc: where they live, and why the default Get's iterator, which
// RocksDB 7.8 never deletes, leaks nothing).
#pragma once

#include <rocksdb/memtablerep.h>

#include <cstddef>
#include <memory>
#include <string_view>

namespace chronoq::storage {

// The length of a user key's prefix whose inserts share a remembered position (0: none); what
// RocksDB's memtable_insert_with_hint_prefix_extractor does, without its per-insert virtual calls
// and hash of the prefix (the last prefix used is compared first). With none, every insert
// starts where the previous one ended. A prefix must delimit itself: a key that begins with the
// bytes of another key's prefix has that prefix (length-prefixed fields do).
using HintPrefixFn = size_t (*)(std::string_view user_key);

std::shared_ptr<rocksdb::MemTableRepFactory> NewOrderedMemTableFactory(
    HintPrefixFn hint_prefix = nullptr);

// Iterators' memory taken from the heap and not given back yet (in use, or cached for reuse by
// a thread): bounded by the iterators alive at once plus each thread's cache, whatever the
// number of reads made. For tests.
size_t OrderedMemTableHeapIterators();

}  // namespace chronoq::storage
