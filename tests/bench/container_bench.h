// Container measurements: CreateContainer + StartContainer (20, p50/p95), ListContainers and
// ListPodSandbox with 100 containers (median of 100 calls on one connection), each
// berth-monitor's RSS and the runtime's RSS with 100 containers.
#pragma once

#include <string>

#include "berth/cri_api.h"

namespace berth::bench {

struct ContainerBenchOptions {
  std::string image;  // pulled first; runs `sleep`
  int runtime_pid = 0;
};

void run_container_bench(runtime::v1::RuntimeService::Stub& rt, runtime::v1::ImageService::Stub& images,
                         const ContainerBenchOptions& options);

}  // namespace berth::bench
