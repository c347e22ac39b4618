// remove_cgroup: SIGKILL what cgroup.procs lists (cgroup.kill where v2 has it), then rmdir, with
// short bounded retries: a killed process leaves cgroup.procs a moment after the signal.
#include "berth/cgroup_removal.h"

#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <map>
#include <sstream>
#include <thread>

#include "berth/cgroups_path.h"
#include "berth/file_text.h"

namespace berth {
namespace {

std::vector<std::string> read_hierarchy_mounts() {
  return cgroup_hierarchy_mounts_in(read_text_file("/proc/self/mountinfo"));
}

std::vector<pid_t> procs_of(const std::string& dir) {
  std::vector<pid_t> out;
  std::istringstream in(read_text_file(dir + "/cgroup.procs"));
  for (long pid; in >> pid;)
    if (pid > 0) out.push_back(static_cast<pid_t>(pid));
  return out;
}

// The directory and every cgroup below it (a container may have made its own), deepest last;
// iterative, so a deep tree cannot exhaust the stack.
std::vector<std::string> cgroup_tree(const std::string& top) {
  std::vector<std::string> out{top};
  for (size_t i = 0; i < out.size() && out.size() < 100000; ++i) {
    DIR* d = ::opendir(out[i].c_str());
    if (!d) continue;
    while (dirent* e = ::readdir(d)) {
      std::string name = e->d_name;
      if (e->d_type == DT_DIR && name != "." && name != "..") out.push_back(out[i] + "/" + name);
    }
    ::closedir(d);
  }
  return out;
}

bool remove_one(const std::string& dir, int* last_errno) {
  if (int fd = ::open((dir + "/cgroup.kill").c_str(), O_WRONLY | O_CLOEXEC); fd >= 0) {
    if (::write(fd, "1", 1) < 0) {
    }
    ::close(fd);
  }
  // About 2 s in all: a process in uninterruptible sleep takes a moment to die.
  for (int attempt = 0; attempt < 100; ++attempt) {
    for (pid_t pid : procs_of(dir)) ::kill(pid, SIGKILL);
    if (::rmdir(dir.c_str()) == 0 || errno == ENOENT) return true;
    *last_errno = errno;
    std::this_thread::sleep_for(std::chrono::milliseconds(attempt < 10 ? 2 : 20));
  }
  return false;
}

}  // namespace

std::vector<std::string> cgroup_hierarchy_mounts_in(const std::string& mountinfo) {
  struct Hierarchy {
    std::string mount_point;
    bool root = false;  // the mount shows the hierarchy's root, not a bind of a sub-tree
  };
  std::vector<std::string> order;  // hierarchies by device, in mount order
  std::map<std::string, Hierarchy> by_device;
  std::istringstream lines(mountinfo);
  for (std::string line; std::getline(lines, line);) {
    // "<id> <parent> <maj:min> <root> <mount point> <options> [optional...] - <fstype> <source> <super options>"
    size_t dash = line.find(" - ");
    if (dash == std::string::npos) continue;
    std::istringstream rest(line.substr(dash + 3));
    std::string fstype;
    rest >> fstype;
    if (fstype != "cgroup" && fstype != "cgroup2") continue;
    std::istringstream head(line.substr(0, dash));
    std::string id, parent, dev, root, mount_point;
    head >> id >> parent >> dev >> root >> mount_point;
    auto [it, added] = by_device.try_emplace(dev);
    if (added) order.push_back(dev);
    // The hierarchy's root wins over a bind of one of its sub-trees (a container's cgroup bound
    // elsewhere). Where only sub-trees are mounted (berthd in a container without a cgroup
    // namespace: each hierarchy is a bind of the container's own cgroup), the first one is the
    // hierarchy as this berthd can use it, as the runtime does: pods nest below the container.
    if (added || (!it->second.root && root == "/")) it->second = {mount_point, root == "/"};
  }
  std::vector<std::string> out;
  for (const auto& dev : order) out.push_back(by_device[dev].mount_point);
  return out;
}

const std::vector<std::string>& cgroup_hierarchy_mounts() {
  static const std::vector<std::string> mounts = read_hierarchy_mounts();
  return mounts;
}

bool cgroup_exists(const std::string& cgroups_path, bool systemd) {
  std::string rel = cgroup_dir_of(cgroups_path, systemd);
  for (const auto& m : cgroup_hierarchy_mounts())
    if (::access((m + rel).c_str(), F_OK) == 0) return true;
  return false;
}

bool cgroup_holds_anything(const std::string& dir) { return cgroup_tree(dir).size() > 1 || !procs_of(dir).empty(); }

Status remove_cgroup(const std::string& cgroups_path, bool systemd) {
  std::string rel = cgroup_dir_of(cgroups_path, systemd);
  if (rel.empty() || rel == "/") return invalid_argument("remove cgroup: refusing to remove a hierarchy root");
  Status first_error;
  for (const auto& m : cgroup_hierarchy_mounts()) {
    std::string dir = m + rel;
    // Most often empty (its processes ended with the container's init): one rmdir, without
    // reading the tree and cgroup.procs of each of a v1 host's ten hierarchies.
    if (::rmdir(dir.c_str()) == 0 || errno == ENOENT) continue;
    std::vector<std::string> tree = cgroup_tree(dir);
    bool removed = true;
    int last_errno = 0;
    std::string stuck;
    for (auto it = tree.rbegin(); it != tree.rend(); ++it) {
      if (!remove_one(*it, &last_errno)) {
        removed = false;
        stuck = *it;
      }
    }
    if (!removed && first_error.ok()) first_error = errno_status(last_errno, "remove cgroup " + stuck);
  }
  return first_error;
}

}  // namespace berth
