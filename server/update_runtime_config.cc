// UpdateRuntimeConfig: kubelet hands over the node's pod CIDR; berth checks and keeps it (shown in
// verbose Status). CNI plugins keep their own IPAM ranges, as with containerd.
#include "rpc_scope.h"
#include "services.h"
#include "berth/cni_manager.h"

namespace berth {

grpc::Status RuntimeServiceImpl::UpdateRuntimeConfig(grpc::ServerContext*, const v1::UpdateRuntimeConfigRequest* req,
                                                     v1::UpdateRuntimeConfigResponse*) {
  const std::string& cidr = req->runtime_config().network_config().pod_cidr();
  RpcScope scope("UpdateRuntimeConfig", "pod_cidr=" + cidr);
  if (cidr.empty()) return scope.done(ok_status());  // nothing to change
  if (berth::Status s = validate_pod_cidr(cidr); !s.ok()) return scope.done(s);
  ctx_.cni.set_pod_cidr(cidr);
  return scope.done(ok_status());
}

}  // namespace berth
