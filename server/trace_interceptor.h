// The caller's W3C traceparent (kubelet sends one per call when its tracing is on): a gRPC server
// interceptor reads it from the call's metadata, and the handler's RpcScope takes it. The
// synchronous server runs a call's interceptors and its handler on one thread, so a thread-local
// carries it from one to the other; each call's interceptor sets it afresh.
#pragma once

#include <grpcpp/support/server_interceptor.h>

#include <memory>
#include <optional>

#include "berth/trace_context.h"

namespace berth {

std::unique_ptr<grpc::experimental::ServerInterceptorFactoryInterface> make_traceparent_interceptor_factory();

// This thread's call's context (once: a second take is empty).
std::optional<TraceContext> take_caller_trace();

}  // namespace berth
