// ContainerStats, ListContainerStats and StreamContainerStats: cgroup readings (PSI included, where
// the kernel keeps it), the writable layer and cpu rates, from StatsCollector (no exec per container).
#include "rpc_scope.h"
#include "services.h"
#include "berth/stats_collector.h"
#include "stream_batches.h"

namespace berth {

grpc::Status RuntimeServiceImpl::ContainerStats(grpc::ServerContext*, const v1::ContainerStatsRequest* req,
                                                v1::ContainerStatsResponse* resp) {
  RpcScope scope("ContainerStats", "container=" + req->container_id());
  if (req->container_id().empty()) return scope.done(invalid_argument("container_id: must not be empty"));
  auto st = ctx_.stats.container(req->container_id());
  if (!st.ok()) return scope.done(st.status());
  *resp->mutable_stats() = std::move(*st);
  return scope.done(ok_status());
}

grpc::Status RuntimeServiceImpl::ListContainerStats(grpc::ServerContext*, const v1::ListContainerStatsRequest* req,
                                                    v1::ListContainerStatsResponse* resp) {
  RpcScope scope("ListContainerStats");
  for (auto& st : ctx_.stats.containers(req->filter())) *resp->add_stats() = std::move(st);
  return scope.done(ok_status());
}

grpc::Status RuntimeServiceImpl::StreamContainerStats(grpc::ServerContext*, const v1::StreamContainerStatsRequest* req,
                                                      grpc::ServerWriter<v1::StreamContainerStatsResponse>* writer) {
  RpcScope scope("StreamContainerStats");
  return scope.done(stream_in_batches(
      writer, ctx_.stats.containers(req->filter()), [](auto& b, const auto& st) { *b.add_container_stats() = st; },
      "StreamContainerStats"));
}

}  // namespace berth
