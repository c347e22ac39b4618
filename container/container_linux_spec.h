// The linux section of a container's OCI spec and its AppArmor profile choice (internal to
// container/; see container_spec.h for the whole spec).
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "berth/container_spec.h"

namespace berth {

// Who owns the devices config.devices gives, inside the container; unset: their host owner.
struct DeviceOwner {
  uint32_t uid = 0, gid = 0;
};

// Namespaces joined from the pod, cgroups path, resources, devices, seccomp (RuntimeDefault
// follows the process's `capabilities`), masked and read-only paths.
Result<oci::Linux> linux_section(const runtime::v1::ContainerConfig& config, const PodForContainer& pod,
                                 const ContainerSpecInputs& in, bool privileged,
                                 const std::vector<std::string>& capabilities,
                                 std::optional<DeviceOwner> device_owner = std::nullopt);

// The process.apparmorProfile value ("" for none). Without AppArmor on the host only a Localhost
// profile is an error; RuntimeDefault uses `default_profile` (berth's, loaded by the caller).
Result<std::string> apparmor_profile(const runtime::v1::LinuxContainerSecurityContext& sc, bool host_apparmor,
                                     const std::string& default_profile);

}  // namespace berth
