// UpdatePodSandboxResources (in-place pod resize): the pod's own cgroup gets the new pod-level
// limits, recorded in its checkpoint.
#include "rpc_scope.h"
#include "services.h"
#include "berth/sandbox_manager.h"

namespace berth {

grpc::Status RuntimeServiceImpl::UpdatePodSandboxResources(grpc::ServerContext*, const v1::UpdatePodSandboxResourcesRequest* req,
                                                           v1::UpdatePodSandboxResourcesResponse*) {
  RpcScope scope("UpdatePodSandboxResources", "sandbox=" + req->pod_sandbox_id());
  if (req->pod_sandbox_id().empty()) return scope.done(invalid_argument("pod_sandbox_id: must not be empty"));
  return scope.done(ctx_.sandboxes.update_resources(req->pod_sandbox_id(), req->overhead(), req->resources()));
}

}  // namespace berth
