// Streaming through a CRI runtime: Exec of `true` (the rpc, the upgrade, the runtime's exec, the
// exit status; p50/p95 of 50) and port-forward throughput to listeners in a pod (256 MiB each way
// unless told), over SPDY as kubectl speaks it.
#pragma once

#include <cstdint>
#include <string>

#include "berth/cri_api.h"

namespace berth::bench {

void run_stream_rpc_bench(runtime::v1::RuntimeService::Stub& rt, runtime::v1::ImageService::Stub& images,
                          const std::string& image, uint64_t mib);

}  // namespace berth::bench
