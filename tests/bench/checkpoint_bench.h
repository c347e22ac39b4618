// CheckpointContainer and restore figures: a container holding `mib` MiB of touched memory (a busybox
// awk string) is checkpointed `runs` times into archives under `dir` (each timed, its size taken),
// and each archive is restored as a new container of the pod (CreateContainer and StartContainer
// timed apart), whose memory is then read back from its stats. Everything it makes is removed.
#pragma once

#include <string>

#include "berth/cri_api.h"

namespace berth::bench {

struct CheckpointBenchOptions {
  std::string image, dir;
  int mib = 100;
  int runs = 3;
};

void run_checkpoint_bench(runtime::v1::RuntimeService::Stub& rt, runtime::v1::ImageService::Stub& images,
                          const CheckpointBenchOptions& options);

}  // namespace berth::bench
