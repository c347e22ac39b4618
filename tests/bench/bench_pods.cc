// remove_pods: one RemovePodSandbox per id (it stops the pod and its containers first).
#include "bench_pods.h"

namespace berth::bench {

void remove_pods(runtime::v1::RuntimeService::Stub& rt, const std::vector<std::string>& ids) {
  for (const auto& id : ids) {
    grpc::ClientContext ctx;
    runtime::v1::RemovePodSandboxRequest req;
    req.set_pod_sandbox_id(id);
    runtime::v1::RemovePodSandboxResponse r;
    (void)rt.RemovePodSandbox(&ctx, req, &r);
  }
}

}  // namespace berth::bench
