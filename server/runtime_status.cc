// Status: RuntimeReady from the OCI runtime probe; NetworkReady is false until berth has CNI
// networking. verbose adds the effective config as JSON.
#include "rpc_scope.h"
#include "services.h"

namespace berth {

grpc::Status RuntimeServiceImpl::Status(grpc::ServerContext*, const v1::StatusRequest* req,
                                        v1::StatusResponse* resp) {
  RpcScope rpc("Status");
  const auto& handler = ctx_.config.runtimes.at(ctx_.config.default_runtime);
  RuntimeProbeResult probe = ctx_.runtime_probe.check();

  auto* runtime = resp->mutable_status()->add_conditions();
  runtime->set_type("RuntimeReady");
  runtime->set_status(probe.ready);
  if (!probe.ready) {
    runtime->set_reason("OCIRuntimeNotReady");
    runtime->set_message(probe.message);
  }
  auto* network = resp->mutable_status()->add_conditions();
  network->set_type("NetworkReady");
  network->set_status(false);
  network->set_reason("NetworkPluginNotReady");
  network->set_message("berth: pod networking (CNI) is not available in this build");

  if (req->verbose()) {
    nlohmann::json info = config_to_json(ctx_.config);
    (*resp->mutable_info())["config"] = info.dump();
    nlohmann::json rt = {{"handler", ctx_.config.default_runtime},
                         {"configured_path", handler.path},
                         {"path", probe.path},
                         {"version", probe.version},
                         {"ready", probe.ready}};
    (*resp->mutable_info())["runtime"] = rt.dump();
  }
  return rpc.done({});
}

}  // namespace berth
