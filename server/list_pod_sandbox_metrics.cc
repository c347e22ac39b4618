// ListPodSandboxMetrics and StreamPodSandboxMetrics: the cAdvisor-named metrics (see
// ListMetricDescriptors) of every ready pod and its running containers, block IO and PSI included.
#include "rpc_scope.h"
#include "services.h"
#include "berth/stats_collector.h"
#include "stream_batches.h"

namespace berth {

grpc::Status RuntimeServiceImpl::ListPodSandboxMetrics(grpc::ServerContext*, const v1::ListPodSandboxMetricsRequest*,
                                                       v1::ListPodSandboxMetricsResponse* resp) {
  RpcScope scope("ListPodSandboxMetrics");
  for (auto& m : ctx_.stats.metrics()) *resp->add_pod_metrics() = std::move(m);
  return scope.done(ok_status());
}

grpc::Status RuntimeServiceImpl::StreamPodSandboxMetrics(
    grpc::ServerContext*, const v1::StreamPodSandboxMetricsRequest*,
    grpc::ServerWriter<v1::StreamPodSandboxMetricsResponse>* writer) {
  RpcScope scope("StreamPodSandboxMetrics");
  return scope.done(stream_in_batches(
      writer, ctx_.stats.metrics(), [](auto& b, const auto& m) { *b.add_pod_sandbox_metrics() = m; },
      "StreamPodSandboxMetrics"));
}

}  // namespace berth
