// UpdatePodSandboxResources: the limits a pod's own cgroup gets (kubelet's pod-level resources
// plus the pod's overhead, as kubelet sizes the pod cgroup), checked field by field.
#pragma once

#include <nlohmann/json.hpp>

#include "berth/cgroup_limits.h"
#include "berth/cri_messages.h"
#include "berth/status.h"

namespace berth {

// Errors name the request field ("resources.cpu_quota: …").
Result<CgroupLimits> pod_cgroup_limits(const runtime::v1::LinuxContainerResources& overhead,
                                       const runtime::v1::LinuxContainerResources& resources);

// What was applied, as the checkpoint and verbose PodSandboxStatus show it.
nlohmann::json cgroup_limits_json(const CgroupLimits& limits);

}  // namespace berth
