// PullImage of one image from a cold store (the image is removed before each run): the median
// time and the runtime's peak RSS during a pull.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "berth/cri_api.h"

namespace berth::bench {

void run_pull_bench(runtime::v1::ImageService::Stub& images, const std::string& ref, size_t runs, int runtime_pid);

// The state a node lives in: pulls every ref (a store of several images), then pulls the first
// again, already stored, `runs` times, printing the runtime's VmRSS after each step. Kubelet
// re-pulls stored images whenever a pod's imagePullPolicy is Always.
void run_stored_pull_bench(runtime::v1::ImageService::Stub& images, const std::vector<std::string>& refs, size_t runs,
                           int runtime_pid);

}  // namespace berth::bench
