// The kubelet steady-state load; see steady_state_bench.h. CPU is read from /proc/<pid>/stat
// (utime + stime + cutime + cstime) of the daemon and of each helper (containerd's shims, berth's
// monitors) at the start and the end of the window: runtime execs, CNI plugins and probe
// processes the daemon or a helper reaped are in their cutime/cstime. The pods are removed after.
#include "steady_state_bench.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <random>
#include <thread>
#include <vector>

#include "call_latencies.h"
#include "periodic_calls.h"
#include "pod_fleet.h"

namespace berth::bench {

namespace v1 = runtime::v1;

namespace {

using Clock = std::chrono::steady_clock;
using std::chrono::milliseconds;

// The calls kubelet makes, each timed into `lat`.
struct KubeletCalls {
  v1::RuntimeService::Stub& rt;
  v1::ImageService::Stub& images;
  CallLatencies& lat;

  template <typename Request, typename Response>
  using Rpc = grpc::Status (v1::RuntimeService::Stub::*)(grpc::ClientContext*, const Request&, Response*);

  template <typename Request, typename Response>
  void call(const std::string& name, Rpc<Request, Response> rpc, const Request& req = Request()) {
    lat.time(name, [&] {
      grpc::ClientContext ctx;
      Response r;
      return (rt.*rpc)(&ctx, req, &r).ok();
    });
  }

  void relist() {
    call<v1::ListPodSandboxRequest, v1::ListPodSandboxResponse>("ListPodSandbox",
                                                                &v1::RuntimeService::Stub::ListPodSandbox);
    call<v1::ListContainersRequest, v1::ListContainersResponse>("ListContainers",
                                                                &v1::RuntimeService::Stub::ListContainers);
  }

  void pod_status(const FleetPod& pod) {
    v1::PodSandboxStatusRequest ps;
    ps.set_pod_sandbox_id(pod.pod_id);
    call<v1::PodSandboxStatusRequest, v1::PodSandboxStatusResponse>("PodSandboxStatus",
                                                                    &v1::RuntimeService::Stub::PodSandboxStatus, ps);
    v1::ContainerStatusRequest cs;
    cs.set_container_id(pod.container_id);
    call<v1::ContainerStatusRequest, v1::ContainerStatusResponse>("ContainerStatus",
                                                                  &v1::RuntimeService::Stub::ContainerStatus, cs);
  }

  void stats() {
    call<v1::ListContainerStatsRequest, v1::ListContainerStatsResponse>("ListContainerStats",
                                                                        &v1::RuntimeService::Stub::ListContainerStats);
    call<v1::ListPodSandboxStatsRequest, v1::ListPodSandboxStatsResponse>(
        "ListPodSandboxStats", &v1::RuntimeService::Stub::ListPodSandboxStats);
    lat.time("ImageFsInfo", [&] {
      grpc::ClientContext ctx;
      v1::ImageFsInfoResponse r;
      return images.ImageFsInfo(&ctx, v1::ImageFsInfoRequest(), &r).ok();
    });
  }

  void probe(const FleetPod& pod) {
    lat.time("ExecSync", [&] {
      grpc::ClientContext ctx;
      v1::ExecSyncRequest req;
      req.set_container_id(pod.container_id);
      req.add_cmd("/bin/true");
      req.set_timeout(1);  // kubelet's default probe timeoutSeconds
      v1::ExecSyncResponse r;
      return rt.ExecSync(&ctx, req, &r).ok() && r.exit_code() == 0;
    });
  }

