// StopPodSandbox: kills the pod's containers still running (kubelet stopped them with their grace
// period before), then the network and the pause; idempotent; an unknown id succeeds.
#include "rpc_scope.h"
#include "sandbox_events.h"
#include "services.h"

namespace berth {

grpc::Status RuntimeServiceImpl::StopPodSandbox(grpc::ServerContext*, const v1::StopPodSandboxRequest* req, v1::StopPodSandboxResponse*) {
  RpcScope scope("StopPodSandbox", "sandbox=" + req->pod_sandbox_id());
  if (req->pod_sandbox_id().empty()) return scope.done(invalid_argument("pod_sandbox_id: must not be empty"));
  auto before = ctx_.sandboxes.info(req->pod_sandbox_id());
  if (before) {
    for (const auto& id : ctx_.containers.ids_in_sandbox(before->id))
      if (berth::Status s = ctx_.containers.stop(id, 0); !s.ok()) return scope.done(s.context("stop pod sandbox " + before->id));
  }
  berth::Status s = ctx_.sandboxes.stop(req->pod_sandbox_id());
  if (s.ok() && before && before->ready) publish_sandbox_event(ctx_, before->id, v1::CONTAINER_STOPPED_EVENT);
  return scope.done(s);
}

}  // namespace berth
