// Connecting to a port inside a pod's network namespace, for port forwarding.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>

#include "berth/status.h"
#include "berth/unique_fd.h"

namespace berth {

// A TCP socket connected to 127.0.0.1:port from inside the network namespace pinned at
// `netns_path` (e.g. /run/berth/netns/<id>). The socket()/connect() run on a short-lived thread
// that setns()'d into the namespace; the socket keeps that namespace after the thread is gone.
// An empty path connects in the caller's own namespace (host-network pods). Blocks up to
// `timeout`; a refused connection is UNAVAILABLE with errno ECONNREFUSED.
Result<UniqueFd> connect_in_netns(const std::string& netns_path, int32_t port,
                                  std::chrono::milliseconds timeout = std::chrono::seconds(10));

}  // namespace berth
