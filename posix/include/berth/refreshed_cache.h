// RefreshedCache<V>: values that cost a read of the kernel or a walk of a tree (a writable
// layer's usage, a cgroup's figures), answered from memory. Kubelet asks for them every few
// seconds for every container; so calls read the last value, and one background thread re-measures
// each key at most once per refresh interval, one key at a time. Only the first request for a key
// measures in the caller's thread (callers asking meanwhile wait for it rather than measure too).
// A key nobody asked about for forget_after is dropped. A zero refresh interval measures in every
// call (no thread). A thread that cannot be started leaves calls measuring whenever a value is
// older than the refresh interval.
// prefetch() hands a key's first measurement to the background thread, for keys whose first
// measurement is known to be long (a tree that existed before berthd started); a get() meanwhile
// waits for it.
// A key's first re-measurement comes early by a part of half the interval that its hash picks:
// keys first asked for together (every container's, at the first stats call) are then
// re-measured spread over the interval, not in one burst that lands on the caller's next call
// of the same period and competes with it for the CPU and this cache's lock.
#pragma once

#include <pthread.h>

#include <chrono>
#include <condition_variable>
#include <functional>
#include <unordered_map>
#include <memory>
#include <mutex>
#include <string>
#include <system_error>
#include <thread>

#include "berth/mutex.h"
#include "berth/status.h"

namespace berth {

template <class V>
class RefreshedCache {
 public:
  struct Options {
    std::chrono::milliseconds refresh_interval = std::chrono::seconds(10);
    std::chrono::milliseconds forget_after = std::chrono::minutes(2);
    const char* thread_name = "refresh";
  };
  // A key's value; NOT_FOUND once the thing is gone (a value measured before is kept over other
  // errors, e.g. a tree that moved while it was walked).
  using Measure = std::function<Result<V>(const std::string& key)>;

  RefreshedCache(Options options, Measure measure) : opt_(options), measure_(std::move(measure)) {}
  ~RefreshedCache() {  // stops the refresh thread (a measurement under way ends first)
    {
      MutexLock lock(mu_);
      stopping_ = true;
      changed_.notify_all();
    }
    if (refresher_.joinable()) refresher_.join();
  }
  RefreshedCache(const RefreshedCache&) = delete;
  RefreshedCache& operator=(const RefreshedCache&) = delete;

  Result<V> get(const std::string& key) {
    if (opt_.refresh_interval.count() == 0) return measure_(key);
    MutexLock lock(mu_);
    start_locked();
    auto now = Clock::now();
    Entry& e = entries_[key];
    e.requested_at = now;
    bool stale = e.measured && now - e.measured_at > opt_.refresh_interval;
    if (e.measured && !(stale && thread_failed_)) return e.value;
    if (e.measuring) {
      for (auto it = entries_.find(key); it != entries_.end() && it->second.measuring && !stopping_;
           it = entries_.find(key))
        changed_.wait(lock.native());
    } else {
      e.measuring = true;
      lock.unlock();
      auto r = measure_(key);
      lock.lock();
      Entry& measured = entries_[key];  // entries being measured are never erased
      store(measured, std::move(r));
      measured.measured_at -= first_refresh_lead(key);
    }
    auto it = entries_.find(key);
    if (it == entries_.end() || !it->second.measured) return Status(Code::unavailable, key + " is being measured");
    return it->second.value;
  }

  // Asks the background thread to measure `key` now, unless it is measured or being measured;
  // returns at once. Without a thread (zero interval, or one that failed to start) a later get()
  // measures, as it would have anyway.
  void prefetch(const std::string& key) {
    if (opt_.refresh_interval.count() == 0) return;
    MutexLock lock(mu_);
    start_locked();
    Entry& e = entries_[key];
    e.requested_at = Clock::now();
    // An entry neither measured nor being measured exists only through here (get() measures or
    // waits at once): the background thread takes it up as due.
    if (!e.measured && !e.measuring) changed_.notify_all();
  }

  void forget(const std::string& key) {
    MutexLock lock(mu_);
    auto it = entries_.find(key);
    if (it != entries_.end() && !it->second.measuring) entries_.erase(it);
  }

  // Measurements done so far by the refresh thread (for tests and benchmarks).
  uint64_t background_measurements() const {
    MutexLock lock(mu_);
    return background_;
  }

 private:
  using Clock = std::chrono::steady_clock;
  struct Entry {
    Result<V> value = Status(Code::internal, "not measured yet");
    bool measured = false;
    bool measuring = false;
    Clock::time_point measured_at{};
    Clock::time_point requested_at{};
  };

  void store(Entry& e, Result<V> r) BERTH_REQUIRES(mu_) {
    e.measuring = false;
    e.measured_at = Clock::now();
    if (r.ok() || r.status().code() == Code::not_found || !e.measured || !e.value.ok()) e.value = std::move(r);
    e.measured = true;
    changed_.notify_all();
  }

  // How much earlier than a full interval after its first measurement the key is re-measured.
  Clock::duration first_refresh_lead(const std::string& key) const {
    auto half = std::chrono::duration_cast<Clock::duration>(opt_.refresh_interval) / 2;
    if (half.count() <= 0) return Clock::duration::zero();
    return Clock::duration(static_cast<Clock::rep>(std::hash<std::string>()(key) % static_cast<size_t>(half.count())));
  }

  void start_locked() BERTH_REQUIRES(mu_) {
    if (started_) return;
    started_ = true;
    try {
      refresher_ = std::thread([this] { run(); });
    } catch (const std::system_error&) {
      thread_failed_ = true;
    }
  }

  void run() {
    pthread_setname_np(pthread_self(), opt_.thread_name);
    MutexLock lock(mu_);
    while (!stopping_) {
      auto now = Clock::now();
      auto next = now + opt_.refresh_interval;
      std::string due;
      bool have_due = false;
      for (auto it = entries_.begin(); it != entries_.end();) {
        Entry& e = it->second;
        if (!e.measuring && now - e.requested_at > opt_.forget_after) {
          it = entries_.erase(it);
          continue;
        }
        auto at = e.measured_at + opt_.refresh_interval;
        if (!e.measuring && !have_due && (!e.measured || at <= now)) {
          due = it->first;
          have_due = true;
        }
        if (e.measured && !e.measuring && at > now && at < next) next = at;
        ++it;
      }
      if (!have_due) {
        changed_.wait_until(lock.native(), next);
        continue;
      }
      entries_[due].measuring = true;
      lock.unlock();
      auto r = measure_(due);
      lock.lock();
      ++background_;
      if (auto it = entries_.find(due); it != entries_.end()) store(it->second, std::move(r));
    }
  }

  Options opt_;
  Measure measure_;
  mutable Mutex mu_;
  std::condition_variable changed_;  // a measurement ended, or the cache is closing
  // Unordered: the keys are long paths that share most of their prefix, which an ordered map
  // compares at every level of every look-up.
  std::unordered_map<std::string, Entry> entries_ BERTH_GUARDED_BY(mu_);
  std::thread refresher_;  // started under mu_, joined by the destructor
  bool started_ BERTH_GUARDED_BY(mu_) = false;
  bool thread_failed_ BERTH_GUARDED_BY(mu_) = false;
  bool stopping_ BERTH_GUARDED_BY(mu_) = false;
  uint64_t background_ BERTH_GUARDED_BY(mu_) = 0;
};

}  // namespace berth
