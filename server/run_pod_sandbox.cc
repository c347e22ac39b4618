// RunPodSandbox: validation and the whole build of a sandbox live in SandboxManager; the handler
// maps the result and publishes the sandbox's lifecycle events.
#include "request_checks.h"
#include "rpc_scope.h"
#include "services.h"
#include "nri_bridge.h"
#include "memory_headroom.h"
#include "berth/metrics_registry.h"
#include "berth/sandbox_manager.h"
#include "call_limits.h"
#include "lifecycle_events.h"

namespace berth {

grpc::Status RuntimeServiceImpl::RunPodSandbox(grpc::ServerContext*, const v1::RunPodSandboxRequest* req,
                                               v1::RunPodSandboxResponse* resp) {
  const auto& md = req->config().metadata();
  RpcScope scope("RunPodSandbox", "pod=" + md.namespace_() + "/" + md.name());
  auto slot = ctx_.call_limits.enter(CallClass::lifecycle);
  if (!slot.ok()) return scope.done(slot.status());
  auto memory = ctx_.memory_headroom.enter("RunPodSandbox", MemoryHeadroom::kSandboxCost);
  if (!memory.ok()) return scope.done(memory.status());
  if (!req->has_config()) return scope.done(invalid_argument("config: missing"));
  if (berth::Status s = check_pod_sandbox_config(req->config()); !s.ok()) return scope.done(s);
  auto started = std::chrono::steady_clock::now();
  auto id = ctx_.sandboxes.run(req->config(), req->runtime_handler());
  ctx_.sandbox_start.observe({id.ok() ? "ok" : "error"},
                             std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count());
  if (!id.ok()) return scope.done(id.status());
  scope.add_id("sandbox", *id);
  // A plugin's error fails the pod, which goes again whole (as containerd does).
  if (berth::Status s = ctx_.nri.pod_running(*id); !s.ok()) {
    berth::Status undone = ctx_.sandboxes.stop(*id);
    if (undone.ok()) undone = ctx_.sandboxes.remove(*id);
    if (!undone.ok())
      return scope.done(berth::Status(s.code(), s.message() + " (removing the pod: " + undone.message() + ")"));
    return scope.done(s);
  }
  resp->set_pod_sandbox_id(*id);
  ctx_.events.sandbox_changed(*id, v1::CONTAINER_CREATED_EVENT);
  ctx_.events.sandbox_changed(*id, v1::CONTAINER_STARTED_EVENT);
  return scope.done(ok_status());
}

}  // namespace berth
