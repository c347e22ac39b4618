// CreateContainer: the sandbox must exist and be ready; the whole build of the container (image,
// rootfs, spec, record, log file) lives in ContainerManager.
#include "request_checks.h"
#include "rpc_scope.h"
#include "services.h"
#include "nri_bridge.h"
#include "memory_headroom.h"
#include "berth/container_manager.h"
#include "call_limits.h"

namespace berth {

grpc::Status RuntimeServiceImpl::CreateContainer(grpc::ServerContext*, const v1::CreateContainerRequest* req,
                                                 v1::CreateContainerResponse* resp) {
  RpcScope scope("CreateContainer", "sandbox=" + req->pod_sandbox_id() + " name=" + req->config().metadata().name());
  auto slot = ctx_.call_limits.enter(CallClass::lifecycle);
  if (!slot.ok()) return scope.done(slot.status());
  auto memory = ctx_.memory_headroom.enter("CreateContainer", MemoryHeadroom::kSmallCost);
  if (!memory.ok()) return scope.done(memory.status());
  if (req->pod_sandbox_id().empty()) return scope.done(invalid_argument("pod_sandbox_id: must not be empty"));
  if (!req->has_config()) return scope.done(invalid_argument("config: missing"));
  if (berth::Status s = check_container_config(req->config()); !s.ok()) return scope.done(s);
  auto id = ctx_.containers.create(req->pod_sandbox_id(), req->config());
  if (!id.ok()) return scope.done(id.status());
  scope.add_id("container", *id);
  resp->set_container_id(*id);
  ctx_.nri.container_created(*id);
  return scope.done(ok_status());
}

}  // namespace berth
