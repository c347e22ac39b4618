// See recovery_bench.h. Time is counted from this program's start, which the script runs right
// after the runtime's: what it reports includes the runtime's own start-up.
#include "recovery_bench.h"

#include <chrono>
#include <cstdio>
#include <thread>

#include "bench_figures.h"
#include "pod_fleet.h"

namespace berth::bench {

namespace v1 = runtime::v1;
using Clock = std::chrono::steady_clock;

bool wait_recovered(const std::string& target, size_t pods, double timeout_s) {
  const auto start = Clock::now();
  auto since = [&] { return std::chrono::duration<double>(Clock::now() - start).count(); };
  double serving = -1;
  while (since() < timeout_s) {
    auto channel = grpc::CreateChannel(target, grpc::InsecureChannelCredentials());
    auto rt = v1::RuntimeService::NewStub(channel);
    grpc::ClientContext vctx;
    vctx.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(1));
    v1::VersionResponse version;
    if (!rt->Version(&vctx, v1::VersionRequest(), &version).ok()) {
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
      continue;
    }
    if (serving < 0) serving = since();
    grpc::ClientContext pctx, cctx;
    v1::ListPodSandboxResponse listed;
    v1::ListContainersResponse containers;
    size_t ready = 0, running = 0;
    if (rt->ListPodSandbox(&pctx, v1::ListPodSandboxRequest(), &listed).ok())
      for (const auto& p : listed.items()) ready += p.state() == v1::SANDBOX_READY;
    if (rt->ListContainers(&cctx, v1::ListContainersRequest(), &containers).ok())
      for (const auto& c : containers.containers()) running += c.state() == v1::CONTAINER_RUNNING;
    if (ready >= pods && running >= pods) {
      double all = since();
      std::printf("restart with %zu pods: serving after %.2f s, every pod and container back after %.2f s\n", pods,
                  serving, all);
      figure("restart.pods", static_cast<double>(pods));
      figure("restart.serving_s", serving);
      figure("restart.recovered_s", all);
      return true;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  std::printf("restart with %zu pods: not every pod was back after %.0f s (serving after %.2f s)\n", pods, timeout_s,
              serving);
  return false;
}

void remove_all_pods(v1::RuntimeService::Stub& rt, size_t concurrency) {
  grpc::ClientContext ctx;
  v1::ListPodSandboxResponse listed;
  if (!rt.ListPodSandbox(&ctx, v1::ListPodSandboxRequest(), &listed).ok()) return;
  Fleet fleet;
  for (const auto& p : listed.items()) fleet.broken_pod_ids.push_back(p.id());
  double removed = remove_fleet(rt, fleet, concurrency);
  std::printf("%zu pods removed in %.1f s (concurrency %zu)\n", fleet.broken_pod_ids.size(), removed, concurrency);
  figure("restart.remove_s", removed);
}

}  // namespace berth::bench
