// UpdateContainerResources: applied through the runtime's update and kept in the record.
#include "rpc_scope.h"
#include "services.h"
#include "nri_bridge.h"
#include "berth/container_manager.h"

namespace berth {

grpc::Status RuntimeServiceImpl::UpdateContainerResources(grpc::ServerContext*,
                                                          const v1::UpdateContainerResourcesRequest* req,
                                                          v1::UpdateContainerResourcesResponse*) {
  RpcScope scope("UpdateContainerResources", "container=" + req->container_id());
  if (req->container_id().empty()) return scope.done(invalid_argument("container_id: must not be empty"));
  auto resources = ctx_.nri.container_updating(req->container_id(), req->linux());
  if (!resources.ok()) return scope.done(resources.status());
  berth::Status s = ctx_.containers.update_resources(req->container_id(), *resources);
  if (s.ok()) ctx_.nri.container_updated(req->container_id());
  return scope.done(s);
}

}  // namespace berth
