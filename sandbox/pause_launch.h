// Starting the embedded berth-pause without the OCI runtime: berth-pause-launch
// (program/berth_pause_launch.cc) given everything the pause's OCI spec says, in a cgroup made here
// (internal to sandbox/).
#pragma once

#include <sys/types.h>

#include <string>

#include "berth/oci_spec.h"
#include "berth/seccomp_filter.h"
#include "berth/systemd_units.h"
#include "berth/status.h"

namespace berth {

// Starts the pause the spec describes and returns its pid. UNIMPLEMENTED, before anything is made,
// when the spec asks for what only the runtime does (capabilities: a privileged pod; a field the
// launcher does not know): the caller runs the runtime instead. The cgroup made stays on failure,
// for the sandbox's release to remove (a scope goes by itself once the launcher has exited).
// With the systemd cgroup driver (`systemd` set) the pause's cgroup is a transient scope systemd
// makes with the launcher in it.
Result<pid_t> launch_pause(const std::string& launcher, const oci::Spec& spec, SystemdUnits* systemd,
                           SeccompProgramCache& seccomp);

}  // namespace berth
