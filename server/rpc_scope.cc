// Logs each RPC once and converts berth Status values to gRPC ones.
#include "rpc_scope.h"

#include <spdlog/spdlog.h>

#include "rpc_metrics.h"
#include "trace_interceptor.h"

namespace berth {

grpc::Status to_grpc(const Status& s) {
  switch (s.code()) {
    case Code::ok: return grpc::Status::OK;
    case Code::invalid_argument: return {grpc::StatusCode::INVALID_ARGUMENT, s.message()};
    case Code::not_found: return {grpc::StatusCode::NOT_FOUND, s.message()};
    case Code::already_exists: return {grpc::StatusCode::ALREADY_EXISTS, s.message()};
    case Code::failed_precondition: return {grpc::StatusCode::FAILED_PRECONDITION, s.message()};
    case Code::deadline_exceeded: return {grpc::StatusCode::DEADLINE_EXCEEDED, s.message()};
    case Code::resource_exhausted: return {grpc::StatusCode::RESOURCE_EXHAUSTED, s.message()};
    case Code::unavailable: return {grpc::StatusCode::UNAVAILABLE, s.message()};
    case Code::unauthenticated: return {grpc::StatusCode::UNAUTHENTICATED, s.message()};
    case Code::unimplemented: return {grpc::StatusCode::UNIMPLEMENTED, s.message()};
    case Code::internal: return {grpc::StatusCode::INTERNAL, s.message()};
    case Code::cancelled: return {grpc::StatusCode::CANCELLED, s.message()};
  }
  return {grpc::StatusCode::UNKNOWN, s.message()};
}

RpcScope::RpcScope(const char* method, std::string ids)
    : method_(method),
      ids_(std::move(ids)),
      start_(std::chrono::steady_clock::now()),
      span_(ScopedSpan::server(std::string("CRI ") + method, take_caller_trace())) {
  span_.attribute("rpc.system", "grpc");
  span_.attribute("rpc.method", method);
}

void RpcScope::add_id(const std::string& key, const std::string& value) {
  if (!ids_.empty()) ids_ += ' ';
  ids_ += key + "=" + value;
}

grpc::Status RpcScope::done(const Status& s) {
  if (!s.ok()) span_.fail(std::string(code_name(s.code())) + ": " + s.message());
  if (!ids_.empty()) span_.attribute("berth.ids", ids_);
  double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start_).count();
  if (RpcMetrics* m = rpc_metrics()) {
    m->calls.add({method_, code_name(s.code())});
    m->latency.observe({method_, code_name(s.code())}, ms / 1000);
  }
  if (s.ok()) {
    spdlog::debug("rpc {} {} ok {:.2f}ms", method_, ids_, ms);
  } else if (s.code() == Code::internal || s.code() == Code::deadline_exceeded) {
    spdlog::error("rpc {} {} {} {:.2f}ms: {}", method_, ids_, code_name(s.code()), ms, s.message());
  } else {
    spdlog::warn("rpc {} {} {} {:.2f}ms: {}", method_, ids_, code_name(s.code()), ms, s.message());
  }
  return to_grpc(s);
}

}  // namespace berth
