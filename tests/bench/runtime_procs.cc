// Reads the runtime's processes from /proc; see runtime_procs.h.
#include "runtime_procs.h"

#include <dirent.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>

#include "bench_figures.h"

namespace berth::bench {

namespace {

std::string read_all(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// utime + stime + cutime + cstime: fields 14-17 of /proc/<pid>/stat, counted after the ")" that
// ends the command name (which may itself hold spaces or parentheses).
long long cpu_ticks(int pid) {
  std::string stat = read_all("/proc/" + std::to_string(pid) + "/stat");
  size_t close = stat.rfind(')');
  if (close == std::string::npos) return 0;
  std::istringstream fields(stat.substr(close + 2));
  std::string field;
  long long sum = 0;
  for (int n = 3; n <= 17 && fields >> field; ++n)
    if (n >= 14) sum += std::atoll(field.c_str());
  return sum;
}

long pss_kib(int pid) {
  std::string rollup = read_all("/proc/" + std::to_string(pid) + "/smaps_rollup");
  size_t at = rollup.find("\nPss:");
  return at == std::string::npos ? 0 : std::atol(rollup.c_str() + at + 5);
}

ProcSample sample_of(int pid) { return {cpu_ticks(pid), std::max(0L, rss_kib(pid)), pss_kib(pid)}; }

std::string exe_name(int pid) {
  char buf[4096];
  ssize_t n = ::readlink(("/proc/" + std::to_string(pid) + "/exe").c_str(), buf, sizeof buf - 1);
  if (n <= 0) return "";
  std::string path(buf, static_cast<size_t>(n));
  if (const std::string deleted = " (deleted)"; path.ends_with(deleted)) path.resize(path.size() - deleted.size());
  return path.substr(path.rfind('/') + 1);
}

}  // namespace

long RuntimeSample::helpers_rss_kib() const {
  long sum = 0;
  for (const auto& [pid, s] : helpers) sum += s.rss_kib;
  return sum;
}

long RuntimeSample::helpers_pss_kib() const {
  long sum = 0;
  for (const auto& [pid, s] : helpers) sum += s.pss_kib;
  return sum;
}

RuntimeSample RuntimeProcs::sample() const {
  RuntimeSample out;
  if (o_.daemon_pid <= 0) return out;
  out.daemon = sample_of(o_.daemon_pid);
  DIR* d = ::opendir("/proc");
  if (!d) return out;
  while (dirent* e = ::readdir(d)) {
    int pid = std::atoi(e->d_name);
    if (pid <= 0 || pid == o_.daemon_pid) continue;
    std::string exe = exe_name(pid);
    if (std::find(o_.helper_exes.begin(), o_.helper_exes.end(), exe) == o_.helper_exes.end()) continue;
    if (read_all("/proc/" + std::to_string(pid) + "/cmdline").find(o_.helper_marker) == std::string::npos) continue;
    out.helpers[pid] = sample_of(pid);
  }
  ::closedir(d);
  return out;
}

CpuSeconds cpu_between(const RuntimeSample& start, const RuntimeSample& end) {
  const double hz = static_cast<double>(::sysconf(_SC_CLK_TCK));
  long long helpers = 0;
  for (const auto& [pid, s] : end.helpers) {
    auto before = start.helpers.find(pid);
    helpers += s.cpu_ticks - (before == start.helpers.end() ? 0 : before->second.cpu_ticks);
  }
  return {(end.daemon.cpu_ticks - start.daemon.cpu_ticks) / hz, helpers / hz};
}

PerPodMib memory_per_pod(const RuntimeSample& before, const RuntimeSample& after, size_t pods) {
  if (pods == 0) return {};
  auto per_pod = [&](long after_kib, long before_kib) { return (after_kib - before_kib) / 1024.0 / pods; };
  return {per_pod(after.daemon.rss_kib + after.helpers_rss_kib(), before.daemon.rss_kib + before.helpers_rss_kib()),
          per_pod(after.daemon.pss_kib + after.helpers_pss_kib(), before.daemon.pss_kib + before.helpers_pss_kib())};
}

void print_runtime_memory(const char* when, const RuntimeSample& s) {
  std::printf("runtime memory %s: daemon RSS %.1f MiB (Pss %.1f); %zu helpers RSS %.1f MiB (Pss %.1f)\n", when,
              s.daemon.rss_kib / 1024.0, s.daemon.pss_kib / 1024.0, s.helpers.size(), s.helpers_rss_kib() / 1024.0,
              s.helpers_pss_kib() / 1024.0);
}

}  // namespace berth::bench
