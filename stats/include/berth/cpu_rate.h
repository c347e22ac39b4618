// Turns cumulative cpu usage into usage_nano_cores (cores * 1e9) from the previous sample of the
// same object, as CRI's CpuUsage asks. Thread-safe; one tracker per kind of object.
#pragma once

#include <cstdint>
#include <mutex>
#include <optional>
#include <string>
#include <unordered_map>
#include <unordered_set>

#include "berth/mutex.h"

namespace berth {

class CpuRateTracker {
 public:
  // Records this sample and returns the rate since the previous one; nullopt on the first sample
  // or when time did not move forward. `monotonic_ns`: CLOCK_MONOTONIC when the sample was read
  // (the wall clock may be set back or forward between two samples).
  std::optional<uint64_t> update(const std::string& id, uint64_t cpu_usage_ns, int64_t monotonic_ns);
  void forget(const std::string& id);
  // Forgets every object not in `live`: without it the tracker would keep one entry for every
  // container and pod ever sampled, for the daemon's whole life.
  void retain(const std::unordered_set<std::string>& live);

 private:
  struct Last {
    uint64_t cpu_ns;
    int64_t at_ns;
    std::optional<uint64_t> rate;  // from the sample before: a sample read twice gives it again
  };
  Mutex mu_;
  std::unordered_map<std::string, Last> last_ BERTH_GUARDED_BY(mu_);
};

}  // namespace berth