  void status() { call<v1::StatusRequest, v1::StatusResponse>("Status", &v1::RuntimeService::Stub::Status); }
};

// Where in its 10 s period each pod's calls fall. Kubelet starts each pod's worker and each
// prober at its own moment (a prober first waits a random part of its period), so these are
// random too, seeded so that every run, and both runtimes of a side-by-side run, get the same
// ones. (Spread evenly, every 11th pod's probe fell on the very instant of a relist: a collision
// each second that kubelet does not make.)
std::vector<milliseconds> phases(size_t n, uint32_t seed) {
  std::mt19937 gen(seed);
  std::uniform_int_distribution<int> ms(0, 9999);
  std::vector<milliseconds> out;
  for (size_t i = 0; i < n; ++i) out.push_back(milliseconds(ms(gen)));
  return out;
}

}  // namespace

void run_steady_state_bench(v1::RuntimeService::Stub& rt, v1::ImageService::Stub& images, const RuntimeProcs& procs,
                            const SteadyStateOptions& o) {
  if (!pull_image(images, o.image)) return;
  RuntimeSample before = procs.sample();
  Fleet fleet = start_fleet(rt, {o.image, "steady", o.pods, o.concurrency});
  std::printf("\nkubelet steady state: %zu of %zu pods started in %.1f s (concurrency %zu)\n", fleet.pods.size(),
              o.pods, fleet.start_seconds, o.concurrency);
  if (fleet.failures > 0) std::printf("%zu pods failed; last error: %s\n", fleet.failures, fleet.last_error.c_str());
  std::this_thread::sleep_for(std::chrono::seconds(2));  // let the starts' after-work settle

  CallLatencies lat;
  KubeletCalls calls{rt, images, lat};
  const size_t n = fleet.pods.size();
  std::vector<std::vector<PeriodicTask>> loops(4 + o.probe_threads);
  const std::vector<milliseconds> status_at = phases(n, 1), probe_at = phases(n, 2);
  loops[0].push_back({milliseconds(1000), milliseconds(0), [&] { calls.relist(); }, true});
  for (size_t i = 0; i < n; ++i)
    loops[1].push_back({milliseconds(10000), status_at[i], [&, i] { calls.pod_status(fleet.pods[i]); }});
  loops[2].push_back({milliseconds(10000), milliseconds(500), [&] { calls.stats(); }});
  loops[3].push_back({milliseconds(5000), milliseconds(250), [&] { calls.status(); }});
  for (size_t i = 0; i < n; ++i)
    loops[4 + i % o.probe_threads].push_back(
        {milliseconds(10000), probe_at[i], [&, i] { calls.probe(fleet.pods[i]); }});

  RuntimeSample start_sample = procs.sample();
  auto start = Clock::now();
  auto stop = start + milliseconds(static_cast<long>(o.seconds * 1000));
  std::vector<std::thread> threads;
  for (auto& tasks : loops) threads.emplace_back(run_periodic, std::move(tasks), start, stop);
  for (auto& t : threads) t.join();
  double window = std::chrono::duration<double>(Clock::now() - start).count();
  RuntimeSample end_sample = procs.sample();

  std::printf("%.1f s of kubelet's periodic calls on %zu pods:\n", window, n);
  lat.print("steady");
  figure("steady.pods", static_cast<double>(n));
  figure("steady.start_s", fleet.start_seconds);
  if (procs.enabled()) {
    CpuSeconds cpu = cpu_between(start_sample, end_sample);
    double daemon = 100 * cpu.daemon / window, helpers = 100 * cpu.helpers / window;
    std::printf("runtime CPU over the window: %.1f %% of one core (daemon %.1f %%, %zu helpers %.1f %%)\n",
                daemon + helpers, daemon, end_sample.helpers.size(), helpers);
    print_runtime_memory("at the end of the window", end_sample);
    figure("steady.cpu_percent", daemon + helpers);
    figure("steady.daemon_cpu_percent", daemon);
    figure("steady.helpers_cpu_percent", helpers);
    figure("steady.daemon_rss_mib", end_sample.daemon.rss_kib / 1024.0);
    figure("steady.helpers_rss_mib", end_sample.helpers_rss_kib() / 1024.0);
    figure("steady.helpers_pss_mib", end_sample.helpers_pss_kib() / 1024.0);
    figure("steady.helpers", static_cast<double>(end_sample.helpers.size()));
    if (n > 0) {
      // What each pod costs the runtime: if it grows with the pod count, something is per pod squared.
      PerPodMib per_pod = memory_per_pod(before, end_sample, n);
      std::printf("runtime memory per pod (daemon + helpers, growth / pods): RSS %.2f MiB, Pss %.2f MiB\n", per_pod.rss,
                  per_pod.pss);
      figure("steady.per_pod_rss_mib", per_pod.rss);
      figure("steady.per_pod_pss_mib", per_pod.pss);
    }
  }
  if (o.keep_pods) {
    std::printf("%zu pods left running\n", n);
    return;
  }
  double removed = remove_fleet(rt, fleet, o.concurrency);
  std::printf("pods removed in %.1f s (concurrency %zu)\n", removed, o.concurrency);
  figure("steady.remove_s", removed);
}

}  // namespace berth::bench
