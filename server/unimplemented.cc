// RPCs that no issue has built yet: each answers UNIMPLEMENTED naming itself.
#include "rpc_scope.h"
#include "services.h"

namespace berth {

grpc::Status RuntimeServiceImpl::StreamPodSandboxes(grpc::ServerContext*, const v1::StreamPodSandboxesRequest*, grpc::ServerWriter<v1::StreamPodSandboxesResponse>*) {
  return unimplemented_rpc("StreamPodSandboxes");
}

grpc::Status RuntimeServiceImpl::StreamContainers(grpc::ServerContext*, const v1::StreamContainersRequest*, grpc::ServerWriter<v1::StreamContainersResponse>*) {
  return unimplemented_rpc("StreamContainers");
}

grpc::Status RuntimeServiceImpl::Exec(grpc::ServerContext*, const v1::ExecRequest*, v1::ExecResponse*) {
  return unimplemented_rpc("Exec");
}

grpc::Status RuntimeServiceImpl::Attach(grpc::ServerContext*, const v1::AttachRequest*, v1::AttachResponse*) {
  return unimplemented_rpc("Attach");
}

grpc::Status RuntimeServiceImpl::PortForward(grpc::ServerContext*, const v1::PortForwardRequest*, v1::PortForwardResponse*) {
  return unimplemented_rpc("PortForward");
}

grpc::Status RuntimeServiceImpl::ContainerStats(grpc::ServerContext*, const v1::ContainerStatsRequest*, v1::ContainerStatsResponse*) {
  return unimplemented_rpc("ContainerStats");
}

grpc::Status RuntimeServiceImpl::ListContainerStats(grpc::ServerContext*, const v1::ListContainerStatsRequest*, v1::ListContainerStatsResponse*) {
  return unimplemented_rpc("ListContainerStats");
}

grpc::Status RuntimeServiceImpl::StreamContainerStats(grpc::ServerContext*, const v1::StreamContainerStatsRequest*, grpc::ServerWriter<v1::StreamContainerStatsResponse>*) {
  return unimplemented_rpc("StreamContainerStats");
}

grpc::Status RuntimeServiceImpl::PodSandboxStats(grpc::ServerContext*, const v1::PodSandboxStatsRequest*, v1::PodSandboxStatsResponse*) {
  return unimplemented_rpc("PodSandboxStats");
}

grpc::Status RuntimeServiceImpl::ListPodSandboxStats(grpc::ServerContext*, const v1::ListPodSandboxStatsRequest*, v1::ListPodSandboxStatsResponse*) {
  return unimplemented_rpc("ListPodSandboxStats");
}

grpc::Status RuntimeServiceImpl::StreamPodSandboxStats(grpc::ServerContext*, const v1::StreamPodSandboxStatsRequest*, grpc::ServerWriter<v1::StreamPodSandboxStatsResponse>*) {
  return unimplemented_rpc("StreamPodSandboxStats");
}

grpc::Status RuntimeServiceImpl::CheckpointContainer(grpc::ServerContext*, const v1::CheckpointContainerRequest*, v1::CheckpointContainerResponse*) {
  return unimplemented_rpc("CheckpointContainer");
}

grpc::Status RuntimeServiceImpl::ListPodSandboxMetrics(grpc::ServerContext*, const v1::ListPodSandboxMetricsRequest*, v1::ListPodSandboxMetricsResponse*) {
  return unimplemented_rpc("ListPodSandboxMetrics");
}

grpc::Status RuntimeServiceImpl::StreamPodSandboxMetrics(grpc::ServerContext*, const v1::StreamPodSandboxMetricsRequest*, grpc::ServerWriter<v1::StreamPodSandboxMetricsResponse>*) {
  return unimplemented_rpc("StreamPodSandboxMetrics");
}

grpc::Status RuntimeServiceImpl::UpdatePodSandboxResources(grpc::ServerContext*, const v1::UpdatePodSandboxResourcesRequest*, v1::UpdatePodSandboxResourcesResponse*) {
  return unimplemented_rpc("UpdatePodSandboxResources");
}

}  // namespace berth
