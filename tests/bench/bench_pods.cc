// remove_pods: one RemovePodSandbox per id (it stops the pod and its containers first);
// sleeper_config: the container every pod benchmark runs.
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

runtime::v1::ContainerConfig sleeper_config(const std::string& name, const std::string& image) {
  runtime::v1::ContainerConfig c;
  c.mutable_metadata()->set_name(name);
  c.mutable_image()->set_image(image);
  c.add_command("sleep");
  c.add_command("100000");
  c.mutable_linux()->mutable_security_context()->mutable_namespace_options()->set_pid(runtime::v1::CONTAINER);
  return c;
}

}  // namespace berth::bench
