// Sandbox lifecycle events for GetContainerEvents (kubelet's Evented PLEG reads sandbox events
// on the same stream, with the sandbox id as container id).
#pragma once

#include "services.h"

namespace berth {

void publish_sandbox_event(ServiceContext& ctx, const std::string& id, v1::ContainerEventType type, bool with_status = true);

}  // namespace berth
