// CheckpointContainer: the container's processes and writable layer into an archive at the
// request's location (ContainerManager::checkpoint); the container runs on.
#include "berth/container_manager.h"
#include "rpc_scope.h"
#include "services.h"

namespace berth {

grpc::Status RuntimeServiceImpl::CheckpointContainer(grpc::ServerContext*, const v1::CheckpointContainerRequest* req,
                                                     v1::CheckpointContainerResponse*) {
  RpcScope scope("CheckpointContainer", "container=" + req->container_id() + " location=" + req->location());
  if (req->container_id().empty()) return scope.done(invalid_argument("container_id: must not be empty"));
  return scope.done(ctx_.containers.checkpoint(req->container_id(), req->location(), req->timeout()));
}

}  // namespace berth
