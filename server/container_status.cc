// ContainerStatus: from memory; verbose adds the pid and the OCI spec in info["info"].
#include "rpc_scope.h"
#include "services.h"
#include "berth/container_manager.h"

namespace berth {

grpc::Status RuntimeServiceImpl::ContainerStatus(grpc::ServerContext*, const v1::ContainerStatusRequest* req,
                                                 v1::ContainerStatusResponse* resp) {
  RpcScope scope("ContainerStatus", "container=" + req->container_id());
  if (req->container_id().empty()) return scope.done(invalid_argument("container_id: must not be empty"));
  return scope.done(ctx_.containers.status(req->container_id(), req->verbose(), resp));
}

}  // namespace berth
