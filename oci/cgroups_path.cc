// cgroupsPath forms for runc and crun; see cgroups_path.h.
#include "berth/cgroups_path.h"

#include <sstream>
#include <sys/statfs.h>
#include <linux/magic.h>

#include "berth/file_text.h"

namespace berth {

Result<std::string> cgroups_path_for(const std::string& parent, const std::string& id, bool systemd) {
  if (systemd) {
    std::string slice = parent.empty() ? "system.slice" : parent;
    if (slice.size() < 7 || slice.substr(slice.size() - 6) != ".slice" || slice.find('/') != std::string::npos)
      return invalid_argument("linux.cgroup_parent: '" + parent +
                              "' is not a systemd slice (the systemd cgroup driver is configured)");
    return slice + ":berth:" + id;
  }
  std::string p = parent.empty() ? "/berth" : parent;
  if (p[0] != '/' || p.find("..") != std::string::npos)
    return invalid_argument("linux.cgroup_parent: '" + parent +
                            "' is not an absolute cgroupfs path (the cgroupfs driver is configured)");
  while (p.size() > 1 && p.back() == '/') p.pop_back();
  return (p == "/" ? "" : p) + "/" + id;
}

SystemdCgroup systemd_cgroup_of(const std::string& cgroups_path) {
  size_t a = cgroups_path.find(':'), b = cgroups_path.find(':', a + 1);
  if (a == std::string::npos || b == std::string::npos) return {};
  std::string prefix = cgroups_path.substr(a + 1, b - a - 1), name = cgroups_path.substr(b + 1);
  return {cgroups_path.substr(0, a), (prefix.empty() ? name : prefix + "-" + name) + ".scope"};
}

std::string cgroup_dir_of(const std::string& cgroups_path, bool systemd) {
  if (!systemd) return cgroups_path;
  auto [slice, scope] = systemd_cgroup_of(cgroups_path);
  if (scope.empty()) return cgroups_path;
  std::string dir;
  if (slice != "-.slice") {
    std::string stem = slice.substr(0, slice.size() - 6);  // without ".slice"
    size_t pos = 0;
    for (;;) {
      size_t dash = stem.find('-', pos);
      dir += "/" + stem.substr(0, dash) + ".slice";
      if (dash == std::string::npos) break;
      pos = dash + 1;
    }
  }
  return dir + "/" + scope;
}

bool host_cgroup_v2() {
  struct statfs fs {};
  return ::statfs("/sys/fs/cgroup", &fs) == 0 && fs.f_type == CGROUP2_SUPER_MAGIC;
}

long cgroup_oom_kills(const std::string& cgroup_dir) {
  struct statfs fs {};
  bool v2 = ::statfs("/sys/fs/cgroup", &fs) == 0 && fs.f_type == CGROUP2_SUPER_MAGIC;
  std::istringstream in(read_text_file(v2 ? "/sys/fs/cgroup" + cgroup_dir + "/memory.events"
                                          : "/sys/fs/cgroup/memory" + cgroup_dir + "/memory.oom_control"));
  std::string key;
  long value = 0;
  while (in >> key >> value)
    if (key == "oom_kill") return value;
  return 0;
}

}  // namespace berth
