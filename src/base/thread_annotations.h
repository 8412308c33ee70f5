// Clang thread-safety annotations (https://clang.llvm.org/docs/ThreadSafetyAnalysis.html): with
// -Wthread-safety, clang checks at compile time that data is touched only with its lock held and
// that locks are taken and released in pairs. On other compilers the macros expand to nothing.
//
// The locks they name are base::Mutex and friends (base/mutex.h), which are declared
// capabilities; std::mutex is not (libstdc++ carries no annotations), so data guarded by one
// cannot be checked. scripts/thread-safety.sh builds everything with clang and -Werror
// (docs/testing.md); it runs in `make check`.
//
// Vocabulary (leveldb's port/thread_annotations.h and Abseil's use the same attributes):
//   CQ_GUARDED_BY(mu)         a member read and written only with mu held
//   CQ_PT_GUARDED_BY(mu)      what a pointer member points to, likewise
//   CQ_REQUIRES(mu)           a function called with mu held (it does not take it)
//   CQ_EXCLUDES(mu)           a function that takes mu itself (calling it with mu held deadlocks)
//   CQ_ACQUIRE / CQ_RELEASE / CQ_TRY_ACQUIRE    lock, unlock, try-lock functions
//   CQ_ASSERT_CAPABILITY(mu)  a function after which the analysis takes mu as held
//   CQ_CAPABILITY("mutex")    a class whose objects are locks
//   CQ_SCOPED_CAPABILITY      an RAII class holding a lock from construction to destruction
//   CQ_NO_THREAD_SAFETY_ANALYSIS  a function the analysis skips; say why next to it
#pragma once

#if defined(__clang__)
#define CQ_THREAD_ANNOTATION_(x) __attribute__((x))
#else
#define CQ_THREAD_ANNOTATION_(x)
#endif

#define CQ_CAPABILITY(name) CQ_THREAD_ANNOTATION_(capability(name))
#define CQ_SCOPED_CAPABILITY CQ_THREAD_ANNOTATION_(scoped_lockable)
#define CQ_GUARDED_BY(x) CQ_THREAD_ANNOTATION_(guarded_by(x))
#define CQ_PT_GUARDED_BY(x) CQ_THREAD_ANNOTATION_(pt_guarded_by(x))
#define CQ_REQUIRES(...) CQ_THREAD_ANNOTATION_(requires_capability(__VA_ARGS__))
#define CQ_EXCLUDES(...) CQ_THREAD_ANNOTATION_(locks_excluded(__VA_ARGS__))
#define CQ_ACQUIRE(...) CQ_THREAD_ANNOTATION_(acquire_capability(__VA_ARGS__))
#define CQ_RELEASE(...) CQ_THREAD_ANNOTATION_(release_capability(__VA_ARGS__))
#define CQ_TRY_ACQUIRE(...) CQ_THREAD_ANNOTATION_(try_acquire_capability(__VA_ARGS__))
#define CQ_ASSERT_CAPABILITY(x) CQ_THREAD_ANNOTATION_(assert_capability(x))
#define CQ_NO_THREAD_SAFETY_ANALYSIS CQ_THREAD_ANNOTATION_(no_thread_safety_analysis)
