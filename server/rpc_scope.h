// RpcScope: the one log line per RPC (method, ids, code, duration) and the mapping of berth's
// Status codes onto gRPC codes. Every handler opens one and returns through done().
#pragma once

#include <chrono>
#include <string>

#include <grpcpp/support/status.h>

#include "berth/status.h"
#include "berth/tracer.h"

namespace berth {

grpc::Status to_grpc(const Status& s);

class RpcScope {
 public:
  // The rpc's server span starts here, child of the caller's traceparent when there is one.
  explicit RpcScope(const char* method, std::string ids = {});
  RpcScope(const RpcScope&) = delete;
  RpcScope& operator=(const RpcScope&) = delete;

  void add_id(const std::string& key, const std::string& value);
  grpc::Status done(const Status& s);

 private:
  const char* method_;
  std::string ids_;
  std::chrono::steady_clock::time_point start_;
  ScopedSpan span_;
};

}  // namespace berth
