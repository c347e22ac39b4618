// PullImage of one image from a cold store, then its ImageStatus and RemoveImage, timed together as
// critest's image benchmark does: the median time and the runtime's peak RSS during a pull.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "berth/cri_api.h"

namespace berth::bench {

void run_pull_bench(runtime::v1::ImageService::Stub& images, const std::string& ref, size_t runs, int runtime_pid);

// PullImage of `ref`, again after each failure (as kubelet retries), at most `attempts` times;
// prints each failure, the attempts and the time they took.
void run_pull_until_ok(runtime::v1::ImageService::Stub& images, const std::string& ref, size_t attempts);

// The state a node lives in: pulls every ref (a store of several images), then pulls the first
// again, already stored, `runs` times, printing the runtime's VmRSS after each step. Kubelet
// re-pulls stored images whenever a pod's imagePullPolicy is Always.
void run_stored_pull_bench(runtime::v1::ImageService::Stub& images, const std::vector<std::string>& refs, size_t runs,
                           int runtime_pid);

}  // namespace berth::bench
