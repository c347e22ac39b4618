// /proc readers and pidfd helpers of process_identity.h. Debian 12's <sys/pidfd.h> lacks
// extern "C", so pidfd_open is called through syscall().
#include "berth/process_identity.h"

#include <fcntl.h>
#include <signal.h>
#include <poll.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cstdlib>
#include <sstream>

#include "berth/file_text.h"

namespace berth {

unsigned long long process_start_time(pid_t pid) {
  if (pid <= 0) return 0;
  std::string s = read_text_file("/proc/" + std::to_string(pid) + "/stat");
  s = s.substr(0, s.find('\n'));
  size_t paren = s.rfind(')');
  if (paren == std::string::npos || paren + 2 >= s.size()) return 0;
  std::istringstream f(s.substr(paren + 2));
  std::string state;
  f >> state;
  if (state == "Z" || state == "X") return 0;
  std::string skip;
  for (int i = 0; i < 18; ++i) f >> skip;  // fields 4..21
  unsigned long long start = 0;
  f >> start;
  return start;
}

bool process_in_cgroup_leaf(pid_t pid, const std::string& leaf) {
  if (pid <= 0 || leaf.empty()) return false;
  std::istringstream in(read_text_file("/proc/" + std::to_string(pid) + "/cgroup"));
  const std::string suffix = "/" + leaf;
  for (std::string line; std::getline(in, line);) {
    if (line.size() >= suffix.size() && line.compare(line.size() - suffix.size(), suffix.size(), suffix) == 0)
      return true;
    // systemd driver: ".../<prefix>-<leaf>.scope"
    if (line.find("-" + leaf + ".scope") != std::string::npos) return true;
  }
  return false;
}

std::string unified_cgroup_of(pid_t pid) {
  std::istringstream in(read_text_file("/proc/" + std::to_string(pid) + "/cgroup"));
  for (std::string line; std::getline(in, line);)
    if (line.rfind("0::", 0) == 0) return line.substr(3);
  return "";
}

UniqueFd open_pidfd(pid_t pid) {
  if (pid <= 0) return UniqueFd();
#ifdef SYS_pidfd_open
  return UniqueFd(static_cast<int>(::syscall(SYS_pidfd_open, pid, 0)));
#else
  return UniqueFd();
#endif
}

bool pidfd_alive(int pidfd) {
  if (pidfd < 0) return false;
  pollfd p{pidfd, POLLIN, 0};
  return ::poll(&p, 1, 0) == 0;
}

bool kill_container_process(pid_t pid, const std::string& cgroup_leaf, std::chrono::milliseconds wait) {
  UniqueFd fd = open_pidfd(pid);
  if (!fd) return true;  // no such process
  // Checked after the pidfd is open: while the process behind it is alive, its pid is not reused,
  // so what /proc says of the pid is what the pidfd names.
  if (!process_in_cgroup_leaf(pid, cgroup_leaf) || !pidfd_alive(fd.get())) return !pidfd_alive(fd.get());
  ::syscall(SYS_pidfd_send_signal, fd.get(), SIGKILL, nullptr, 0);
  pollfd p{fd.get(), POLLIN, 0};
  return ::poll(&p, 1, static_cast<int>(wait.count())) > 0;
}

pid_t read_pid_file(const std::string& path) {
  std::istringstream in(read_text_file(path));
  long pid = 0;
  if (!(in >> pid) || pid <= 0 || pid > 0x3fffffff) return 0;
  return static_cast<pid_t>(pid);
}

}  // namespace berth
