// Stats measurements: ListContainerStats and ListPodSandboxStats (and ListPodSandboxMetrics) with
// running containers in pods of their own cgroups (10 pods of 10 by default; kubelet's 110 pods
// of one with --stats-pods 110 --stats-containers 1), median of 50 calls on one connection.
#pragma once

#include <string>

#include "berth/cri_api.h"

namespace berth::bench {

struct StatsBenchOptions {
  std::string image;  // pulled first; runs `sleep`
  int runtime_pid = 0;
  size_t calls = 50;
  int pods = 10, containers_per_pod = 10;
};

void run_stats_bench(runtime::v1::RuntimeService::Stub& rt, runtime::v1::ImageService::Stub& images,
                     const StatsBenchOptions& options);

}  // namespace berth::bench
