// Density: N pods (default 250) with one `sleep` container each, started by 10 client threads;
// the time to start them all, the runtime's memory (daemon + helpers) with them and per pod, and
// ListContainers / ListContainerStats p50 at that size. The pods are removed after.
#pragma once

#include <string>

#include "berth/cri_api.h"
#include "runtime_procs.h"

namespace berth::bench {

struct DensityOptions {
  std::string image;
  size_t pods = 250;
  size_t concurrency = 10;
  size_t list_calls = 20;
};

void run_density_bench(runtime::v1::RuntimeService::Stub& rt, runtime::v1::ImageService::Stub& images,
                       const RuntimeProcs& procs, const DensityOptions& options);

}  // namespace berth::bench
