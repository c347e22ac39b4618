// usage_nano_cores = delta cpu ns / delta wall ns * 1e9, kept per object id.
#include "berth/cpu_rate.h"
#include "berth/mutex.h"

namespace berth {

std::optional<uint64_t> CpuRateTracker::update(const std::string& id, uint64_t cpu_usage_ns, int64_t monotonic_ns) {
  MutexLock lock(mu_);
  auto [it, inserted] = last_.try_emplace(id, Last{cpu_usage_ns, monotonic_ns, std::nullopt});
  if (inserted) return std::nullopt;
  Last prev = it->second;
  // The same (cached) sample again: the rate it gave.
  if (monotonic_ns == prev.at_ns && cpu_usage_ns == prev.cpu_ns) return prev.rate;
  if (monotonic_ns <= prev.at_ns) return std::nullopt;
  it->second = Last{cpu_usage_ns, monotonic_ns, std::nullopt};
  // A counter that went backwards means the cgroup was recreated: start over.
  if (cpu_usage_ns < prev.cpu_ns) return std::nullopt;
  long double cores =
      static_cast<long double>(cpu_usage_ns - prev.cpu_ns) / static_cast<long double>(monotonic_ns - prev.at_ns);
  it->second.rate = static_cast<uint64_t>(cores * 1e9L);
  return it->second.rate;
}

void CpuRateTracker::forget(const std::string& id) {
  MutexLock lock(mu_);
  last_.erase(id);
}

void CpuRateTracker::retain(const std::unordered_set<std::string>& live) {
  MutexLock lock(mu_);
  std::erase_if(last_, [&](const auto& entry) { return !live.count(entry.first); });
}

}  // namespace berth
