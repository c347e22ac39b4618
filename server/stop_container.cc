// StopContainer: the stop signal, then SIGKILL after `timeout` seconds; idempotent, and an
// unknown id succeeds.
#include "rpc_scope.h"
#include "services.h"
#include "nri_bridge.h"
#include "berth/container_manager.h"
#include "call_limits.h"

namespace berth {

grpc::Status RuntimeServiceImpl::StopContainer(grpc::ServerContext*, const v1::StopContainerRequest* req,
                                               v1::StopContainerResponse*) {
  RpcScope scope("StopContainer", "container=" + req->container_id());
  auto slot = ctx_.call_limits.enter(CallClass::lifecycle);
  if (!slot.ok()) return scope.done(slot.status());
  if (req->container_id().empty()) return scope.done(invalid_argument("container_id: must not be empty"));
  if (req->timeout() < 0) return scope.done(invalid_argument("timeout: must not be negative"));
  berth::Status s = ctx_.containers.stop(req->container_id(), req->timeout());
  if (s.ok()) ctx_.nri.container_stopped(req->container_id());
  return scope.done(s);
}

}  // namespace berth
