// Kubelet's steady state on a node of N pods with one container each: for a fixed window, the
// periodic calls kubelet makes (PLEG relist 1 s after the last one ended; PodSandboxStatus +
// ContainerStatus per pod and one ExecSync liveness probe per container every 10 s, each pod's at
// its own (seeded random) moment of the period;
// ListContainerStats + ListPodSandboxStats + ImageFsInfo every 10 s; Status every 5 s), from
// several client threads on one connection. Reports what the runtime spent: CPU (daemon and
// helpers, reaped children included) as % of one core, RSS, and p50/p99 per call type.
#pragma once

#include <string>

#include "berth/cri_api.h"
#include "runtime_procs.h"

namespace berth::bench {

struct SteadyStateOptions {
  std::string image;  // runs `sleep`, has /bin/true
  size_t pods = 110;
  double seconds = 60;
  size_t concurrency = 10;  // pod starts and removals in flight
  size_t probe_threads = 4;
  bool keep_pods = false;  // leave them running (a restart measured after: recovery_bench.h)
};

void run_steady_state_bench(runtime::v1::RuntimeService::Stub& rt, runtime::v1::ImageService::Stub& images,
                            const RuntimeProcs& procs, const SteadyStateOptions& options);

}  // namespace berth::bench
