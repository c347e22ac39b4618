// ListPodSandbox: from memory, filtered by id prefix, state and labels.
#include "rpc_scope.h"
#include "services.h"

namespace berth {

grpc::Status RuntimeServiceImpl::ListPodSandbox(grpc::ServerContext*, const v1::ListPodSandboxRequest* req, v1::ListPodSandboxResponse* resp) {
  RpcScope scope("ListPodSandbox");
  for (auto& s : ctx_.sandboxes.list(req->filter())) *resp->add_items() = std::move(s);
  return scope.done(ok_status());
}

}  // namespace berth
