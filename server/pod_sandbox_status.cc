// PodSandboxStatus: from memory, with the containers' statuses and the moment they were read
// (kubelet's Evented PLEG takes both from it); verbose adds pid, netns path, checkpoint path and
// the OCI spec.
#include "rpc_scope.h"
#include "services.h"
#include "berth/sandbox_manager.h"
#include "pod_status_snapshot.h"

namespace berth {

grpc::Status RuntimeServiceImpl::PodSandboxStatus(grpc::ServerContext*, const v1::PodSandboxStatusRequest* req,
                                                  v1::PodSandboxStatusResponse* resp) {
  RpcScope scope("PodSandboxStatus", "sandbox=" + req->pod_sandbox_id());
  if (req->pod_sandbox_id().empty()) return scope.done(invalid_argument("pod_sandbox_id: must not be empty"));
  return scope.done(read_pod_status(ctx_.sandboxes, ctx_.containers, req->pod_sandbox_id(), req->verbose(), resp));
}

}  // namespace berth
