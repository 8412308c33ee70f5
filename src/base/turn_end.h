// Work at the end of an event loop's turn. A thread that runs an event loop (an HTTP worker) can
// offer to run work once the events it has ready now are handled: a store then writes the
// batches of all the requests of one turn as one group, on that thread, instead of waking a
// writer thread per group (storage/rocksdb/group_commit.cc, docs/benchmarks.md "Issue 20").
// A long turn (many connections ready at once) would hold every answer of the turn until its
// end, so the work can also ask to run sooner: the loop then runs it at its next safe point
// (between two requests, no lock held).
//
// Thread-safety: everything here is per thread. The loop must never block on work it was given
// (it would never run).
#pragma once

#include "base/unique_function.h"

namespace chronoq::base {

// How the calling thread's loop runs a function after its ready events: set once by the loop's
// thread before it runs, cleared (nullptr) when it stops. The poster must not run `fn` inline.
void SetTurnEndPoster(UniqueFunction<void(UniqueFunction<void()>)> poster);

// Whether the calling thread runs a loop that takes work for its turn's end.
bool HasTurnEnd();

// Runs `fn` at the end of the calling thread's current turn, or at its next safe point when
// something asked for it (EndTurnSoon). REQUIRES: HasTurnEnd().
void RunAtTurnEnd(UniqueFunction<void()> fn);

// Asks the loop to run the work given for its turn's end at its next safe point already.
void EndTurnSoon();

// Called by the loop at a safe point (no lock held, between two requests): runs the work given
// for the turn's end now if EndTurnSoon asked for it.
void TurnSafePoint();

}  // namespace chronoq::base
