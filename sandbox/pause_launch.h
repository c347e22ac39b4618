// Starting the embedded berth-pause without the OCI runtime: berth-pause-launch
// (program/berth_pause_launch.cc) given everything the pause's OCI spec says, in a cgroup made here
// (internal to sandbox/).
#pragma once

#include <sys/types.h>

#include <string>

#include "berth/oci_spec.h"
#include "berth/seccomp_filter.h"
#include "berth/status.h"

namespace berth {

// Starts the pause the spec describes and returns its pid. UNIMPLEMENTED, before anything is made,
// when the spec asks for what only the runtime does (capabilities: a privileged pod; the systemd
// cgroup driver; a field the launcher does not know): the caller runs the runtime instead. The
// cgroup made stays on failure, for the sandbox's release to remove.
Result<pid_t> launch_pause(const std::string& launcher, const oci::Spec& spec, bool systemd_cgroup,
                           SeccompProgramCache& seccomp);

}  // namespace berth
