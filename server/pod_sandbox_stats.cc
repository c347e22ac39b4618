// PodSandboxStats, ListPodSandboxStats and StreamPodSandboxStats: the pod's cgroup (its PSI when the
// pod has a cgroup of its own), its network counters, process count and its containers' stats,
// from StatsCollector.
#include "rpc_scope.h"
#include "services.h"
#include "berth/stats_collector.h"
#include "stream_batches.h"

namespace berth {

grpc::Status RuntimeServiceImpl::PodSandboxStats(grpc::ServerContext*, const v1::PodSandboxStatsRequest* req,
                                                 v1::PodSandboxStatsResponse* resp) {
  RpcScope scope("PodSandboxStats", "sandbox=" + req->pod_sandbox_id());
  if (req->pod_sandbox_id().empty()) return scope.done(invalid_argument("pod_sandbox_id: must not be empty"));
  auto st = ctx_.stats.pod(req->pod_sandbox_id());
  if (!st.ok()) return scope.done(st.status());
  *resp->mutable_stats() = std::move(*st);
  return scope.done(ok_status());
}

grpc::Status RuntimeServiceImpl::ListPodSandboxStats(grpc::ServerContext*, const v1::ListPodSandboxStatsRequest* req,
                                                     v1::ListPodSandboxStatsResponse* resp) {
  RpcScope scope("ListPodSandboxStats");
  for (auto& st : ctx_.stats.pods(req->filter())) *resp->add_stats() = std::move(st);
  return scope.done(ok_status());
}

grpc::Status RuntimeServiceImpl::StreamPodSandboxStats(grpc::ServerContext*,
                                                       const v1::StreamPodSandboxStatsRequest* req,
                                                       grpc::ServerWriter<v1::StreamPodSandboxStatsResponse>* writer) {
  RpcScope scope("StreamPodSandboxStats");
  return scope.done(stream_in_batches(
      writer, ctx_.stats.pods(req->filter()), [](auto& b, const auto& st) { *b.add_pod_sandbox_stats() = st; },
      "StreamPodSandboxStats"));
}

}  // namespace berth
