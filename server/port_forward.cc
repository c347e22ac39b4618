// PortForward: checks the sandbox and ports and returns a single-use URL of the streaming server;
// each forwarded connection goes to 127.0.0.1:<port> inside the pod's network namespace (the
// host's for host-network pods).
#include "rpc_scope.h"
#include "services.h"
#include "memory_headroom.h"
#include "berth/sandbox_manager.h"
#include "berth/streaming_server.h"

namespace berth {

grpc::Status RuntimeServiceImpl::PortForward(grpc::ServerContext*, const v1::PortForwardRequest* req,
                                             v1::PortForwardResponse* resp) {
  RpcScope scope("PortForward", "sandbox=" + req->pod_sandbox_id());
  auto memory = ctx_.memory_headroom.enter("PortForward", MemoryHeadroom::kSmallCost);
  if (!memory.ok()) return scope.done(memory.status());
  if (req->pod_sandbox_id().empty()) return scope.done(invalid_argument("pod_sandbox_id: must not be empty"));
  for (int32_t p : req->port())
    if (p < 1 || p > 65535) return scope.done(invalid_argument("port: " + std::to_string(p) + " is not a TCP port"));
  auto info = ctx_.sandboxes.lookup(req->pod_sandbox_id());
  if (!info.ok()) return scope.done(info.status());
  if (!info->ready) return scope.done(failed_precondition("pod sandbox " + info->id + " is not ready"));
  auto url = ctx_.streaming.register_port_forward(info->id, {req->port().begin(), req->port().end()});
  if (!url.ok()) return scope.done(url.status());
  resp->set_url(*url);
  return scope.done(ok_status());
}

}  // namespace berth
