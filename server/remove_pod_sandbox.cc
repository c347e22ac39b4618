// RemovePodSandbox: once no container can join the pod any more, removes its containers (killing
// running ones), stops the sandbox when needed and removes it; idempotent; an unknown id succeeds.
#include "rpc_scope.h"
#include "services.h"
#include "nri_bridge.h"
#include "berth/container_manager.h"
#include "berth/sandbox_manager.h"
#include "call_limits.h"
#include "lifecycle_events.h"

namespace berth {

grpc::Status RuntimeServiceImpl::RemovePodSandbox(grpc::ServerContext*, const v1::RemovePodSandboxRequest* req,
                                                  v1::RemovePodSandboxResponse*) {
  RpcScope scope("RemovePodSandbox", "sandbox=" + req->pod_sandbox_id());
  auto slot = ctx_.call_limits.enter(CallClass::lifecycle);
  if (!slot.ok()) return scope.done(slot.status());
  if (req->pod_sandbox_id().empty()) return scope.done(invalid_argument("pod_sandbox_id: must not be empty"));
  auto before = ctx_.sandboxes.info(req->pod_sandbox_id());
  const bool nri =
      before && (ctx_.nri.wants(nri_api::NRI_REMOVE_CONTAINER) || ctx_.nri.wants(nri_api::NRI_REMOVE_POD_SANDBOX));
  const auto pod_view = nri ? ctx_.nri.pod_view(before->id) : nri_api::PodSandbox();
  berth::Status s = ctx_.sandboxes.remove(req->pod_sandbox_id(), [&](const std::string& id) -> berth::Status {
    for (const auto& c : ctx_.containers.ids_in_sandbox(id)) {
      const auto view = nri ? ctx_.nri.container_view(c) : nri_api::Container();
      if (berth::Status st = ctx_.containers.remove(c); !st.ok()) return st;
      if (nri) ctx_.nri.container_removed(pod_view, view);
    }
    return ok_status();
  });
  if (s.ok() && before) ctx_.events.sandbox_changed(before->id, v1::CONTAINER_DELETED_EVENT, false);
  if (s.ok() && nri) ctx_.nri.pod_removed(before->id, pod_view);
  return scope.done(s);
}

}  // namespace berth
