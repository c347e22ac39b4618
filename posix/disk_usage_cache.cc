// DiskUsageCache: a RefreshedCache whose measurement is a walk of the tree, stamped with the
// wall clock at the walk's start (the figure holds at least every change made before it).
#include "berth/disk_usage_cache.h"

#include "berth/wall_clock.h"

namespace berth {

namespace {

Result<CachedDiskUsage> walk(const std::string& dir) {
  int64_t started = wall_clock_ns();
  auto u = measure_disk_usage(dir);
  if (!u.ok()) return u.status();
  return CachedDiskUsage{*u, started};
}

}  // namespace

DiskUsageCache::DiskUsageCache(Options options)
    : cache_({.refresh_interval = options.refresh_interval,
              .forget_after = options.forget_after,
              .thread_name = "disk usage"},
             walk) {}
DiskUsageCache::DiskUsageCache() : DiskUsageCache(Options{}) {}
DiskUsageCache::~DiskUsageCache() = default;

Result<CachedDiskUsage> DiskUsageCache::get(const std::string& dir) { return cache_.get(dir); }
void DiskUsageCache::forget(const std::string& dir) { cache_.forget(dir); }
void DiskUsageCache::prefetch(const std::string& dir) { cache_.prefetch(dir); }
uint64_t DiskUsageCache::background_walks() const { return cache_.background_measurements(); }

}  // namespace berth
