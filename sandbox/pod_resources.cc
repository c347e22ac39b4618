// pod_cgroup_limits: the overhead is added to each limit the resources set (a limit the resources
// leave unset stays unset: the overhead alone is no limit for the pod).
#include "pod_resources.h"

namespace berth {

namespace v1 = runtime::v1;

namespace {

Status check(const v1::LinuxContainerResources& r, const std::string& field) {
  if (r.cpu_shares() < 0) return invalid_argument(field + ".cpu_shares: must not be negative");
  if (r.cpu_quota() < -1)
    return invalid_argument(field + ".cpu_quota: must be -1 (no limit), 0 (unchanged) or positive");
  if (r.cpu_period() < 0) return invalid_argument(field + ".cpu_period: must not be negative");
  if (r.memory_limit_in_bytes() < 0) return invalid_argument(field + ".memory_limit_in_bytes: must not be negative");
  if (r.memory_swap_limit_in_bytes() < 0)
    return invalid_argument(field + ".memory_swap_limit_in_bytes: must not be negative");
  if (r.memory_swap_limit_in_bytes() > 0 && r.memory_swap_limit_in_bytes() < r.memory_limit_in_bytes())
    return invalid_argument(field + ".memory_swap_limit_in_bytes: smaller than memory_limit_in_bytes");
  if (r.oom_score_adj() != 0) return invalid_argument(field + ".oom_score_adj: a pod cgroup has no OOM score");
  for (const auto& h : r.hugepage_limits())
    if (h.page_size().empty()) return invalid_argument(field + ".hugepage_limits: page_size must not be empty");
  return ok_status();
}

}  // namespace

Result<CgroupLimits> pod_cgroup_limits(const v1::LinuxContainerResources& overhead,
                                       const v1::LinuxContainerResources& resources) {
  if (Status s = check(overhead, "overhead"); !s.ok()) return s;
  if (Status s = check(resources, "resources"); !s.ok()) return s;
  if (overhead.cpu_period() > 0 && resources.cpu_period() > 0 && overhead.cpu_period() != resources.cpu_period())
    return invalid_argument("overhead.cpu_period: differs from resources.cpu_period, so the quotas cannot be added");
  CgroupLimits l;
  l.cpu_period = resources.cpu_period() > 0 ? resources.cpu_period() : overhead.cpu_period();
  l.cpu_quota = resources.cpu_quota() > 0 ? resources.cpu_quota() + std::max<int64_t>(overhead.cpu_quota(), 0)
                                          : resources.cpu_quota();
  l.cpu_shares = resources.cpu_shares() > 0 ? resources.cpu_shares() + overhead.cpu_shares() : 0;
  l.memory =
      resources.memory_limit_in_bytes() > 0 ? resources.memory_limit_in_bytes() + overhead.memory_limit_in_bytes() : 0;
  l.memory_swap = resources.memory_swap_limit_in_bytes() > 0
                      ? resources.memory_swap_limit_in_bytes() + overhead.memory_limit_in_bytes()
                      : 0;
  l.cpuset_cpus = resources.cpuset_cpus();
  l.cpuset_mems = resources.cpuset_mems();
  for (const auto& h : resources.hugepage_limits())
    l.hugepages.emplace_back(h.page_size(), static_cast<int64_t>(h.limit()));
  l.unified = {resources.unified().begin(), resources.unified().end()};
  return l;
}

nlohmann::json cgroup_limits_json(const CgroupLimits& l) {
  nlohmann::json j = {{"cpu_shares", l.cpu_shares},
                      {"cpu_quota", l.cpu_quota},
                      {"cpu_period", l.cpu_period},
                      {"memory_limit_in_bytes", l.memory},
                      {"memory_swap_limit_in_bytes", l.memory_swap},
                      {"cpuset_cpus", l.cpuset_cpus},
                      {"cpuset_mems", l.cpuset_mems}};
  for (const auto& [size, bytes] : l.hugepages) j["hugepage_limits"][size] = bytes;
  if (!l.unified.empty()) j["unified"] = l.unified;
  return j;
}

}  // namespace berth
