// RunPodSandbox measurements: 20 sequential (p50/p95), 10 in parallel (wall time), the runtime's
// RSS idle and with 30 sandboxes, each sandbox's helper processes, and (for berth, given its
// /metrics address) the share of RunPodSandbox spent in CNI plugin execs; then StopPodSandbox and
// RemovePodSandbox of 20 of those pods, one after another (p50/p95).
#pragma once

#include <string>

#include "berth/cri_api.h"

namespace berth::bench {

struct SandboxBenchOptions {
  int runtime_pid = 0;        // the runtime daemon, for its RSS
  bool host_network = false;  // pods on the host network: no netns, no CNI
  std::string metrics_url;    // berth's http://<metrics_address>/metrics, for the CNI share
};

void run_sandbox_bench(runtime::v1::RuntimeService::Stub& rt, const SandboxBenchOptions& options);

}  // namespace berth::bench
