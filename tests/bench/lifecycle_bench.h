// One pod's life, rpc by rpc, as kubelet drives it: N pods made one after another (RunPodSandbox
// with the CNI bridge, CreateContainer + StartContainer of one `sleep` container), ExecSync of
// /bin/true in each, then StopContainer, RemoveContainer, StopPodSandbox and RemovePodSandbox of
// each; p50/p95 of every step, and the runtime's memory (daemon + helpers) per pod while they run.
#pragma once

#include <string>

#include "berth/cri_api.h"
#include "runtime_procs.h"

namespace berth::bench {

struct LifecycleBenchOptions {
  std::string image;
  size_t pods = 20;
  size_t execs_per_pod = 5;
};

void run_lifecycle_bench(runtime::v1::RuntimeService::Stub& rt, runtime::v1::ImageService::Stub& images,
                         const RuntimeProcs& procs, const LifecycleBenchOptions& options);

}  // namespace berth::bench
