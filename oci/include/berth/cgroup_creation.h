// Making a cgroup as a runtime does when berth starts a process itself (a pod's pause without the
// OCI runtime): the directory in every mounted hierarchy, parents included, with cgroup v1's
// cpuset filled from its parent (an empty cpuset takes no process) and, on v2, the parents'
// controllers delegated down to it.
#pragma once

#include <string>
#include <vector>

#include "berth/status.h"

namespace berth {

// `dir` as cgroup_dir_of() gives it ("/berth/<id>"). Returns the cgroup.procs file of each
// hierarchy, for the process to join. Errors name the directory.
Result<std::vector<std::string>> create_cgroup(const std::string& dir);

}  // namespace berth
