// The cgroupsPath an OCI runtime gets for a sandbox or container: "<parent>/<id>" with the
// cgroupfs driver, "<slice>:berth:<id>" with the systemd driver (the parent must be a slice).
#pragma once

#include <string>

#include "berth/status.h"

namespace berth {

// An empty parent means /berth (cgroupfs) or system.slice (systemd). Errors name
// linux.cgroup_parent and say which driver is configured.
Result<std::string> cgroups_path_for(const std::string& parent, const std::string& id, bool systemd);

// The cgroup directory (relative to a hierarchy's mount, starting with '/') the runtime makes for
// a cgroupsPath: the path itself for cgroupfs; for systemd, the slice expanded into its parents
// ("a-b.slice" -> "/a.slice/a-b.slice") and the unit "<prefix>-<name>.scope".
std::string cgroup_dir_of(const std::string& cgroups_path, bool systemd);

// The units of a systemd cgroupsPath: its slice and "<prefix>-<name>.scope". Empty names for a
// path not in that form.
struct SystemdCgroup {
  std::string slice, scope;
};
SystemdCgroup systemd_cgroup_of(const std::string& cgroups_path);

// The kernel's count of OOM kills in that cgroup (v1 memory.oom_control, v2 memory.events).
long cgroup_oom_kills(const std::string& cgroup_dir);

// True on a cgroup v2 (unified) host.
bool host_cgroup_v2();

}  // namespace berth
