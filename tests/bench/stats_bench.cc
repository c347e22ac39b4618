// Stats figures; see stats_bench.h. Each pod gets a cgroup parent of its own, as kubelet's
// pod<uid> cgroups are, so the pod figures are read the way kubelet's pods make berth read them.
// Every pod and container it makes is removed at the end.
#include "stats_bench.h"

#include <cstdio>
#include <vector>

#include "bench_figures.h"
#include "bench_pods.h"

namespace berth::bench {

namespace v1 = runtime::v1;

namespace {

bool pull(v1::ImageService::Stub& images, const std::string& image) {
  grpc::ClientContext ctx;
  v1::PullImageRequest req;
  req.mutable_image()->set_image(image);
  v1::PullImageResponse r;
  grpc::Status s = images.PullImage(&ctx, req, &r);
  if (!s.ok()) std::printf("stats bench: cannot pull %s: %s\n", image.c_str(), s.error_message().c_str());
  return s.ok();
}

}  // namespace

void run_stats_bench(v1::RuntimeService::Stub& rt, v1::ImageService::Stub& images, const StatsBenchOptions& o) {
  if (!pull(images, o.image)) return;
  std::vector<std::string> pods;
  size_t containers = 0;
  std::string last_error;
  for (int p = 0; p < o.pods && last_error.empty(); ++p) {
    v1::PodSandboxConfig pod;
    pod.mutable_metadata()->set_name("bench-stats-" + std::to_string(p));
    pod.mutable_metadata()->set_namespace_("berth-bench");
    pod.mutable_metadata()->set_uid("bench-stats-" + std::to_string(p));
    pod.mutable_linux()->set_cgroup_parent("/berth-bench/pod" + std::to_string(p));
    pod.mutable_linux()->mutable_security_context()->mutable_namespace_options()->set_pid(v1::CONTAINER);
    grpc::ClientContext ctx;
    v1::RunPodSandboxRequest req;
    *req.mutable_config() = pod;
    v1::RunPodSandboxResponse r;
    grpc::Status s = rt.RunPodSandbox(&ctx, req, &r);
    if (!s.ok()) {
      last_error = "RunPodSandbox: " + s.error_message();
      break;
    }
    pods.push_back(r.pod_sandbox_id());
    for (int i = 0; i < o.containers_per_pod; ++i) {
      v1::ContainerConfig c = sleeper_config("c" + std::to_string(i), o.image);
      grpc::ClientContext cctx;
      v1::CreateContainerRequest creq;
      creq.set_pod_sandbox_id(pods.back());
      *creq.mutable_config() = c;
      *creq.mutable_sandbox_config() = pod;
      v1::CreateContainerResponse cr;
      s = rt.CreateContainer(&cctx, creq, &cr);
      if (s.ok()) {
        grpc::ClientContext sctx;
        v1::StartContainerRequest sreq;
        sreq.set_container_id(cr.container_id());
        v1::StartContainerResponse sr;
        s = rt.StartContainer(&sctx, sreq, &sr);
      }
      if (!s.ok()) {
        last_error = "CreateContainer/StartContainer: " + s.error_message();
        break;
      }
      ++containers;
    }
  }
  const int want = static_cast<int>(containers);
  Figures lcs = measure(o.calls, [&] {
    grpc::ClientContext ctx;
    v1::ListContainerStatsResponse r;
    return rt.ListContainerStats(&ctx, v1::ListContainerStatsRequest(), &r).ok() && r.stats_size() == want;
  });
  row("ListContainerStats, " + std::to_string(containers) + " containers", lcs);
  Figures lps = measure(o.calls, [&] {
    grpc::ClientContext ctx;
    v1::ListPodSandboxStatsResponse r;
    return rt.ListPodSandboxStats(&ctx, v1::ListPodSandboxStatsRequest(), &r).ok() &&
           r.stats_size() == static_cast<int>(pods.size());
  });
  row("ListPodSandboxStats, " + std::to_string(pods.size()) + " pods", lps);
  Figures lpm = measure(o.calls, [&] {
    grpc::ClientContext ctx;
    v1::ListPodSandboxMetricsResponse r;
    return rt.ListPodSandboxMetrics(&ctx, v1::ListPodSandboxMetricsRequest(), &r).ok();
  });
  row("ListPodSandboxMetrics, with them", lpm);
  std::printf(
      "\nwith %zu containers in %zu pods (median of %zu calls, one connection): ListContainerStats %.3f ms, "
      "ListPodSandboxStats %.3f ms, ListPodSandboxMetrics %.3f ms\n",
      containers, pods.size(), o.calls, lcs.p50_ms, lps.p50_ms, lpm.p50_ms);
  if (o.runtime_pid > 0) std::printf("runtime RSS with them: %.1f MiB\n", rss_kib(o.runtime_pid) / 1024.0);
  if (!last_error.empty()) std::printf("last error: %s\n", last_error.c_str());
  remove_pods(rt, pods);
}

}  // namespace berth::bench
