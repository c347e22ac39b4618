// Limits written straight into a cgroup that no runtime owns: a pod's own cgroup (its
// cgroup_parent), resized in place by UpdatePodSandboxResources. cgroup v1 (one hierarchy per
// controller) and v2 (one unified tree) take different files; both are written here, the way the
// runtimes write a container's.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "berth/status.h"

namespace berth {

// Zero or empty: left as it is.
struct CgroupLimits {
  int64_t cpu_shares = 0;
  int64_t cpu_quota = 0;    // -1: no limit
  int64_t cpu_period = 0;   // 0 with a quota: 100000
  int64_t memory = 0;       // bytes
  int64_t memory_swap = 0;  // memory plus swap, bytes (as CRI and cgroup v1 count it)
  std::string cpuset_cpus, cpuset_mems;
  std::vector<std::pair<std::string, int64_t>> hugepages;  // page size ("2MB"), bytes
  std::map<std::string, std::string> unified;              // v2 file -> value
};

// `dir` is the cgroup's path below each hierarchy ("/kubepods/pod1"). A memory limit below what
// the cgroup uses now is FAILED_PRECONDITION (cgroup v1 refuses it too; v2 would reclaim and then
// OOM-kill inside the pod instead). Errors name the file.
Status write_cgroup_limits(const std::string& dir, const CgroupLimits& limits, bool cgroup_v2,
                           const std::string& root = "/sys/fs/cgroup");

// FAILED_PRECONDITION when `limit` is below what cgroup `dir` uses now (the check above, alone:
// for a runtime's update of a container, which cgroup v2 would otherwise answer with an OOM kill).
Status check_memory_limit(const std::string& dir, int64_t limit, bool cgroup_v2,
                          const std::string& root = "/sys/fs/cgroup");

}  // namespace berth
