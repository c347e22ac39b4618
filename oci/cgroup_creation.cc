// create_cgroup; see cgroup_creation.h. Levels that exist are left as they are (a pod's parent
// that kubelet or another pod made), so only what is missing is filled in: a v1 cpuset's empty
// cpus and mems included, and a parent that someone removed while the walk went below it.
#include "berth/cgroup_creation.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>

#include "berth/cgroup_removal.h"
#include "berth/file_text.h"

namespace berth {

namespace {

bool write_text(const std::string& path, const std::string& text) {
  FILE* f = std::fopen(path.c_str(), "we");
  if (!f) return false;
  bool ok = std::fputs(text.c_str(), f) >= 0;
  return std::fclose(f) == 0 && ok;
}

std::string trimmed(std::string s) {
  while (!s.empty() && (s.back() == '\n' || s.back() == ' ')) s.pop_back();
  return s;
}

// Makes `dir` below `mount`, level by level. ENOENT from a level's mkdir (or ENOENT or ENODEV from
// a write to a level) means that the level or its parent, which existed or was made a moment
// before, was removed in between (the last user of an empty parent removing it: another runtime,
// another berthd, kubelet); the caller walks again.
Status create_levels(const std::string& mount, const std::string& dir, std::string& path) {
  bool cpuset = ::access((mount + "/cpuset.cpus").c_str(), F_OK) == 0;
  bool v2 = ::access((mount + "/cgroup.controllers").c_str(), F_OK) == 0;
  path = mount;
  for (size_t at = 1; at <= dir.size();) {
    size_t end = dir.find('/', at);
    if (end == std::string::npos) end = dir.size();
    std::string parent = path;
    path += dir.substr(at - 1, end - at + 1);
    at = end + 1;
    if (v2) {
      // What the parent offers, handed down so limits can be written below it.
      std::string offered = trimmed(read_text_file(parent + "/cgroup.controllers")), wanted;
      for (const char* c : {"cpu", "cpuset", "memory", "pids", "io", "hugetlb"})
        if ((" " + offered + " ").find(std::string(" ") + c + " ") != std::string::npos)
          wanted += std::string(wanted.empty() ? "+" : " +") + c;
      if (!wanted.empty()) (void)write_text(parent + "/cgroup.subtree_control", wanted);
    }
    if (::mkdir(path.c_str(), 0755) != 0 && errno != EEXIST) return errno_status(errno, "create cgroup " + path);
    // Also for a level that exists: one that a concurrent create just made may not have its
    // cpus and mems yet, and a v1 cpuset without them takes no task (ENOSPC) and no child
    // with any. An empty cpuset is unusable, so filling it in never overrides a choice.
    if (cpuset)
      for (const char* f : {"/cpuset.cpus", "/cpuset.mems"})
        if (trimmed(read_text_file(path + f)).empty() && !write_text(path + f, read_text_file(parent + f)))
          return errno_status(errno, "create cgroup " + path + ": " + std::string(f + 1) + " from its parent");
  }
  return ok_status();
}

// How many times a walk starts again after a parent vanished under it: each time someone removed
// a parent within microseconds of its making, so a few would do; the bound (a walk costs a few
// syscalls) keeps a hierarchy that refuses for another reason from looping.
constexpr int kCreateWalks = 32;

}  // namespace

Result<std::vector<std::string>> create_cgroup(const std::string& dir) {
  if (dir.empty() || dir[0] != '/' || dir == "/" || dir.find("/../") != std::string::npos)
    return invalid_argument("create cgroup: '" + dir + "' is not a cgroup below a hierarchy's root");
  std::vector<std::string> procs;
  for (const auto& mount : cgroup_hierarchy_mounts()) {
    std::string path;
    Status st;
    for (int walk = 0; walk < kCreateWalks; ++walk) {
      st = create_levels(mount, dir, path);
      bool vanished = st.sys_errno() == ENOENT || st.sys_errno() == ENODEV;  // ENODEV: a write to a removed one
      if (st.ok() || !vanished || ::access(mount.c_str(), F_OK) != 0) break;
    }
    if (!st.ok()) return st;
    procs.push_back(path + "/cgroup.procs");
  }
  return procs;
}

}  // namespace berth
