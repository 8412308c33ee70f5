// Internal to src/grpc_api: the nghttp2 engine's allocator for nghttp2's sessions (h2_session.cc,
// nghttp2_session_server_new3). nghttp2 allocates and frees about 18 blocks per unary call (the
// stream, the answer's frames and their header copies, the decoded literal headers); through
// the general allocator that cost about 40 instructions each (docs/benchmarks.md). Here each
// thread keeps a few freed blocks of each size class for the next ones. No nghttp2 type is named
// here (nghttp2_mem is an anonymous struct's typedef, which cannot be declared).
//
// Thread-safety: any thread; each keeps its own blocks (a block freed on another thread than
// the one that allocated it goes to that thread's list, or back to the general allocator).
#pragma once

namespace chronoq::grpc_api {

// The allocator to create nghttp2's sessions with, an nghttp2_mem* (static: outlives them).
// Under AddressSanitizer every block goes to the general allocator (its checks see every block).
void* H2Mem();

}  // namespace chronoq::grpc_api
