// RPCs that no issue has built yet: each answers UNIMPLEMENTED naming itself.
#include "rpc_scope.h"
#include "services.h"

namespace berth {

grpc::Status RuntimeServiceImpl::CheckpointContainer(grpc::ServerContext*, const v1::CheckpointContainerRequest*, v1::CheckpointContainerResponse*) {
  return unimplemented_rpc("CheckpointContainer");
}

grpc::Status RuntimeServiceImpl::UpdatePodSandboxResources(grpc::ServerContext*, const v1::UpdatePodSandboxResourcesRequest*, v1::UpdatePodSandboxResourcesResponse*) {
  return unimplemented_rpc("UpdatePodSandboxResources");
}

}  // namespace berth
