// UpgradeStore: brings a store written by an older build up to this build's format
// (kFormatVersion, docs/storage-format.md "Changing the format") in place, when it is opened. A
// store is never refused for being old: each step below rewrites or adds what the newer format
// needs, bounded by what that step has to index, not by the backlog.
//
// Steps. 1 -> 2: the `ended` column family, backfilled from the retention index (one entry per
// retained ended message; the others are not read). 2 -> 3: nothing (version 3 record metadata
// and stored topic configurations are new writes; older ones read as before).
//
// Crash safety: every step only adds entries that the newer format derives from the older data,
// so an upgrade cut short is simply run again at the next open (the caller records the new
// version only after UpgradeStore returned OK and its writes are durable).
//
// Thread-safety: run it alone on the store, before anything else uses it.
#pragma once

#include "base/status.h"
#include "storage/kv.h"

namespace chronoq::storage {

// Upgrades from `from_version` (kOldestFormatVersion..kFormatVersion) to kFormatVersion; every
// write is durable when it returns OK. Errors: the store's read and write errors; kCorruption
// for entries that do not decode.
Status UpgradeStore(KvStore* kv, int from_version);

}  // namespace chronoq::storage
