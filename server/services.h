// The gRPC services berthd serves. Each rpc's handler lives in a file named after the rpc
// (version.cc, runtime_status.cc, ...); rpcs no issue has built yet are in unimplemented.cc.
#pragma once

#include <functional>

#include "berth/cri_api.h"

namespace berth {

// ServiceContext holds references only: each handler includes the headers of what it uses, so it
// is compiled with the managers it calls, not with every one.

struct Config;
class RuntimeHandlers;
class RuntimeProbe;
class MetricsRegistry;
class HistogramFamily;
template <class Event>
class EventHub;
class LifecycleEvents;
class ImageManager;
class SandboxManager;
class CniManager;
class ContainerManager;
class StatsCollector;
class StreamingServer;
class CallLimits;
class MemoryHeadroom;
class PinnedImages;
class NriBridge;

namespace v1 = runtime::v1;

// What the handlers share: the config (as started and as reloaded since) and the managers the
// daemon owns.
struct ServiceContext {
  const Config& config;                      // as berthd started
  std::function<Config()> effective_config;  // after the reloads since (SIGHUP)
  const RuntimeHandlers& runtimes;           // the handler table sandboxes and containers use
  RuntimeProbe& runtime_probe;
  MetricsRegistry& metrics;
  // Container and sandbox lifecycle events for GetContainerEvents subscribers.
  EventHub<v1::ContainerEventResponse>& container_events;
  LifecycleEvents& events;  // publishes sandbox and container lifecycle events into container_events
  ImageManager& images;
  SandboxManager& sandboxes;
  CniManager& cni;
  ContainerManager& containers;
  StatsCollector& stats;
  StreamingServer& streaming;
  // Families the handlers record into (pull bytes are counted by the registry client itself).
  HistogramFamily& image_pull_duration;  // berth_image_pull_duration_seconds{result}
  HistogramFamily& sandbox_start;        // berth_sandbox_start_duration_seconds{result}
  CallLimits& call_limits;               // shares of the gRPC threads for calls that can run long
  MemoryHeadroom& memory_headroom;       // new work refused near berthd's cgroup memory limit
  PinnedImages& pinned_images;           // berth.toml's pinned_images, as reloaded
  NriBridge& nri;                        // NRI plugins told of each step ([nri] enable)
};

class RuntimeServiceImpl final : public v1::RuntimeService::Service {
 public:
  explicit RuntimeServiceImpl(ServiceContext& ctx) : ctx_(ctx) {}

