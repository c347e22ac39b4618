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
  if (::statfs(cgroup_root.c_str(), &fs) == 0 && fs.f_type == CGROUP2_SUPER_MAGIC) return CgroupLayout::v2;
  return CgroupLayout::v1;
}

static int64_t clock_ns(clockid_t clock) {
  timespec ts{};
  ::clock_gettime(clock, &ts);
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

static std::optional<Pressure> read_pressure(const std::string& path) {
  auto text = kernel_files::read_text(path);  // EOPNOTSUPP when cgroup.pressure is 0
  return text ? parse_pressure(*text) : std::nullopt;
}

// PSI is no controller: every cgroup2 directory has the files. A hybrid host's v1 controllers
// have none, but runc puts each container in the cgroup2 mount at <root>/unified as well, under
// the same path, and the kernel keeps its PSI there.
static void read_pressures(const std::string& dir, CgroupSample& s) {
  s.cpu_pressure = read_pressure(dir + "/cpu.pressure");
  s.memory_pressure = read_pressure(dir + "/memory.pressure");
  s.io_pressure = read_pressure(dir + "/io.pressure");
}

// The _recursive files include descendants (a pod's cgroup holds its containers'); older kernels
// have only the plain ones. Recent kernels count here only IO that met a throttle limit (on 6.18
// an unthrottled cgroup reads "Total 0" after 16 MiB of direct IO): berth passes on what the
// kernel reports.
static std::optional<ReadWrite> read_blkio(const std::string& dir, const std::string& name) {
  auto text = kernel_files::read_text(dir + "/blkio.throttle." + name + "_recursive");
  if (!text) text = kernel_files::read_text(dir + "/blkio.throttle." + name);
  return text ? parse_blkio_rwstat(*text) : std::nullopt;
}

static std::optional<IoCounters> read_io_v1(const std::string& blkio) {
  auto bytes = read_blkio(blkio, "io_service_bytes");
  auto ops = read_blkio(blkio, "io_serviced");
  if (!bytes || !ops) return std::nullopt;
  return IoCounters{bytes->read, bytes->write, ops->read, ops->write};
}

static Result<CgroupSample> read_v1(const CgroupLocation& w) {
  namespace f = kernel_files;
  const std::string mem = w.cgroup_root + "/memory" + w.relative_path;
  const std::string cpu = w.cgroup_root + "/cpuacct" + w.relative_path;
  if (!exists(mem) && !exists(cpu)) return Status(Code::not_found, "cgroup " + w.relative_path + " does not exist");
  CgroupSample s;
  s.timestamp_ns = clock_ns(CLOCK_REALTIME);
  s.monotonic_ns = clock_ns(CLOCK_MONOTONIC);
  s.cpu_usage_ns = f::read_u64(cpu + "/cpuacct.usage").value_or(0);
  s.cpu_timestamp_ns = s.timestamp_ns;
  s.cpu_monotonic_ns = s.monotonic_ns;
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
    if (memsw_limit != 0 && memsw_limit > s.memory_limit_bytes) s.swap_limit_bytes = memsw_limit - s.memory_limit_bytes;
  }
  s.pids_current = f::read_u64(w.cgroup_root + "/pids" + w.relative_path + "/pids.current");
  s.io = read_io_v1(w.cgroup_root + "/blkio" + w.relative_path);
  read_pressures(w.cgroup_root + "/unified" + w.relative_path, s);
  return s;
}

static Result<CgroupSample> read_v2(const CgroupLocation& w) {
  namespace f = kernel_files;
  const std::string dir = w.cgroup_root + w.relative_path;
  if (!exists(dir)) return Status(Code::not_found, "cgroup " + w.relative_path + " does not exist");
  CgroupSample s;
  s.timestamp_ns = clock_ns(CLOCK_REALTIME);
  s.monotonic_ns = clock_ns(CLOCK_MONOTONIC);
  s.cpu_usage_ns = get(f::read_key_values(dir + "/cpu.stat"), "usage_usec") * 1000;
  s.cpu_timestamp_ns = s.timestamp_ns;
  s.cpu_monotonic_ns = s.monotonic_ns;
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
  if (auto text = f::read_text(dir + "/io.stat")) s.io = parse_io_stat(*text);
  read_pressures(dir, s);
  return s;
}

Result<CgroupSample> read_cgroup_sample(const CgroupLocation& where) {
  if (where.relative_path.empty() || where.relative_path[0] != '/')
    return invalid_argument("cgroup path '" + where.relative_path + "' is not absolute");
  return where.layout == CgroupLayout::v2 ? read_v2(where) : read_v1(where);
}

Result<CpuReading> read_cgroup_cpu(const CgroupLocation& w) {
  namespace f = kernel_files;
  if (w.relative_path.empty() || w.relative_path[0] != '/')
    return invalid_argument("cgroup path '" + w.relative_path + "' is not absolute");
  CpuReading r;
  r.timestamp_ns = clock_ns(CLOCK_REALTIME);
  r.monotonic_ns = clock_ns(CLOCK_MONOTONIC);
  std::optional<uint64_t> usage;
  if (w.layout == CgroupLayout::v2) {
    auto st = f::read_key_values(w.cgroup_root + w.relative_path + "/cpu.stat");
    if (auto it = st.find("usage_usec"); it != st.end()) usage = it->second * 1000;
  } else {
    usage = f::read_u64(w.cgroup_root + "/cpuacct" + w.relative_path + "/cpuacct.usage");
  }
  if (!usage) return Status(Code::not_found, "cgroup " + w.relative_path + ": no cpu usage to read");
  r.usage_ns = *usage;
  return r;
}

uint64_t memory_available_bytes(const CgroupSample& s) {
  if (s.memory_limit_bytes == 0) return 0;
  return s.memory_limit_bytes > s.memory_working_set_bytes ? s.memory_limit_bytes - s.memory_working_set_bytes : 0;
}

}  // namespace berth
