// Version: names the runtime and the CRI version it speaks.
#include "rpc_scope.h"
#include "services.h"

namespace berth {

grpc::Status RuntimeServiceImpl::Version(grpc::ServerContext*, const v1::VersionRequest*, v1::VersionResponse* resp) {
  RpcScope rpc("Version");
  resp->set_version("0.1.0");
  resp->set_runtime_name("berth");
  resp->set_runtime_version(BERTH_VERSION);
  resp->set_runtime_api_version("v1");
  return rpc.done({});
}

}  // namespace berth
