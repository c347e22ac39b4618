// RpcScope: the one log line per RPC (method, ids, code, duration) and the mapping of berth's
// Status codes onto gRPC codes. Every handler opens one and returns through done().
#pragma once

#include <chrono>
#include <string>

#include <grpcpp/support/status.h>

#include "berth/status.h"

namespace berth {

grpc::Status to_grpc(const Status& s);
grpc::Status unimplemented_rpc(const char* rpc);

class RpcScope {
 public:
  explicit RpcScope(const char* method, std::string ids = {})
      : method_(method), ids_(std::move(ids)), start_(std::chrono::steady_clock::now()) {}
  RpcScope(const RpcScope&) = delete;
  RpcScope& operator=(const RpcScope&) = delete;

  void add_id(const std::string& key, const std::string& value);
  grpc::Status done(const Status& s);

 private:
  const char* method_;
  std::string ids_;
  std::chrono::steady_clock::time_point start_;
};

}  // namespace berth
