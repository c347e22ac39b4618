// What a CRI runtime costs the node is more than its daemon: containerd's shims and berth's
// monitors are separate processes. RuntimeProcs finds them in /proc (by executable name, and a
// marker in their command line that ties them to this daemon instance) and reads their CPU time and
// memory, so both runtimes are charged the same way.
#pragma once

#include <map>
#include <utility>
#include <string>
#include <vector>

namespace berth::bench {

struct ProcSample {
  long long cpu_ticks = 0;  // utime + stime + cutime + cstime: the process and its reaped children
  long rss_kib = 0;         // VmRSS
  long pss_kib = 0;         // Pss from smaps_rollup: shared pages split among their users
};

struct RuntimeSample {
  ProcSample daemon;
  std::map<int, ProcSample> helpers;  // by pid
  long helpers_rss_kib() const;
  long helpers_pss_kib() const;
};

struct RuntimeProcsOptions {
  int daemon_pid = 0;
  std::vector<std::string> helper_exes;  // executable base names, e.g. containerd-shim-runc-v2, berth-monitor
  std::string helper_marker;             // a string each helper's command line holds (the daemon's socket or work dir)
};

class RuntimeProcs {
 public:
  explicit RuntimeProcs(RuntimeProcsOptions o) : o_(std::move(o)) {}
  bool enabled() const { return o_.daemon_pid > 0; }
  RuntimeSample sample() const;

 private:
  RuntimeProcsOptions o_;
};

// CPU seconds the runtime spent between two samples: the daemon's difference, plus for every
// helper seen at the end its difference from the start (its whole time when it started later).
// A helper that exited between the samples loses the time it spent after `start`.
struct CpuSeconds {
  double daemon = 0, helpers = 0;
};
CpuSeconds cpu_between(const RuntimeSample& start, const RuntimeSample& end);

// The growth of daemon + helpers memory from `before` to `after`, divided by `pods`, in MiB.
struct PerPodMib {
  double rss = 0, pss = 0;
};
PerPodMib memory_per_pod(const RuntimeSample& before, const RuntimeSample& after, size_t pods);

// One line: daemon RSS, helpers' count, RSS and Pss.
void print_runtime_memory(const char* when, const RuntimeSample& s);

}  // namespace berth::bench
