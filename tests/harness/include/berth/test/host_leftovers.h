// host_leftovers: everything berth's pods and containers can leave on a host, looked for in the
// kernel and on disk rather than asked of berthd: netns pins and every mount under berthd's dirs,
// cgroups under the test's cgroup parent and the processes in them, the OCI runtime's containers,
// berth-monitor and runtime processes naming berthd's dirs, host-local addresses, veths and
// portmap rules of the test network, and every record, bundle, cache entry, blob or snapshot.
// Crash tests and the crash benchmark assert (or count) with this one census.
#pragma once

#include <string>
#include <vector>

#include "berth/test/test_network.h"

namespace berth::test {

struct LeftoverScope {
  std::string root, state;    // berthd's --root and --state
  std::string cgroup_parent;  // the pods' cgroup parent, e.g. "/berth-fault-3" (cgroupfs form)
  const TestNetwork* network = nullptr;
  // Images are state a node keeps: their blobs and snapshots count only when asked (the caller
  // removed every image first, so none may be left).
  bool images_removed = false;
  // A berthd nested in a container (the node image) rather than one on this host: the pid of a
  // process of that container. root, state and cgroup_parent are then as the container sees
  // them, read through /proc/<pid>/root; the mounts are those of its mount namespace, and a
  // process naming berthd's dirs counts only in its pid namespace (another node's berthd may use
  // the same paths in its own).
  int nested_in_pid = 0;
};

// One line per thing found, "<kind>: <what>"; empty when the host holds nothing of the scope.
std::vector<std::string> host_leftovers(const LeftoverScope& scope);

// Forcibly releases what a failed test may have left of the scope (processes in the cgroup
// parent or naming berthd's dirs are killed, the runtime's containers deleted, the cgroups
// removed); mounts and files go with the test's temp dirs, rules and addresses with its network.
void release_host_leftovers(const LeftoverScope& scope);

// Processes on the host running exactly `argv`, and zombies whose name is argv[0]'s (a zombie has
// no command line) left by this test's pods or processes, as "<pid> <state> <name>": what a
// command killed in a container may leave.
std::vector<std::string> host_processes_running(const std::vector<std::string>& argv);

// `runc init` processes (a runtime create cut short leaves one blocked for good) of the runc
// state dirs below `state` (berthd's --state: runc tells its init the container's state dir in
// _LIBCONTAINER_STATEDIR), or on the whole host when `state` is empty; compare with a count taken
// before.
int runc_init_processes(const std::string& state = "");

}  // namespace berth::test
