// DiskUsageCache; see disk_usage_cache.h. A thread that cannot be started leaves the cache
// measuring in the callers' threads whenever a figure is older than the refresh interval.
#include "berth/disk_usage_cache.h"

#include <pthread.h>

#include <condition_variable>
#include <map>
#include <mutex>
#include <system_error>
#include <thread>
#include <vector>

#include "berth/wall_clock.h"

namespace berth {

namespace {
using Clock = std::chrono::steady_clock;
}  // namespace

struct DiskUsageCache::Impl {
  struct Entry {
    Result<CachedDiskUsage> figure = internal_error("not measured yet");
    bool measured = false;
    bool walking = false;
    Clock::time_point measured_at{};
    Clock::time_point requested_at{};
  };

  Options opt;
  mutable std::mutex mu;
  std::condition_variable changed;  // a walk ended, or the cache is closing
  std::map<std::string, Entry> entries;
  std::thread refresher;
  bool started = false, thread_failed = false, stopping = false;
  uint64_t background_walks = 0;

  // Stamped with the walk's start: the figure holds at least every change made before it.
  static Result<CachedDiskUsage> walk(const std::string& dir) {
    int64_t started = wall_clock_ns();
    auto u = measure_disk_usage(dir);
    if (!u.ok()) return u.status();
    return CachedDiskUsage{*u, started};
  }

  // Stores a walk's result. A tree moved while it was walked keeps its previous figure.
  void store(Entry& e, Result<CachedDiskUsage> r) {
    e.walking = false;
    e.measured_at = Clock::now();
    if (r.ok() || r.status().code() == Code::not_found || !e.measured || !e.figure.ok()) e.figure = std::move(r);
    e.measured = true;
    changed.notify_all();
  }

  void start_locked() {
    if (started) return;
    started = true;
    try {
      refresher = std::thread([this] { run(); });
    } catch (const std::system_error&) {
      thread_failed = true;
    }
  }

  void run() {
    pthread_setname_np(pthread_self(), "disk usage");
    std::unique_lock lock(mu);
    while (!stopping) {
      auto now = Clock::now();
      auto next = now + opt.refresh_interval;
      std::string due;
      for (auto it = entries.begin(); it != entries.end();) {
        Entry& e = it->second;
        if (!e.walking && now - e.requested_at > opt.forget_after) {
          it = entries.erase(it);
          continue;
        }
        auto at = e.measured_at + opt.refresh_interval;
        if (e.measured && !e.walking && at <= now && due.empty()) due = it->first;
        if (e.measured && !e.walking && at > now && at < next) next = at;
        ++it;
      }
      if (due.empty()) {
        changed.wait_until(lock, next);
        continue;
      }
      entries[due].walking = true;
      lock.unlock();
      auto r = walk(due);
      lock.lock();
      ++background_walks;
      if (auto it = entries.find(due); it != entries.end()) store(it->second, std::move(r));
    }
  }
};

DiskUsageCache::DiskUsageCache(Options options) : impl_(std::make_unique<Impl>()) { impl_->opt = options; }
DiskUsageCache::DiskUsageCache() : DiskUsageCache(Options{}) {}

DiskUsageCache::~DiskUsageCache() {
  {
    std::lock_guard lock(impl_->mu);
    impl_->stopping = true;
    impl_->changed.notify_all();
  }
  if (impl_->refresher.joinable()) impl_->refresher.join();
}

Result<CachedDiskUsage> DiskUsageCache::get(const std::string& dir) {
  std::unique_lock lock(impl_->mu);
  impl_->start_locked();
  auto now = Clock::now();
  Impl::Entry& e = impl_->entries[dir];
  e.requested_at = now;
  bool stale = e.measured && now - e.measured_at > impl_->opt.refresh_interval;
  if (e.measured && !(stale && impl_->thread_failed)) return e.figure;
  if (e.walking) {
    impl_->changed.wait(lock, [&] {
      auto it = impl_->entries.find(dir);
      return it == impl_->entries.end() || !it->second.walking || impl_->stopping;
    });
  } else {
    e.walking = true;
    lock.unlock();
    auto r = Impl::walk(dir);
    lock.lock();
    // The entry is still there: entries being walked are never erased.
    impl_->store(impl_->entries[dir], std::move(r));
  }
  auto it = impl_->entries.find(dir);
  if (it == impl_->entries.end() || !it->second.measured) return Status(Code::unavailable, "usage of " + dir + " is being measured");
  return it->second.figure;
}

void DiskUsageCache::forget(const std::string& dir) {
  std::lock_guard lock(impl_->mu);
  auto it = impl_->entries.find(dir);
  if (it != impl_->entries.end() && !it->second.walking) impl_->entries.erase(it);
}

uint64_t DiskUsageCache::background_walks() const {
  std::lock_guard lock(impl_->mu);
  return impl_->background_walks;
}

}  // namespace berth
