// Small heap blocks kept per thread for reuse, behind the allocator hooks of C libraries that
// allocate a lot per request (nghttp2's sessions: grpc_api/h2_session.cc and the bench's HTTP/2
// client take an nghttp2_mem of these four). A block carries its size class (64 B to 2 KiB) in a
// 16-byte header; a freed one goes to its thread's list of its class (up to 32 per class), and
// the next allocation of that class takes it back: about 15 instructions instead of the general
// allocator's 40 per call (docs/benchmarks.md). Larger blocks go to the general allocator.
// Under AddressSanitizer every block does (its checks see every block).
//
// Thread-safety: any thread; a block freed on another thread than the one that allocated it goes
// to that thread's list (or, at its exit, to the general allocator).
#pragma once

#include <cstddef>

namespace chronoq::base::block_cache {

// malloc, free, calloc and realloc with a user pointer last (unused), as C libraries' hooks
// take them.
void* Malloc(size_t size, void* user);
void Free(void* ptr, void* user);
void* Calloc(size_t n, size_t size, void* user);
void* Realloc(void* ptr, size_t size, void* user);

}  // namespace chronoq::base::block_cache
