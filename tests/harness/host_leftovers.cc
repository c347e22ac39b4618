// The census of host_leftovers.h: /proc/self/mountinfo, /sys/fs/cgroup, /proc/<pid>/{cgroup,cmdline}
// and the daemon's directories, read directly.
#include "berth/test/host_leftovers.h"

#include <dirent.h>
#include <signal.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <optional>
#include <sstream>

#include "berth/test/cri_client.h"
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

// What the scope's berthd sees at `path`: the path itself, or through a nested berthd's root.
std::string seen(const LeftoverScope& s, const std::string& path) {
  return s.nested_in_pid > 0 ? "/proc/" + std::to_string(s.nested_in_pid) + "/root" + path : path;
}

std::string pid_namespace(int pid) {
  std::error_code ec;
  return fs::read_symlink("/proc/" + std::to_string(pid) + "/ns/pid", ec).string();
}

// A process of the scope: in a cgroup below the pods' parent, or (berth-monitor, the runtime)
// naming berthd's dirs in its arguments. berthd itself never counts.
bool of_scope(int pid, const std::string& cmd, const LeftoverScope& s) {
  if (cmd.empty() || cmd.find("berthd") != std::string::npos) return false;  // a kernel thread, gone, or berthd
  std::string cg = read_file("/proc/" + std::to_string(pid) + "/cgroup");
  bool in_parent = !s.cgroup_parent.empty() && cg.find(s.cgroup_parent + "/") != std::string::npos;
  if (in_parent) return true;
  bool names_dirs = cmd.find(s.state + "/") != std::string::npos || cmd.find(s.root + "/") != std::string::npos;
  return names_dirs && (s.nested_in_pid <= 0 || pid_namespace(pid) == pid_namespace(s.nested_in_pid));
}

// "<pid> (<comm>) <state> <ppid> ...": comm may hold spaces and parentheses, so split at the last ')'.
struct ProcStat {
  std::string comm;
  char state = 0;
  int ppid = 0;
};
std::optional<ProcStat> proc_stat(int pid) {
  std::string stat = read_file("/proc/" + std::to_string(pid) + "/stat");
  size_t open = stat.find('('), close = stat.rfind(')');
  if (open == std::string::npos || close == std::string::npos || close + 2 >= stat.size()) return std::nullopt;
  ProcStat s{stat.substr(open + 1, close - open - 1), stat[close + 2], 0};
  std::istringstream rest(stat.substr(close + 3));
  rest >> s.ppid;
  return s;
}

// Whether a zombie is this test's: its parent is a process of one of this test's pods (a
// container's init that does not reap), or descends from this test process (berthd, a monitor, a
// runtime it ran). Other tests running at the same time leave zombies of the same name.
bool zombie_of_this_test(int ppid) {
  std::string cgroups = read_file("/proc/" + std::to_string(ppid) + "/cgroup");
  if (cgroups.find(test_cgroup_parent() + "/") != std::string::npos) return true;
  for (int p = ppid, hops = 0; p > 1 && hops < 64; ++hops) {
    if (p == ::getpid()) return true;
    auto s = proc_stat(p);
    if (!s) return false;
    p = s->ppid;
  }
  return false;
}

}  // namespace

int runc_init_processes(const std::string& state) {
  int n = 0;
  for (int pid : pids()) {
    std::string c = cmdline(pid);
    if (c.size() < 9 || c.compare(c.size() - 9, 9, "runc init") != 0) continue;
    if (!state.empty()) {
      std::string env = read_file("/proc/" + std::to_string(pid) + "/environ");
      if (env.find(std::string("_LIBCONTAINER_STATEDIR=") + state + "/") == std::string::npos) continue;
    }
    ++n;
  }
  return n;
}

std::vector<std::string> host_processes_running(const std::vector<std::string>& argv) {
  std::string wanted;
  for (const auto& a : argv) wanted += a + '\0';
  const std::string name = argv.empty() ? "" : fs::path(argv[0]).filename().string();
  std::vector<std::string> out;
  for (int pid : pids()) {
    auto s = proc_stat(pid);
    if (!s) continue;
    if (read_file("/proc/" + std::to_string(pid) + "/cmdline") == wanted ||
        (s->state == 'Z' && s->comm == name && zombie_of_this_test(s->ppid)))
      out.push_back(std::to_string(pid) + " " + s->state + " " + s->comm);
  }
  return out;
}

std::vector<std::string> host_leftovers(const LeftoverScope& s) {
  std::vector<std::string> out;
  // Mounts (netns pins are nsfs mounts; pod shm, container and pause rootfs) under berthd's dirs.
  {
    std::ifstream in(s.nested_in_pid > 0 ? "/proc/" + std::to_string(s.nested_in_pid) + "/mountinfo"
                                         : "/proc/self/mountinfo");
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
      std::string parent = seen(s, h + s.cgroup_parent);
      std::error_code ec;
      for (auto it = fs::recursive_directory_iterator(parent, ec); !ec && it != fs::recursive_directory_iterator();
           it.increment(ec))
        if (it->is_directory()) out.push_back("cgroup: " + it->path().string());
    }
  }
  for (int pid : pids()) {
    std::string c = cmdline(pid);
    if (of_scope(pid, c, s)) out.push_back("process: " + std::to_string(pid) + " " + c);
  }
  // The runtime's own record of containers.
  const std::string state = seen(s, s.state), root = seen(s, s.root);
  for (const auto& rt : entries(state + "/runtime")) add_entries(&out, "runtime container", state + "/runtime/" + rt);
  if (s.network) {
    for (const auto& ip : s.network->allocated_ips()) out.push_back("host-local address: " + ip);
    for (const auto& v : s.network->veths()) out.push_back("veth: " + v);
    for (const auto& r : s.network->nat_rules_naming("name: \\\"" + s.network->name() + "\\\""))
      out.push_back("nat rule: " + r);
  }
  add_entries(&out, "netns pin", state + "/netns");
  add_entries(&out, "userns pin", state + "/userns");
  add_entries(&out, "sandbox bundle", state + "/sandboxes");
  add_entries(&out, "container bundle", state + "/containers");
  add_entries(&out, "monitor socket", state + "/monitors");
  add_entries(&out, "image volume", state + "/image-volumes");
  add_entries(&out, "sandbox checkpoint", root + "/sandboxes");
  add_entries(&out, "container record", root + "/container-records");
  add_entries(&out, "writable layer", root + "/containers");
  add_entries(&out, "CNI cache entry", root + "/cni/results");
  add_entries(&out, "temp blob", root + "/images/tmp");
  for (const auto& name : entries(root + "/images/snapshots"))
    if (s.images_removed || name.find('.') != std::string::npos) out.push_back("snapshot: " + name);
  if (s.images_removed) add_entries(&out, "blob", root + "/images/blobs/sha256");
  // Kept only after a pull that failed on the registry or the link, which none of these tests has.
  add_entries(&out, "partial download", root + "/images/partial");
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
    for (auto it = fs::recursive_directory_iterator(parent, ec); !ec && it != fs::recursive_directory_iterator();
         it.increment(ec))
      if (it->is_directory()) dirs.push_back(it->path());
    for (auto it = dirs.rbegin(); it != dirs.rend(); ++it) ::rmdir(it->c_str());
    ::rmdir(parent.c_str());
  }
}

}  // namespace berth::test
