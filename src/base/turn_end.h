// Work at the end of an event loop's turn. A thread that runs an event loop (an HTTP worker) can
// offer to run work once the events it has ready now are handled: a store then writes the
// batches of all the requests of one turn as one group, on that thread, instead of waking a
// writer thread per group (storage/rocksdb/group_commit.cc, docs/benchmarks.md "Issue 20").
//
// Thread-safety: everything here is per thread. The loop must never block on work it posted
// (it would never run).
#pragma once

#include "base/unique_function.h"

namespace chronoq::base {

// How the calling thread's loop runs a function after its ready events: set once by the loop's
// thread before it runs, cleared (nullptr) when it stops. The poster must not run `fn` inline.
void SetTurnEndPoster(UniqueFunction<void(UniqueFunction<void()>)> poster);

// Whether the calling thread runs a loop that takes work for its turn's end.
bool HasTurnEnd();

// Runs `fn` at the end of the calling thread's current turn. REQUIRES: HasTurnEnd().
void RunAtTurnEnd(UniqueFunction<void()> fn);

}  // namespace chronoq::base
