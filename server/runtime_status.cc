// Status: RuntimeReady from the OCI runtime probe; NetworkReady from the CNI manager (a valid
// network config whose plugins are all found). verbose adds the effective config, the runtime and
// the network (with UpdateRuntimeConfig's pod CIDR) as JSON. The handlers and features say what
// kubelet may ask for (it copies them into the node's status and refuses pods that need more).
#include "berth/runtime_handlers.h"
#include "berth/container_manager.h"
#include "rpc_scope.h"
#include "services.h"
#include "berth/cni_manager.h"
#include "berth/config.h"
#include "berth/runtime_probe.h"
#include "berth/streaming_server.h"

namespace berth {

namespace {

// Each handler's entry of the table: what its runtime and this host can really do (a handler whose
// binary is missing can do nothing). The table stats the binary and execs only when it changed.
void add_handler(const std::string& name, const RuntimeHandlers& runtimes, v1::StatusResponse* resp) {
  HandlerFeatures f = runtimes.features(name);
  auto* h = resp->add_runtime_handlers();
  h->set_name(name);
  h->mutable_features()->set_recursive_read_only_mounts(f.recursive_read_only_mounts);
  h->mutable_features()->set_user_namespaces(f.user_namespaces);
}

}  // namespace

grpc::Status RuntimeServiceImpl::Status(grpc::ServerContext*, const v1::StatusRequest* req, v1::StatusResponse* resp) {
  RpcScope rpc("Status");
  const RuntimeHandler handler = *ctx_.runtimes.find("");
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

  add_handler("", ctx_.runtimes, resp);
  for (const RuntimeHandler& h : ctx_.runtimes.all()) add_handler(h.name, ctx_.runtimes, resp);
  // The Strict policy (only the groups the request names, none from the image's /etc/group) is
  // applied by user_lookup; kubelet admits such pods only when the runtime says so.
  resp->mutable_features()->set_supplemental_groups_policy(true);
  // A pod with a user namespace of its own may keep the node's network namespace wherever pods
  // may have user namespaces at all (the default handler's runtime joins one by path, the host
  // id-maps overlay layers): its /sys is then the node's, bound read-only.
  resp->mutable_features()->set_user_namespaces_host_network(ctx_.runtimes.features("").user_namespaces);

  if (req->verbose()) {
    // The runtime's version text and the CNI conf file names come from outside and need not be
    // UTF-8; dump() throws on such bytes unless told to replace them.
    auto dump = [](const nlohmann::json& j) {
      return j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
    };
    nlohmann::json info = config_to_json(ctx_.effective_config());
    (*resp->mutable_info())["config"] = info.dump();
    nlohmann::json rt = {{"handler", handler.name},
                         {"configured_path", handler.binary},
                         {"path", probe.path},
                         {"version", probe.version},
                         {"ready", probe.ready}};
    (*resp->mutable_info())["runtime"] = dump(rt);
    nlohmann::json cni = {{"ready", net.ready},
                          {"message", net.message},
                          {"network", net.network_name},
                          {"config_file", net.config_file},
                          {"pod_cidr", ctx_.cni.pod_cidr()}};
    (*resp->mutable_info())["network"] = dump(cni);
    (*resp->mutable_info())["streaming"] = nlohmann::json({{"address", ctx_.streaming.address()}}).dump();
    // CRI has no field for it: where CRIU works, CheckpointContainer and restores do.
    nlohmann::json criu = {{"supported", false}, {"reason", "checkpoint/restore is turned off (criu_path = \"\")"}};
    if (auto r = ctx_.containers.criu_status()) {
      criu = {{"supported", r->usable}, {"criuVersion", r->version}};
      if (!r->done)
        criu["reason"] = "the CRIU probe (criu check) is still running";
      else if (!r->usable)
        criu["reason"] = r->reason;
    }
    (*resp->mutable_info())["checkpointRestore"] = dump(criu);
  }
  return rpc.done({});
}

}  // namespace berth
