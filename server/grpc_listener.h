// berthd's gRPC server on its unix socket: the thread and stream limits that make CallLimits, not
// gRPC, the one to refuse a flood, the message size limits, and the socket's mode (0660, never
// wider, not even for a moment). Internal to server/.
#pragma once

#include <grpcpp/grpcpp.h>

#include <memory>
#include <string>
#include <vector>

#include "berth/status.h"

namespace berth {

struct GrpcListenerOptions {
  std::string socket;           // a path; a stale file there was removed by prepare_socket_path
  int max_concurrent_rpcs = 0;  // the config's: threads for calls, and streams per connection
  std::vector<grpc::Service*> services;
};

// Builds, starts and serves; the socket's mode is 0660. An error when the socket cannot be
// listened on.
Result<std::unique_ptr<grpc::Server>> start_grpc_listener(const GrpcListenerOptions& options);

}  // namespace berth
