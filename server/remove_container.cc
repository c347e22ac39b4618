// RemoveContainer: kills a running container first; idempotent, and an unknown id succeeds.
#include "rpc_scope.h"
#include "services.h"
#include "nri_bridge.h"
#include "berth/container_manager.h"
#include "call_limits.h"

namespace berth {

grpc::Status RuntimeServiceImpl::RemoveContainer(grpc::ServerContext*, const v1::RemoveContainerRequest* req,
                                                 v1::RemoveContainerResponse*) {
  RpcScope scope("RemoveContainer", "container=" + req->container_id());
  auto slot = ctx_.call_limits.enter(CallClass::lifecycle);
  if (!slot.ok()) return scope.done(slot.status());
  if (req->container_id().empty()) return scope.done(invalid_argument("container_id: must not be empty"));
  if (!ctx_.nri.wants(nri_api::NRI_REMOVE_CONTAINER)) return scope.done(ctx_.containers.remove(req->container_id()));
  const auto view = ctx_.nri.container_view(req->container_id());
  const auto pod = ctx_.nri.pod_view(view.pod_sandbox_id());
  berth::Status s = ctx_.containers.remove(req->container_id());
  if (s.ok() && !view.pod_sandbox_id().empty()) ctx_.nri.container_removed(pod, view);
  return scope.done(s);
}

}  // namespace berth
