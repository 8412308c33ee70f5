// Clang thread-safety annotations (no-ops on other compilers), as in leveldb's
// port/thread_annotations.h.
#pragma once

#if defined(__clang__)
#define CQ_THREAD_ANNOTATION_(x) __attribute__((x))
#else
#define CQ_THREAD_ANNOTATION_(x)
#endif

#define CQ_GUARDED_BY(x) CQ_THREAD_ANNOTATION_(guarded_by(x))
#define CQ_PT_GUARDED_BY(x) CQ_THREAD_ANNOTATION_(pt_guarded_by(x))
#define CQ_REQUIRES(...) CQ_THREAD_ANNOTATION_(requires_capability(__VA_ARGS__))
#define CQ_EXCLUDES(...) CQ_THREAD_ANNOTATION_(locks_excluded(__VA_ARGS__))
