// StartContainer: a start that fails leaves the container EXITED with the reason and message.
#include "rpc_scope.h"
#include "services.h"
#include "nri_bridge.h"
#include "memory_headroom.h"
#include "berth/container_manager.h"
#include "call_limits.h"

namespace berth {

grpc::Status RuntimeServiceImpl::StartContainer(grpc::ServerContext*, const v1::StartContainerRequest* req,
                                                v1::StartContainerResponse*) {
  RpcScope scope("StartContainer", "container=" + req->container_id());
  auto slot = ctx_.call_limits.enter(CallClass::lifecycle);
  if (!slot.ok()) return scope.done(slot.status());
  auto memory = ctx_.memory_headroom.enter("StartContainer", MemoryHeadroom::kStartCost);
  if (!memory.ok()) return scope.done(memory.status());
  if (req->container_id().empty()) return scope.done(invalid_argument("container_id: must not be empty"));
  if (berth::Status s = ctx_.nri.container_starting(req->container_id()); !s.ok()) return scope.done(s);
  berth::Status s = ctx_.containers.start(req->container_id());
  if (s.ok()) ctx_.nri.container_started(req->container_id());
  return scope.done(s);
}

}  // namespace berth
