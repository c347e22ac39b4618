// RPCs that no issue has built yet: each answers UNIMPLEMENTED naming itself.
#include "rpc_scope.h"
#include "services.h"

namespace berth {

grpc::Status RuntimeServiceImpl::Exec(grpc::ServerContext*, const v1::ExecRequest*, v1::ExecResponse*) {
  return unimplemented_rpc("Exec");
}

grpc::Status RuntimeServiceImpl::Attach(grpc::ServerContext*, const v1::AttachRequest*, v1::AttachResponse*) {
  return unimplemented_rpc("Attach");
}

grpc::Status RuntimeServiceImpl::PortForward(grpc::ServerContext*, const v1::PortForwardRequest*, v1::PortForwardResponse*) {
  return unimplemented_rpc("PortForward");
}

grpc::Status RuntimeServiceImpl::CheckpointContainer(grpc::ServerContext*, const v1::CheckpointContainerRequest*, v1::CheckpointContainerResponse*) {
  return unimplemented_rpc("CheckpointContainer");
}

grpc::Status RuntimeServiceImpl::UpdatePodSandboxResources(grpc::ServerContext*, const v1::UpdatePodSandboxResourcesRequest*, v1::UpdatePodSandboxResourcesResponse*) {
  return unimplemented_rpc("UpdatePodSandboxResources");
}

}  // namespace berth
