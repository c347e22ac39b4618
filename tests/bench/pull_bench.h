// PullImage of one image from a cold store (the image is removed before each run): the median
// time and the runtime's peak RSS during a pull.
#pragma once

#include <cstddef>
#include <string>

#include "berth/cri_api.h"

namespace berth::bench {

void run_pull_bench(runtime::v1::ImageService::Stub& images, const std::string& ref, size_t runs, int runtime_pid);

}  // namespace berth::bench
