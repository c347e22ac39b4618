// The pod's status with its containers' statuses, as PodSandboxStatus answers it and as every
// lifecycle event carries it. kubelet's Evented PLEG keeps whichever status of a pod has the newer
// timestamp (a relist's or an event's), so the timestamp is taken before anything is read: the
// statuses are never older than it says.
#pragma once

#include <string>

#include "berth/container_manager.h"
#include "berth/cri_messages.h"
#include "berth/sandbox_manager.h"

namespace berth {

Status read_pod_status(SandboxManager& sandboxes, ContainerManager& containers, const std::string& id_or_prefix,
                       bool verbose, runtime::v1::PodSandboxStatusResponse* out);

}  // namespace berth
