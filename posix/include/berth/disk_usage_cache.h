// DiskUsageCache: the usage of directory trees (writable layers, the image store) answered from
// memory (RefreshedCache). Stats and ImageFsInfo calls come every few seconds for every
// container, and a walk costs in proportion to the tree, which a container controls; so calls read
// the last figure and one background thread re-walks each tree at most once per refresh interval.
// Only the first request for a tree walks it in the caller's thread (a new tree is small); a tree
// that is large from the start (the image store at berthd's start) is prefetched.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>

#include "berth/file_tree.h"
#include "berth/refreshed_cache.h"
#include "berth/status.h"

namespace berth {

struct CachedDiskUsage {
  DiskUsage usage;
  int64_t measured_at_ns = 0;  // wall clock at the start of the walk that gave the figure
};

class DiskUsageCache {
 public:
  struct Options {
    std::chrono::milliseconds refresh_interval = std::chrono::seconds(10);
    // A tree nobody asked about for this long is dropped (its container was removed).
    std::chrono::milliseconds forget_after = std::chrono::minutes(2);
  };
  explicit DiskUsageCache(Options options);
  DiskUsageCache();
  ~DiskUsageCache();  // stops the refresh thread (a walk under way ends first)
  DiskUsageCache(const DiskUsageCache&) = delete;
  DiskUsageCache& operator=(const DiskUsageCache&) = delete;

  // The last figure for `dir`; NOT_FOUND once it is gone. The first call for a dir walks it now
  // (callers asking meanwhile wait for that walk rather than starting their own).
  Result<CachedDiskUsage> get(const std::string& dir);
  void forget(const std::string& dir);
  // Starts the first walk of `dir` on the refresh thread; a get() meanwhile waits for it.
  void prefetch(const std::string& dir);
  // Walks done so far by the refresh thread (for tests and benchmarks).
  uint64_t background_walks() const;

 private:
  RefreshedCache<CachedDiskUsage> cache_;
};

}  // namespace berth
