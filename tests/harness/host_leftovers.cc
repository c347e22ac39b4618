// The census of host_leftovers.h: /proc/self/mountinfo, /sys/fs/cgroup, /proc/<pid>/{cgroup,cmdline}
// and the daemon's directories, read directly.
#include "berth/test/host_leftovers.h"

#include <dirent.h>
#include <signal.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "berth/test/helper_process.h"
#include "berth/test/host_cgroup.h"
#include "berth/test/temp_dir.h"

namespace berth::test {
namespace fs = std::filesystem;

namespace {

std::vector<std::string> entries(const std::string& dir) {
  std::vector<std::string> out;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(dir, ec)) out.push_back(e.path().filename());
  return out;
}

void add_entries(std::vector<std::string>* out, const std::string& kind, const std::string& dir) {
  for (const auto& name : entries(dir)) out->push_back(kind + ": " + dir + "/" + name);
}

std::vector<int> pids() {
  std::vector<int> out;
  DIR* d = ::opendir("/proc");
  if (!d) return out;
  while (dirent* e = ::readdir(d)) {
    int pid = std::atoi(e->d_name);
    if (pid > 0) out.push_back(pid);
  }
  ::closedir(d);
  return out;
}

std::string cmdline(int pid) {
  std::string s = read_file("/proc/" + std::to_string(pid) + "/cmdline");
  for (char& c : s)
    if (c == '\0') c = ' ';
  while (!s.empty() && s.back() == ' ') s.pop_back();
  return s;
}

bool starts_with(const std::string& s, const std::string& prefix) { return s.compare(0, prefix.size(), prefix) == 0; }

// A process of the scope: in a cgroup below the pods' parent, or (berth-monitor, the runtime)
// naming berthd's dirs in its arguments. berthd itself never counts.
bool of_scope(int pid, const std::string& cmd, const LeftoverScope& s) {
  if (cmd.empty() || cmd.find("berthd") != std::string::npos) return false;  // a kernel thread, gone, or berthd
  std::string cg = read_file("/proc/" + std::to_string(pid) + "/cgroup");
  bool in_parent = !s.cgroup_parent.empty() && cg.find(s.cgroup_parent + "/") != std::string::npos;
  return in_parent || cmd.find(s.state + "/") != std::string::npos || cmd.find(s.root + "/") != std::string::npos;
}

}  // namespace

int runc_init_processes() {
  int n = 0;
  for (int pid : pids()) {
    std::string c = cmdline(pid);
    if (c.size() >= 9 && c.compare(c.size() - 9, 9, "runc init") == 0) ++n;
  }
  return n;
}

std::vector<std::string> host_leftovers(const LeftoverScope& s) {
  std::vector<std::string> out;
  // Mounts (netns pins are nsfs mounts; pod shm, container and pause rootfs) under berthd's dirs.
  {
    std::ifstream in("/proc/self/mountinfo");
    for (std::string line; std::getline(in, line);) {
      std::istringstream f(line);
      std::string id, parent, dev, root, mount_point;
      f >> id >> parent >> dev >> root >> mount_point;
      if (starts_with(mount_point, s.root + "/") || starts_with(mount_point, s.state + "/"))
        out.push_back("mount: " + mount_point + " (" + line.substr(line.find(" - ") + 3) + ")");
    }
  }
  // Cgroups below the pods' parent, in every hierarchy, and the processes in them.
  if (!s.cgroup_parent.empty()) {
    for (const auto& h : host_cgroup_roots()) {
      std::string parent = h + s.cgroup_parent;
      std::error_code ec;
      for (auto it = fs::recursive_directory_iterator(parent, ec); !ec && it != fs::recursive_directory_iterator(); it.increment(ec))
        if (it->is_directory()) out.push_back("cgroup: " + it->path().string());
    }
  }
  for (int pid : pids()) {
    std::string c = cmdline(pid);
    if (of_scope(pid, c, s)) out.push_back("process: " + std::to_string(pid) + " " + c);
  }
  // The runtime's own record of containers.
  for (const auto& rt : entries(s.state + "/runtime")) add_entries(&out, "runtime container", s.state + "/runtime/" + rt);
  if (s.network) {
    for (const auto& ip : s.network->allocated_ips()) out.push_back("host-local address: " + ip);
    for (const auto& v : s.network->veths()) out.push_back("veth: " + v);
    for (const auto& r : s.network->nat_rules_naming("name: \\\"" + s.network->name() + "\\\""))
      out.push_back("nat rule: " + r);
  }
  add_entries(&out, "netns pin", s.state + "/netns");
  add_entries(&out, "userns pin", s.state + "/userns");
  add_entries(&out, "sandbox bundle", s.state + "/sandboxes");
  add_entries(&out, "container bundle", s.state + "/containers");
  add_entries(&out, "monitor socket", s.state + "/monitors");
  add_entries(&out, "sandbox checkpoint", s.root + "/sandboxes");
  add_entries(&out, "container record", s.root + "/container-records");
  add_entries(&out, "writable layer", s.root + "/containers");
  add_entries(&out, "CNI cache entry", s.root + "/cni/results");
  add_entries(&out, "temp blob", s.root + "/images/tmp");
  for (const auto& name : entries(s.root + "/images/snapshots"))
    if (s.images_removed || name.find('.') != std::string::npos) out.push_back("snapshot: " + name);
  if (s.images_removed) add_entries(&out, "blob", s.root + "/images/blobs/sha256");
  return out;
}

void release_host_leftovers(const LeftoverScope& s) {
  for (const auto& rt : entries(s.state + "/runtime"))
    for (const auto& id : entries(s.state + "/runtime/" + rt))
      shell(rt + " --root " + s.state + "/runtime/" + rt + " delete -f " + id + " >/dev/null 2>&1");
  for (int round = 0; round < 50; ++round) {
    bool any = false;
    for (int pid : pids()) {
      if (!of_scope(pid, cmdline(pid), s)) continue;
      ::kill(pid, SIGKILL);
      any = true;
    }
    if (!any) break;
    ::usleep(20000);
  }
  if (s.cgroup_parent.empty()) return;
  for (const auto& h : host_cgroup_roots()) {
    std::string parent = h + s.cgroup_parent;
    std::vector<std::string> dirs;
    std::error_code ec;
    for (auto it = fs::recursive_directory_iterator(parent, ec); !ec && it != fs::recursive_directory_iterator(); it.increment(ec))
      if (it->is_directory()) dirs.push_back(it->path());
    for (auto it = dirs.rbegin(); it != dirs.rend(); ++it) ::rmdir(it->c_str());
    ::rmdir(parent.c_str());
  }
}

}  // namespace berth::test