  grpc::Status Version(grpc::ServerContext* ctx, const v1::VersionRequest* req, v1::VersionResponse* resp) override;
  grpc::Status RunPodSandbox(grpc::ServerContext* ctx, const v1::RunPodSandboxRequest* req,
                             v1::RunPodSandboxResponse* resp) override;
  grpc::Status StopPodSandbox(grpc::ServerContext* ctx, const v1::StopPodSandboxRequest* req,
                              v1::StopPodSandboxResponse* resp) override;
  grpc::Status RemovePodSandbox(grpc::ServerContext* ctx, const v1::RemovePodSandboxRequest* req,
                                v1::RemovePodSandboxResponse* resp) override;
  grpc::Status PodSandboxStatus(grpc::ServerContext* ctx, const v1::PodSandboxStatusRequest* req,
                                v1::PodSandboxStatusResponse* resp) override;
  grpc::Status ListPodSandbox(grpc::ServerContext* ctx, const v1::ListPodSandboxRequest* req,
                              v1::ListPodSandboxResponse* resp) override;
  grpc::Status StreamPodSandboxes(grpc::ServerContext* ctx, const v1::StreamPodSandboxesRequest* req,
                                  grpc::ServerWriter<v1::StreamPodSandboxesResponse>* writer) override;
  grpc::Status CreateContainer(grpc::ServerContext* ctx, const v1::CreateContainerRequest* req,
                               v1::CreateContainerResponse* resp) override;
  grpc::Status StartContainer(grpc::ServerContext* ctx, const v1::StartContainerRequest* req,
                              v1::StartContainerResponse* resp) override;
  grpc::Status StopContainer(grpc::ServerContext* ctx, const v1::StopContainerRequest* req,
                             v1::StopContainerResponse* resp) override;
  grpc::Status RemoveContainer(grpc::ServerContext* ctx, const v1::RemoveContainerRequest* req,
                               v1::RemoveContainerResponse* resp) override;
  grpc::Status ListContainers(grpc::ServerContext* ctx, const v1::ListContainersRequest* req,
                              v1::ListContainersResponse* resp) override;
  grpc::Status StreamContainers(grpc::ServerContext* ctx, const v1::StreamContainersRequest* req,
                                grpc::ServerWriter<v1::StreamContainersResponse>* writer) override;
  grpc::Status ContainerStatus(grpc::ServerContext* ctx, const v1::ContainerStatusRequest* req,
                               v1::ContainerStatusResponse* resp) override;
  grpc::Status UpdateContainerResources(grpc::ServerContext* ctx, const v1::UpdateContainerResourcesRequest* req,
                                        v1::UpdateContainerResourcesResponse* resp) override;
  grpc::Status ReopenContainerLog(grpc::ServerContext* ctx, const v1::ReopenContainerLogRequest* req,
                                  v1::ReopenContainerLogResponse* resp) override;
  grpc::Status ExecSync(grpc::ServerContext* ctx, const v1::ExecSyncRequest* req, v1::ExecSyncResponse* resp) override;
  grpc::Status Exec(grpc::ServerContext* ctx, const v1::ExecRequest* req, v1::ExecResponse* resp) override;
  grpc::Status Attach(grpc::ServerContext* ctx, const v1::AttachRequest* req, v1::AttachResponse* resp) override;
  grpc::Status PortForward(grpc::ServerContext* ctx, const v1::PortForwardRequest* req,
                           v1::PortForwardResponse* resp) override;
  grpc::Status ContainerStats(grpc::ServerContext* ctx, const v1::ContainerStatsRequest* req,
                              v1::ContainerStatsResponse* resp) override;
  grpc::Status ListContainerStats(grpc::ServerContext* ctx, const v1::ListContainerStatsRequest* req,
                                  v1::ListContainerStatsResponse* resp) override;
  grpc::Status StreamContainerStats(grpc::ServerContext* ctx, const v1::StreamContainerStatsRequest* req,
                                    grpc::ServerWriter<v1::StreamContainerStatsResponse>* writer) override;
  grpc::Status PodSandboxStats(grpc::ServerContext* ctx, const v1::PodSandboxStatsRequest* req,
                               v1::PodSandboxStatsResponse* resp) override;
  grpc::Status ListPodSandboxStats(grpc::ServerContext* ctx, const v1::ListPodSandboxStatsRequest* req,
                                   v1::ListPodSandboxStatsResponse* resp) override;
  grpc::Status StreamPodSandboxStats(grpc::ServerContext* ctx, const v1::StreamPodSandboxStatsRequest* req,
                                     grpc::ServerWriter<v1::StreamPodSandboxStatsResponse>* writer) override;
  grpc::Status UpdateRuntimeConfig(grpc::ServerContext* ctx, const v1::UpdateRuntimeConfigRequest* req,
                                   v1::UpdateRuntimeConfigResponse* resp) override;
  grpc::Status Status(grpc::ServerContext* ctx, const v1::StatusRequest* req, v1::StatusResponse* resp) override;
  grpc::Status CheckpointContainer(grpc::ServerContext* ctx, const v1::CheckpointContainerRequest* req,
                                   v1::CheckpointContainerResponse* resp) override;
  grpc::Status GetContainerEvents(grpc::ServerContext* ctx, const v1::GetEventsRequest* req,
                                  grpc::ServerWriter<v1::ContainerEventResponse>* writer) override;
  grpc::Status ListMetricDescriptors(grpc::ServerContext* ctx, const v1::ListMetricDescriptorsRequest* req,
                                     v1::ListMetricDescriptorsResponse* resp) override;
  grpc::Status ListPodSandboxMetrics(grpc::ServerContext* ctx, const v1::ListPodSandboxMetricsRequest* req,
                                     v1::ListPodSandboxMetricsResponse* resp) override;
  grpc::Status StreamPodSandboxMetrics(grpc::ServerContext* ctx, const v1::StreamPodSandboxMetricsRequest* req,
                                       grpc::ServerWriter<v1::StreamPodSandboxMetricsResponse>* writer) override;
  grpc::Status RuntimeConfig(grpc::ServerContext* ctx, const v1::RuntimeConfigRequest* req,
                             v1::RuntimeConfigResponse* resp) override;
  grpc::Status UpdatePodSandboxResources(grpc::ServerContext* ctx, const v1::UpdatePodSandboxResourcesRequest* req,
                                         v1::UpdatePodSandboxResourcesResponse* resp) override;

 private:
  ServiceContext& ctx_;
};

class ImageServiceImpl final : public v1::ImageService::Service {
 public:
  explicit ImageServiceImpl(ServiceContext& ctx) : ctx_(ctx) {}

  grpc::Status ListImages(grpc::ServerContext* ctx, const v1::ListImagesRequest* req,
                          v1::ListImagesResponse* resp) override;
  grpc::Status StreamImages(grpc::ServerContext* ctx, const v1::StreamImagesRequest* req,
                            grpc::ServerWriter<v1::StreamImagesResponse>* writer) override;
  grpc::Status ImageStatus(grpc::ServerContext* ctx, const v1::ImageStatusRequest* req,
                           v1::ImageStatusResponse* resp) override;
  grpc::Status PullImage(grpc::ServerContext* ctx, const v1::PullImageRequest* req,
                         v1::PullImageResponse* resp) override;
  grpc::Status RemoveImage(grpc::ServerContext* ctx, const v1::RemoveImageRequest* req,
                           v1::RemoveImageResponse* resp) override;
  grpc::Status ImageFsInfo(grpc::ServerContext* ctx, const v1::ImageFsInfoRequest* req,
                           v1::ImageFsInfoResponse* resp) override;

 private:
  [[maybe_unused]] ServiceContext& ctx_;
};

}  // namespace berth
