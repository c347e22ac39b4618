// Lifecycle events for GetContainerEvents: kubelet's Evented PLEG reads sandbox events (the
// sandbox id as container id) and container events on one stream, each with the pod's status and
// the statuses of its containers as they are after the change.
#pragma once

#include "services.h"

namespace berth {

void publish_sandbox_event(ServiceContext& ctx, const std::string& id, v1::ContainerEventType type, bool with_status = true);
void publish_container_event(ServiceContext& ctx, const std::string& container_id, const std::string& sandbox_id,
                             v1::ContainerEventType type);

}  // namespace berth
