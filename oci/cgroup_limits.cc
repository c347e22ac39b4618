// write_cgroup_limits: each limit to its file, v1 or v2 (see cgroup_limits.h).
#include "berth/cgroup_limits.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <sstream>

#include "berth/file_text.h"
#include "berth/unique_fd.h"

namespace berth {
namespace {

Status write_file_value(const std::string& path, const std::string& value) {
  UniqueFd fd(::open(path.c_str(), O_WRONLY | O_TRUNC | O_CLOEXEC));  // cgroupfs ignores the truncation
  if (!fd) return errno_status(errno, "write " + value + " to " + path);
  if (::write(fd.get(), value.data(), value.size()) != static_cast<ssize_t>(value.size()))
    return errno_status(errno, "write " + value + " to " + path);
  return ok_status();
}

int64_t read_number(const std::string& path) {
  std::istringstream in(read_text_file(path));
  std::string v;
  if (!(in >> v) || v == "max") return -1;
  try {
    return std::stoll(v);
  } catch (...) {
    return -1;
  }
}

// A file name from the request must stay a file of this cgroup.
bool plain_name(const std::string& name) {
  return !name.empty() && name.find('/') == std::string::npos && name != "." && name != "..";
}

// A controller's interface file ("memory.high", "io.weight"): never the core cgroup.* files, which
// move processes or kill them, or enable controllers below.
bool controller_file(const std::string& name) {
  size_t dot = name.find('.');
  return plain_name(name) && dot != std::string::npos && dot > 0 && dot + 1 < name.size() &&
         name.rfind("cgroup.", 0) != 0;
}

Status check_memory_use(const std::string& usage_file, int64_t limit, const std::string& dir) {
  int64_t used = read_number(usage_file);
  if (used > limit)
    return failed_precondition("memory limit " + std::to_string(limit) + " is below the current memory use " +
                               std::to_string(used) + " of cgroup " + dir);
  return ok_status();
}

Status write_v2(const std::string& d, const std::string& dir, const CgroupLimits& l) {
  if (l.memory > 0) {
    if (Status s = check_memory_use(d + "/memory.current", l.memory, dir); !s.ok()) return s;
    if (Status s = write_file_value(d + "/memory.max", std::to_string(l.memory)); !s.ok()) return s;
  }
  if (l.memory_swap > 0 && l.memory > 0)
    if (Status s = write_file_value(d + "/memory.swap.max", std::to_string(l.memory_swap - l.memory)); !s.ok())
      return s;
  if (l.cpu_quota != 0 || l.cpu_period > 0) {
    std::string quota = l.cpu_quota > 0 ? std::to_string(l.cpu_quota) : "max";
    if (Status s =
            write_file_value(d + "/cpu.max", quota + " " + std::to_string(l.cpu_period > 0 ? l.cpu_period : 100000));
        !s.ok())
      return s;
  }
  if (l.cpu_shares > 0) {
    // The conversion runc and crun use: shares 2..262144 onto weight 1..10000.
    int64_t shares = std::clamp<int64_t>(l.cpu_shares, 2, 262144);
    if (Status s = write_file_value(d + "/cpu.weight", std::to_string(1 + ((shares - 2) * 9999) / 262142)); !s.ok())
      return s;
  }
  if (!l.cpuset_cpus.empty())
    if (Status s = write_file_value(d + "/cpuset.cpus", l.cpuset_cpus); !s.ok()) return s;
  if (!l.cpuset_mems.empty())
    if (Status s = write_file_value(d + "/cpuset.mems", l.cpuset_mems); !s.ok()) return s;
  for (const auto& [size, bytes] : l.hugepages)
    if (Status s = write_file_value(d + "/hugetlb." + size + ".max", std::to_string(bytes)); !s.ok()) return s;
  for (const auto& [file, value] : l.unified) {
    if (!controller_file(file))
      return invalid_argument("unified: '" + file + "' is not a controller's file of the cgroup");
    if (file == "memory.max" && value != "max") {
      int64_t limit = -1;
      try {
        limit = std::stoll(value);
      } catch (...) {
      }
      if (limit < 0) return invalid_argument("unified: memory.max '" + value + "' is not a number of bytes");
      if (Status s = check_memory_use(d + "/memory.current", limit, dir); !s.ok()) return s;
    }
    if (Status s = write_file_value(d + "/" + file, value); !s.ok()) return s;
  }
  return ok_status();
}

Status write_v1(const std::string& root, const std::string& dir, const CgroupLimits& l) {
  const std::string mem = root + "/memory" + dir, cpu = root + "/cpu" + dir, cpuset = root + "/cpuset" + dir;
  if (l.memory > 0) {
    if (Status s = check_memory_use(mem + "/memory.usage_in_bytes", l.memory, dir); !s.ok()) return s;
    // Without swap accounting there is no memsw file: a swap limit equal to the memory limit (no
    // swap) needs none, any other cannot be honoured.
    bool swap_accounting = ::access((mem + "/memory.memsw.limit_in_bytes").c_str(), F_OK) == 0;
    int64_t swap = l.memory_swap;
    if (swap > 0 && !swap_accounting) {
      if (swap != l.memory)
        return failed_precondition("memory_swap_limit_in_bytes: cgroup " + dir +
                                   " has no swap accounting (memory.memsw.*)");
      swap = 0;
    }
    // memsw may never be below memory: raise it first when the new memory limit passes it.
    bool swap_first = swap > 0 && l.memory > read_number(mem + "/memory.memsw.limit_in_bytes");
    if (swap_first)
      if (Status s = write_file_value(mem + "/memory.memsw.limit_in_bytes", std::to_string(swap)); !s.ok()) return s;
    if (Status s = write_file_value(mem + "/memory.limit_in_bytes", std::to_string(l.memory)); !s.ok()) return s;
    if (swap > 0 && !swap_first)
      if (Status s = write_file_value(mem + "/memory.memsw.limit_in_bytes", std::to_string(swap)); !s.ok()) return s;
  }
  if (l.cpu_period > 0 || l.cpu_quota != 0)
    if (Status s =
            write_file_value(cpu + "/cpu.cfs_period_us", std::to_string(l.cpu_period > 0 ? l.cpu_period : 100000));
        !s.ok())
      return s;
  if (l.cpu_quota != 0)
    if (Status s = write_file_value(cpu + "/cpu.cfs_quota_us", std::to_string(l.cpu_quota > 0 ? l.cpu_quota : -1));
        !s.ok())
      return s;
  if (l.cpu_shares > 0)
    if (Status s = write_file_value(cpu + "/cpu.shares", std::to_string(l.cpu_shares)); !s.ok()) return s;
  if (!l.cpuset_cpus.empty())
    if (Status s = write_file_value(cpuset + "/cpuset.cpus", l.cpuset_cpus); !s.ok()) return s;
  if (!l.cpuset_mems.empty())
    if (Status s = write_file_value(cpuset + "/cpuset.mems", l.cpuset_mems); !s.ok()) return s;
  for (const auto& [size, bytes] : l.hugepages)
    if (Status s =
            write_file_value(root + "/hugetlb" + dir + "/hugetlb." + size + ".limit_in_bytes", std::to_string(bytes));
        !s.ok())
      return s;
  if (!l.unified.empty()) return invalid_argument("unified: needs a cgroup v2 host; this host runs cgroup v1");
  return ok_status();
}

}  // namespace

Status check_memory_limit(const std::string& dir, int64_t limit, bool cgroup_v2, const std::string& root) {
  return check_memory_use(
      cgroup_v2 ? root + dir + "/memory.current" : root + "/memory" + dir + "/memory.usage_in_bytes", limit, dir);
}

Status write_cgroup_limits(const std::string& dir, const CgroupLimits& limits, bool cgroup_v2,
                           const std::string& root) {
  if (dir.empty() || dir[0] != '/' || dir.find("/../") != std::string::npos)
    return invalid_argument("cgroup '" + dir + "' is not an absolute cgroup path");
  for (const auto& [size, bytes] : limits.hugepages)
    if (!plain_name(size)) return invalid_argument("hugepage_limits: page size '" + size + "' is not a page size");
  return cgroup_v2 ? write_v2(root + dir, dir, limits) : write_v1(root, dir, limits);
}

}  // namespace berth
