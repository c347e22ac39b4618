// berth's RuntimeDefault AppArmor profile ("berth-default"): on hosts with AppArmor enabled it is
// loaded (apparmor_parser) the first time a container asks for it, as containerd loads its own.
// Persists the profile text under the runtime state dir.
#pragma once

#include <string>

#include "berth/status.h"

namespace berth {

bool host_apparmor_enabled();

// The profile's text: everything allowed but mount, writes to /proc outside pid directories and
// the kernel.shm* sysctls, /proc/sysrq-trigger and /proc/kcore, writes to /sys outside
// /sys/fs/cgroup, /sys/firmware, /sys/devices/virtual/powercap and /sys/kernel/security; signals
// and ptrace only among processes of the profile (signals also from unconfined, runc and crun).
std::string apparmor_default_profile_text(const std::string& name);

// Loads `name` unless the kernel already has this text of it; returns the name to put in the spec.
Result<std::string> ensure_apparmor_default_profile(const std::string& state_dir,
                                                    const std::string& name = "berth-default");

}  // namespace berth
