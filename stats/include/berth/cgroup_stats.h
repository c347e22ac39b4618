// Reads a cgroup's cpu, memory, swap, pids, block IO and pressure (PSI) figures straight from
// cgroupfs (v1 controllers or the v2 unified hierarchy), so stats for many containers cost file
// reads, never a process.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "berth/cgroup_io.h"
#include "berth/cgroup_pressure.h"
#include "berth/status.h"

namespace berth {

enum class CgroupLayout { v1, v2 };

// v2 only when /sys/fs/cgroup itself is cgroup2; a hybrid host (v1 controllers plus a v2 mount
// at /sys/fs/cgroup/unified) counts as v1, because that is where the controllers are.
CgroupLayout detect_cgroup_layout(const std::string& cgroup_root = "/sys/fs/cgroup");

struct CgroupSample {
  int64_t timestamp_ns = 0;  // CLOCK_REALTIME when read (what CRI's timestamps are)
  // CLOCK_MONOTONIC when read: rates are taken over it, so a wall clock set back or forward
  // (NTP's step, an operator's date) never yields no rate or a wrong one.
  int64_t monotonic_ns = 0;
  uint64_t cpu_usage_ns = 0;
  // When cpu_usage_ns was read: the cpu figure may be read again, later than the rest (a caller
  // that samples twice a second apart, as crictl stats does, must see it move).
  int64_t cpu_timestamp_ns = 0;
  int64_t cpu_monotonic_ns = 0;
  uint64_t memory_usage_bytes = 0;
  uint64_t memory_working_set_bytes = 0;  // usage minus inactive file, floored at 0
  uint64_t memory_rss_bytes = 0;
  uint64_t memory_limit_bytes = 0;  // 0: no limit
  uint64_t page_faults = 0;
  uint64_t major_page_faults = 0;
  std::optional<uint64_t> swap_usage_bytes;  // absent when the host does not account swap
  uint64_t swap_limit_bytes = 0;             // 0: no limit
  std::optional<uint64_t> pids_current;
  // Summed over devices; absent when neither io.stat (v2) nor the blkio throttle files (v1) read.
  std::optional<IoCounters> io;
  // Absent when the kernel keeps no PSI for the cgroup (no CONFIG_PSI, psi=0, cgroup.pressure set
  // to 0, or a v1 host without the cgroup2 mount at <root>/unified).
  std::optional<Pressure> cpu_pressure;
  std::optional<Pressure> memory_pressure;
  std::optional<Pressure> io_pressure;
};

// Where a cgroup lives: its path relative to the hierarchy root ("/kubepods/pod…/<id>").
struct CgroupLocation {
  std::string relative_path;
  std::string cgroup_root = "/sys/fs/cgroup";
  CgroupLayout layout = CgroupLayout::v1;
};

// Fails with not_found when the cgroup is gone (a container that just exited).
Result<CgroupSample> read_cgroup_sample(const CgroupLocation& where);

// Cumulative cpu time of a cgroup and when it was read: one small file, cheap enough per call.
struct CpuReading {
  int64_t timestamp_ns = 0;  // CLOCK_REALTIME
  int64_t monotonic_ns = 0;
  uint64_t usage_ns = 0;
};
Result<CpuReading> read_cgroup_cpu(const CgroupLocation& where);

// Available memory as kubelet computes it: limit minus working set when a limit is set, else 0.
uint64_t memory_available_bytes(const CgroupSample& s);

}  // namespace berth
