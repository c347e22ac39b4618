// StartContainer: a start that fails leaves the container EXITED with the reason and message.
#include "rpc_scope.h"
#include "services.h"
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
  return scope.done(ctx_.containers.start(req->container_id()));
}

}  // namespace berth
