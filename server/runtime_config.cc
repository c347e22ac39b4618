// RuntimeConfig: tells the kubelet which cgroup driver berth uses, so the two agree.
#include "rpc_scope.h"
#include "services.h"
#include "berth/config.h"

namespace berth {

grpc::Status RuntimeServiceImpl::RuntimeConfig(grpc::ServerContext*, const v1::RuntimeConfigRequest*,
                                               v1::RuntimeConfigResponse* resp) {
  RpcScope rpc("RuntimeConfig");
  resp->mutable_linux()->set_cgroup_driver(ctx_.config.cgroup_driver == "systemd" ? v1::CgroupDriver::SYSTEMD
                                                                                  : v1::CgroupDriver::CGROUPFS);
  return rpc.done({});
}

}  // namespace berth
