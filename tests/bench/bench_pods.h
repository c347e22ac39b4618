// What the benchmarks that make pods share: the container they run, and the clean-up at the end
// (best effort: a failure here only leaves pods that the bench script's daemon removal takes away).
#pragma once

#include <string>
#include <vector>

#include "berth/cri_api.h"

namespace berth::bench {

void remove_pods(runtime::v1::RuntimeService::Stub& rt, const std::vector<std::string>& ids);

// The benchmarks' container: `sleep 100000` from `image`, in its own PID namespace.
runtime::v1::ContainerConfig sleeper_config(const std::string& name, const std::string& image);

}  // namespace berth::bench
