// Density figures; see density_bench.h. Memory per pod is the growth of daemon + helpers RSS (and
// Pss) from before the first pod to all pods running, divided by the pods that started.
#include "density_bench.h"

#include <cstdio>

#include "bench_figures.h"
#include "pod_fleet.h"

namespace berth::bench {

namespace v1 = runtime::v1;

void run_density_bench(v1::RuntimeService::Stub& rt, v1::ImageService::Stub& images, const RuntimeProcs& procs,
                       const DensityOptions& o) {
  if (!pull_image(images, o.image)) return;
  RuntimeSample before = procs.sample();
  Fleet fleet = start_fleet(rt, {o.image, "density", o.pods, o.concurrency});
  RuntimeSample with_pods = procs.sample();
  const int want = static_cast<int>(fleet.pods.size() + fleet.broken_pod_ids.size());
  Figures lc = measure(o.list_calls, [&] {
    grpc::ClientContext ctx;
    v1::ListContainersResponse r;
    return rt.ListContainers(&ctx, v1::ListContainersRequest(), &r).ok() &&
           r.containers_size() >= static_cast<int>(fleet.pods.size());
  });
  Figures lcs = measure(o.list_calls, [&] {
    grpc::ClientContext ctx;
    v1::ListContainerStatsResponse r;
    return rt.ListContainerStats(&ctx, v1::ListContainerStatsRequest(), &r).ok();
  });
  Figures lps = measure(o.list_calls, [&] {
    grpc::ClientContext ctx;
    v1::ListPodSandboxResponse r;
    return rt.ListPodSandbox(&ctx, v1::ListPodSandboxRequest(), &r).ok() && r.items_size() >= want;
  });
  double removed = remove_fleet(rt, fleet, o.concurrency);

  const size_t n = fleet.pods.size();
  std::printf("\ndensity: %zu of %zu pods started in %.1f s (concurrency %zu), removed in %.1f s\n", n, o.pods,
              fleet.start_seconds, o.concurrency, removed);
  if (fleet.failures > 0) std::printf("%zu pods failed; last error: %s\n", fleet.failures, fleet.last_error.c_str());
  print_header();
  row("ListContainers, " + std::to_string(n) + " containers", lc);
  row("ListContainerStats, " + std::to_string(n) + " containers", lcs);
  row("ListPodSandbox, " + std::to_string(n) + " pods", lps);
  figure("density.pods", static_cast<double>(n));
  figure("density.start_s", fleet.start_seconds);
  figure("density.remove_s", removed);
  figure("density.ListContainers.p50_ms", lc.p50_ms);
  figure("density.ListContainerStats.p50_ms", lcs.p50_ms);
  figure("density.ListPodSandbox.p50_ms", lps.p50_ms);
  if (procs.enabled() && n > 0) {
    print_runtime_memory("before the pods", before);
    print_runtime_memory(("with " + std::to_string(n) + " pods").c_str(), with_pods);
    PerPodMib per_pod = memory_per_pod(before, with_pods, n);
    std::printf("runtime memory per pod (daemon + helpers, growth / pods): RSS %.2f MiB, Pss %.2f MiB\n", per_pod.rss,
                per_pod.pss);
    figure("density.daemon_rss_mib", with_pods.daemon.rss_kib / 1024.0);
    figure("density.helpers_rss_mib", with_pods.helpers_rss_kib() / 1024.0);
    figure("density.helpers_pss_mib", with_pods.helpers_pss_kib() / 1024.0);
    figure("density.runtime_rss_mib", (with_pods.daemon.rss_kib + with_pods.helpers_rss_kib()) / 1024.0);
    figure("density.per_pod_rss_mib", per_pod.rss);
    figure("density.per_pod_pss_mib", per_pod.pss);
  }
}

}  // namespace berth::bench
