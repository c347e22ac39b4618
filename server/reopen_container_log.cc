// ReopenContainerLog: the container's monitor reopens the log path (kubelet renamed the file) and
// the call returns once the new file exists; a container that is not running is an error.
#include "rpc_scope.h"
#include "services.h"
#include "berth/container_manager.h"

namespace berth {

grpc::Status RuntimeServiceImpl::ReopenContainerLog(grpc::ServerContext*, const v1::ReopenContainerLogRequest* req,
                                                    v1::ReopenContainerLogResponse*) {
  RpcScope scope("ReopenContainerLog", "container=" + req->container_id());
  if (req->container_id().empty()) return scope.done(invalid_argument("container_id: must not be empty"));
  return scope.done(ctx_.containers.reopen_log(req->container_id()));
}

}  // namespace berth
