// UpdatePodSandboxResources (in-place pod resize): the new pod-level resources are recorded in the
// pod's checkpoint and status; only a pod cgroup berth made itself gets them written (kubelet has
// already set the ones it made).
#include "rpc_scope.h"
#include "services.h"
#include "nri_bridge.h"
#include "berth/sandbox_manager.h"

namespace berth {

grpc::Status RuntimeServiceImpl::UpdatePodSandboxResources(grpc::ServerContext*,
                                                           const v1::UpdatePodSandboxResourcesRequest* req,
                                                           v1::UpdatePodSandboxResourcesResponse*) {
  RpcScope scope("UpdatePodSandboxResources", "sandbox=" + req->pod_sandbox_id());
  if (req->pod_sandbox_id().empty()) return scope.done(invalid_argument("pod_sandbox_id: must not be empty"));
  if (berth::Status s = ctx_.nri.pod_updating(req->pod_sandbox_id(), req->overhead(), req->resources()); !s.ok())
    return scope.done(s);
  berth::Status s = ctx_.sandboxes.update_resources(req->pod_sandbox_id(), req->overhead(), req->resources());
  if (s.ok()) ctx_.nri.pod_updated(req->pod_sandbox_id());
  return scope.done(s);
}

}  // namespace berth
