// Removing a sandbox's or container's cgroup whatever the runtime left: its processes are killed
// and its directory removed in every mounted hierarchy (v1 controllers, named and v2). The
// runtime's delete normally does this; a runtime killed mid-create, or state it lost, leaves the
// directory (and maybe a blocked `runc init` in it) behind, and a pod must never leak it.
#pragma once

#include <string>
#include <vector>

#include "berth/status.h"

namespace berth {

// The mount points of the cgroup hierarchies of this host (read once from /proc/self/mountinfo).
const std::vector<std::string>& cgroup_hierarchy_mounts();
// The same from a mountinfo text: one mount point per hierarchy (by device), its root's mount
// where it is mounted, else the first bind of a sub-tree (inside a container).
std::vector<std::string> cgroup_hierarchy_mounts_in(const std::string& mountinfo);

// Kills every process left in the cgroup of `cgroups_path` (as given to the runtime), waits until
// it is empty and removes the directory in every hierarchy. A cgroup that does not exist is fine.
// Errors name the directory that stayed.
Status remove_cgroup(const std::string& cgroups_path, bool systemd);

// True when the cgroup exists in some hierarchy.
bool cgroup_exists(const std::string& cgroups_path, bool systemd);

// True when the cgroup directory `dir` (absolute) has a child cgroup or a process in it.
bool cgroup_holds_anything(const std::string& dir);

}  // namespace berth
