// Telling a process berth started from whatever now has its pid: the kernel's start time of a pid,
// the cgroup it is in, and a pidfd, which names one process for good (a recycled pid is another
// process, never the same pidfd). Recovery uses these to learn, without running the OCI runtime,
// which pauses and containers of its records still run.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <string>

#include "berth/unique_fd.h"

namespace berth {

// Field 22 of /proc/<pid>/stat (clock ticks since boot); 0 when there is no such live process (a
// zombie counts as gone).
unsigned long long process_start_time(pid_t pid);

// True when one of the process's cgroups (any hierarchy) ends with `/<leaf>`: a pause or container
// init is in the cgroup named by its sandbox or container id.
bool process_in_cgroup_leaf(pid_t pid, const std::string& leaf);

// The process's cgroup in the unified (v2) hierarchy, "/a/b" from its "0::/a/b" line; "" when it
// has none (a v1 host) or is gone.
std::string unified_cgroup_of(pid_t pid);

// A pidfd for `pid` (invalid when the process is gone or the kernel has no pidfd_open).
UniqueFd open_pidfd(pid_t pid);

// True while the process behind the pidfd has not exited (poll without waiting).
bool pidfd_alive(int pidfd);

// The pid in a pid file written by a runtime (--pid-file); 0 when absent or unreadable.
pid_t read_pid_file(const std::string& path);

// SIGKILLs the process `pid` only if it is (still) one in the cgroup named `cgroup_leaf` (a
// process of that container, not a stranger that got its pid since), through a pidfd, and waits
// up to `wait` for it to be gone. True when it is gone (or was already).
bool kill_container_process(pid_t pid, const std::string& cgroup_leaf, std::chrono::milliseconds wait);

}  // namespace berth
