// Status: RuntimeReady from the OCI runtime probe; NetworkReady from the CNI manager (a valid
// network config whose plugins are all found). verbose adds the effective config, the runtime and
// the network (with UpdateRuntimeConfig's pod CIDR) as JSON.
#include "rpc_scope.h"
#include "services.h"

namespace berth {

grpc::Status RuntimeServiceImpl::Status(grpc::ServerContext*, const v1::StatusRequest* req,
                                        v1::StatusResponse* resp) {
  RpcScope rpc("Status");
  const RuntimeHandler& handler = *ctx_.runtimes.find("");
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
  NetworkReadiness net = ctx_.cni.readiness();
  network->set_status(net.ready);
  if (!net.ready) {
    network->set_reason(net.reason);
    network->set_message(net.message);
  }

  if (req->verbose()) {
    // The runtime's version text and the CNI conf file names come from outside and need not be
    // UTF-8; dump() throws on such bytes unless told to replace them.
    auto dump = [](const nlohmann::json& j) { return j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace); };
    nlohmann::json info = config_to_json(ctx_.config);
    (*resp->mutable_info())["config"] = info.dump();
    nlohmann::json rt = {{"handler", handler.name},
                         {"configured_path", handler.binary},
                         {"path", probe.path},
                         {"version", probe.version},
                         {"ready", probe.ready}};
    (*resp->mutable_info())["runtime"] = dump(rt);
    nlohmann::json cni = {{"ready", net.ready}, {"message", net.message}, {"network", net.network_name},
                          {"config_file", net.config_file}, {"pod_cidr", ctx_.cni.pod_cidr()}};
    (*resp->mutable_info())["network"] = dump(cni);
    (*resp->mutable_info())["streaming"] = nlohmann::json({{"address", ctx_.streaming.address()}}).dump();
  }
  return rpc.done({});
}

}  // namespace berth
