// Mutex: a std::mutex-compatible lock that spins briefly before sleeping (glibc's adaptive
// mutex). For short critical sections contended by a few threads, such as the engine's shard
// locks, it avoids most futex sleeps and wake-ups, which cost a context switch each.
// Thread-safe; not recursive.
#pragma once

#include <pthread.h>

namespace chronoq::base {

class Mutex {
 public:
  Mutex() {
    pthread_mutexattr_t attr;
    pthread_mutexattr_init(&attr);
    pthread_mutexattr_settype(&attr, PTHREAD_MUTEX_ADAPTIVE_NP);
    pthread_mutex_init(&mu_, &attr);
    pthread_mutexattr_destroy(&attr);
  }
  ~Mutex() { pthread_mutex_destroy(&mu_); }
  Mutex(const Mutex&) = delete;
  Mutex& operator=(const Mutex&) = delete;

  void lock() { pthread_mutex_lock(&mu_); }
  void unlock() { pthread_mutex_unlock(&mu_); }
  bool try_lock() { return pthread_mutex_trylock(&mu_) == 0; }

 private:
  pthread_mutex_t mu_;
};

}  // namespace chronoq::base
