// The gRPC server berthd serves on (see grpc_listener.h).
#include "grpc_listener.h"

#include "berth/tracer.h"
#include "trace_interceptor.h"

#include <sys/stat.h>

#include <cerrno>
#include <cstring>

#include <grpcpp/resource_quota.h>
#include <spdlog/spdlog.h>

namespace berth {

Result<std::unique_ptr<grpc::Server>> start_grpc_listener(const GrpcListenerOptions& options) {
  // gRPC's sync server keeps up to two idle pollers besides the threads running calls, and refuses
  // a call with its own bare "Server Threadpool Exhausted" when the last poller picks work and no
  // thread may be added. The two pollers' room on top of max_concurrent_rpcs means the calls one
  // connection may open (the stream limit below) always get a thread, so a flood on it meets
  // CallLimits' refusal that names the call class and the share.
  grpc::ResourceQuota quota("berthd");
  quota.SetMaxThreads(options.max_concurrent_rpcs + 2);
  grpc::ServerBuilder builder;
  builder.SetResourceQuota(quota);
  builder.AddListeningPort("unix:" + options.socket, grpc::InsecureServerCredentials());
  for (grpc::Service* service : options.services) builder.RegisterService(service);
  builder.SetMaxReceiveMessageSize(16 << 20);
  // One connection (kubelet has one) may not open more streams than berthd has threads.
  builder.AddChannelArgument(GRPC_ARG_MAX_CONCURRENT_STREAMS, options.max_concurrent_rpcs);
  builder.SetMaxSendMessageSize(16 << 20);
  // Interceptors are made only when tracing is on: without one the calls take gRPC's plain path.
  if (tracing::enabled()) {
    std::vector<std::unique_ptr<grpc::experimental::ServerInterceptorFactoryInterface>> interceptors;
    interceptors.push_back(make_traceparent_interceptor_factory());
    builder.experimental().SetInterceptorCreators(std::move(interceptors));
  }
  // The socket must never be reachable with a wider mode than 0660, not even for a moment.
  mode_t old_umask = ::umask(0117);
  std::unique_ptr<grpc::Server> server = builder.BuildAndStart();
  ::umask(old_umask);
  if (!server) return Status(Code::unavailable, "cannot listen on " + options.socket);
  if (::chmod(options.socket.c_str(), 0660) != 0)
    spdlog::warn("berthd: chmod 0660 {}: {}", options.socket, std::strerror(errno));
  return server;
}

}  // namespace berth
