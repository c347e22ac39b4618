// StopPodSandbox: once no container can join the pod any more, kills its containers still running
// (kubelet stopped them with their grace period before), then the network and the pause;
// idempotent; an unknown id succeeds.
#include "rpc_scope.h"
#include "services.h"
#include "nri_bridge.h"
#include "berth/container_manager.h"
#include "berth/sandbox_manager.h"
#include "call_limits.h"
#include "lifecycle_events.h"

namespace berth {

grpc::Status RuntimeServiceImpl::StopPodSandbox(grpc::ServerContext*, const v1::StopPodSandboxRequest* req,
                                                v1::StopPodSandboxResponse*) {
  RpcScope scope("StopPodSandbox", "sandbox=" + req->pod_sandbox_id());
  auto slot = ctx_.call_limits.enter(CallClass::lifecycle);
  if (!slot.ok()) return scope.done(slot.status());
  if (req->pod_sandbox_id().empty()) return scope.done(invalid_argument("pod_sandbox_id: must not be empty"));
  auto before = ctx_.sandboxes.info(req->pod_sandbox_id());
  berth::Status s = ctx_.sandboxes.stop(req->pod_sandbox_id(), [this](const std::string& id) -> berth::Status {
    for (const auto& c : ctx_.containers.ids_in_sandbox(id)) {
      if (berth::Status st = ctx_.containers.stop(c, 0); !st.ok()) return st;
      ctx_.nri.container_stopped(c);
    }
    return ok_status();
  });
  if (s.ok() && before && before->ready) ctx_.events.sandbox_changed(before->id, v1::CONTAINER_STOPPED_EVENT);
  if (s.ok() && before) ctx_.nri.pod_stopped(before->id);
  return scope.done(s);
}

}  // namespace berth
