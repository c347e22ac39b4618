// Mutex and MutexLock: std::mutex and a scoped lock of it that carry Clang's thread-safety
// attributes, so that what a mutex guards (BERTH_GUARDED_BY) and which functions need it held
// (BERTH_REQUIRES) are checked when clang compiles the tree (-Wthread-safety, an error there; GCC
// ignores the attributes). libstdc++'s std::mutex and its locks carry none, so the analysis cannot
// see them: every mutex of berth's is a Mutex, locked through a MutexLock.
#pragma once

#include <mutex>

#if defined(__clang__)
#define BERTH_THREAD_ANNOTATION(x) __attribute__((x))
#else
#define BERTH_THREAD_ANNOTATION(x)
#endif
#define BERTH_CAPABILITY(x) BERTH_THREAD_ANNOTATION(capability(x))
#define BERTH_SCOPED_CAPABILITY BERTH_THREAD_ANNOTATION(scoped_lockable)
#define BERTH_GUARDED_BY(x) BERTH_THREAD_ANNOTATION(guarded_by(x))
#define BERTH_REQUIRES(...) BERTH_THREAD_ANNOTATION(requires_capability(__VA_ARGS__))
#define BERTH_ACQUIRE(...) BERTH_THREAD_ANNOTATION(acquire_capability(__VA_ARGS__))
#define BERTH_RELEASE(...) BERTH_THREAD_ANNOTATION(release_capability(__VA_ARGS__))
// For a callback a library runs under a lock the analysis cannot see the caller take.
#define BERTH_NO_THREAD_SAFETY_ANALYSIS BERTH_THREAD_ANNOTATION(no_thread_safety_analysis)

namespace berth {

class BERTH_CAPABILITY("mutex") Mutex {
 public:
  void lock() BERTH_ACQUIRE() { m_.lock(); }
  void unlock() BERTH_RELEASE() { m_.unlock(); }

 private:
  friend class MutexLock;
  std::mutex m_;
};

// Held from its construction to its destruction, or unlocked and locked again in between.
class BERTH_SCOPED_CAPABILITY MutexLock {
 public:
  explicit MutexLock(Mutex& m) BERTH_ACQUIRE(m) : lock_(m.m_) {}
  ~MutexLock() BERTH_RELEASE() {}
  MutexLock(const MutexLock&) = delete;
  MutexLock& operator=(const MutexLock&) = delete;

  void lock() BERTH_ACQUIRE() { lock_.lock(); }
  void unlock() BERTH_RELEASE() { lock_.unlock(); }
  // For std::condition_variable's waits, which release and take it again before they return;
  // callers wait in a loop over the guarded condition, which the analysis then reads under the lock.
  std::unique_lock<std::mutex>& native() { return lock_; }

 private:
  std::unique_lock<std::mutex> lock_;
};

}  // namespace berth
