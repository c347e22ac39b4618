// One pod's life, rpc by rpc, as kubelet drives it: N pods made one after another (RunPodSandbox
// with the CNI bridge, CreateContainer + StartContainer of one `sleep` container), ExecSync of
// /bin/true in each, then StopContainer, StopPodSandbox, RemoveContainer and RemovePodSandbox of
// each; p50/p95 of every step, and the runtime's memory (daemon + helpers) per pod while they run.
// Optionally the same for pods with user namespaces, made in turn with the plain ones.
#pragma once

#include <cstdint>
#include <string>

#include "berth/cri_api.h"
#include "runtime_procs.h"

namespace berth::bench {

struct LifecycleBenchOptions {
  std::string image;
  size_t pods = 20;
  size_t execs_per_pod = 5;
  // Non-zero: each pod is followed by one with a user namespace of its own (host ids from
  // userns_host_base + 65536·i, as kubelet allocates them), its steps reported apart ("… userns").
  uint32_t userns_host_base = 0;
};

void run_lifecycle_bench(runtime::v1::RuntimeService::Stub& rt, runtime::v1::ImageService::Stub& images,
                         const RuntimeProcs& procs, const LifecycleBenchOptions& options);

}  // namespace berth::bench
