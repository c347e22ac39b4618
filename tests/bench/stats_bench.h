// Stats measurements: ListContainerStats and ListPodSandboxStats (and ListPodSandboxMetrics) with
// 100 running containers in 10 pods of their own cgroups, median of 50 calls on one connection.
#pragma once

#include <string>

#include "berth/cri_api.h"

namespace berth::bench {

struct StatsBenchOptions {
  std::string image;  // pulled first; runs `sleep`
  int runtime_pid = 0;
  size_t calls = 50;
};

void run_stats_bench(runtime::v1::RuntimeService::Stub& rt, runtime::v1::ImageService::Stub& images,
                     const StatsBenchOptions& options);

}  // namespace berth::bench
