// PodSandboxStatus: from memory; verbose adds pid, netns path, checkpoint path and the OCI spec.
#include "rpc_scope.h"
#include "services.h"
#include "berth/sandbox_manager.h"

namespace berth {

grpc::Status RuntimeServiceImpl::PodSandboxStatus(grpc::ServerContext*, const v1::PodSandboxStatusRequest* req,
                                                  v1::PodSandboxStatusResponse* resp) {
  RpcScope scope("PodSandboxStatus", "sandbox=" + req->pod_sandbox_id());
  if (req->pod_sandbox_id().empty()) return scope.done(invalid_argument("pod_sandbox_id: must not be empty"));
  return scope.done(ctx_.sandboxes.status(req->pod_sandbox_id(), req->verbose(), resp));
}

}  // namespace berth
