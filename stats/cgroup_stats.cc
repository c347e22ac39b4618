// cgroup v1 and v2 readings mapped onto one CgroupSample. The figures follow what kubelet's
// summary API expects (cAdvisor's definitions): working set = usage - inactive_file.
#include "berth/cgroup_stats.h"

#include <linux/magic.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <time.h>

#include <cerrno>

#include "kernel_files.h"

namespace berth {

CgroupLayout detect_cgroup_layout(const std::string& cgroup_root) {
  struct statfs fs {};
  if (::statfs(cgroup_root.c_str(), &fs) == 0 && fs.f_type == CGROUP2_SUPER_MAGIC)
    return CgroupLayout::v2;
  return CgroupLayout::v1;
}

static int64_t realtime_ns() {
  timespec ts{};
  ::clock_gettime(CLOCK_REALTIME, &ts);
  return static_cast<int64_t>(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec;
}

// v1 reports "no limit" as a page-rounded LONG_MAX; anything this large is no limit.
static uint64_t limit_or_zero(uint64_t v) { return v >= (uint64_t{1} << 62) ? 0 : v; }

static uint64_t get(const std::map<std::string, uint64_t>& m, const char* key) {
  auto it = m.find(key);
  return it == m.end() ? 0 : it->second;
}

static bool exists(const std::string& path) {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0;
}

static Result<CgroupSample> read_v1(const CgroupLocation& w) {
  namespace f = kernel_files;
  const std::string mem = w.cgroup_root + "/memory" + w.relative_path;
  const std::string cpu = w.cgroup_root + "/cpuacct" + w.relative_path;
  if (!exists(mem) && !exists(cpu))
    return Status(Code::not_found, "cgroup " + w.relative_path + " does not exist");
  CgroupSample s;
  s.timestamp_ns = realtime_ns();
  s.cpu_usage_ns = f::read_u64(cpu + "/cpuacct.usage").value_or(0);
  s.memory_usage_bytes = f::read_u64(mem + "/memory.usage_in_bytes").value_or(0);
  s.memory_limit_bytes = limit_or_zero(f::read_u64(mem + "/memory.limit_in_bytes").value_or(0));
  auto st = f::read_key_values(mem + "/memory.stat");
  // The total_ keys include descendants: a pod's cgroup holds its containers' cgroups.
  uint64_t inactive_file = get(st, "total_inactive_file");
  s.memory_working_set_bytes = s.memory_usage_bytes > inactive_file ? s.memory_usage_bytes - inactive_file : 0;
  s.memory_rss_bytes = get(st, "total_rss");
  s.page_faults = get(st, "total_pgfault");
  s.major_page_faults = get(st, "total_pgmajfault");
  if (auto memsw = f::read_u64(mem + "/memory.memsw.usage_in_bytes")) {
    s.swap_usage_bytes = *memsw > s.memory_usage_bytes ? *memsw - s.memory_usage_bytes : 0;
    uint64_t memsw_limit = limit_or_zero(f::read_u64(mem + "/memory.memsw.limit_in_bytes").value_or(0));
    if (memsw_limit != 0 && memsw_limit > s.memory_limit_bytes)
      s.swap_limit_bytes = memsw_limit - s.memory_limit_bytes;
  }
  s.pids_current = f::read_u64(w.cgroup_root + "/pids" + w.relative_path + "/pids.current");
  return s;
}

static Result<CgroupSample> read_v2(const CgroupLocation& w) {
  namespace f = kernel_files;
  const std::string dir = w.cgroup_root + w.relative_path;
  if (!exists(dir)) return Status(Code::not_found, "cgroup " + w.relative_path + " does not exist");
  CgroupSample s;
  s.timestamp_ns = realtime_ns();
  s.cpu_usage_ns = get(f::read_key_values(dir + "/cpu.stat"), "usage_usec") * 1000;
  s.memory_usage_bytes = f::read_u64(dir + "/memory.current").value_or(0);
  s.memory_limit_bytes = limit_or_zero(f::read_u64(dir + "/memory.max").value_or(0));
  auto st = f::read_key_values(dir + "/memory.stat");
  uint64_t inactive_file = get(st, "inactive_file");
  s.memory_working_set_bytes = s.memory_usage_bytes > inactive_file ? s.memory_usage_bytes - inactive_file : 0;
  s.memory_rss_bytes = get(st, "anon");
  s.page_faults = get(st, "pgfault");
  s.major_page_faults = get(st, "pgmajfault");
  s.swap_usage_bytes = f::read_u64(dir + "/memory.swap.current");
  if (s.swap_usage_bytes) s.swap_limit_bytes = limit_or_zero(f::read_u64(dir + "/memory.swap.max").value_or(0));
  s.pids_current = f::read_u64(dir + "/pids.current");
  return s;
}

Result<CgroupSample> read_cgroup_sample(const CgroupLocation& where) {
  if (where.relative_path.empty() || where.relative_path[0] != '/')
    return invalid_argument("cgroup path '" + where.relative_path + "' is not absolute");
  return where.layout == CgroupLayout::v2 ? read_v2(where) : read_v1(where);
}

uint64_t memory_available_bytes(const CgroupSample& s) {
  if (s.memory_limit_bytes == 0) return 0;
  return s.memory_limit_bytes > s.memory_working_set_bytes ? s.memory_limit_bytes - s.memory_working_set_bytes : 0;
}

}  // namespace berth
