// host_cgroup.h: v1 or v2 told by /sys/fs/cgroup/cgroup.controllers, which only the v2 root has.
#include "berth/test/host_cgroup.h"

#include <filesystem>

namespace berth::test {

namespace fs = std::filesystem;

bool host_cgroup_v2() { return fs::exists("/sys/fs/cgroup/cgroup.controllers"); }

std::vector<std::string> host_cgroup_roots() {
  if (host_cgroup_v2()) return {"/sys/fs/cgroup"};
  std::vector<std::string> roots;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator("/sys/fs/cgroup", ec))
    if (e.is_directory(ec) && !e.is_symlink(ec)) roots.push_back(e.path());
  return roots;
}

std::string host_cgroup_dir(const std::string& path, const std::string& v1_controller) {
  return host_cgroup_v2() ? "/sys/fs/cgroup" + path : "/sys/fs/cgroup/" + v1_controller + path;
}

std::string host_cgroup_file(const std::string& path, const std::string& v1_controller, const std::string& v1_file,
                             const std::string& v2_file) {
  return host_cgroup_dir(path, v1_controller) + "/" + (host_cgroup_v2() ? v2_file : v1_file);
}

}  // namespace berth::test
