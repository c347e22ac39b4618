// ListContainers: from memory, filtered by id prefix, state, pod sandbox id prefix and labels.
#include "rpc_scope.h"
#include "services.h"

namespace berth {

grpc::Status RuntimeServiceImpl::ListContainers(grpc::ServerContext*, const v1::ListContainersRequest* req,
                                                v1::ListContainersResponse* resp) {
  RpcScope scope("ListContainers");
  for (auto& c : ctx_.containers.list(req->filter())) *resp->add_containers() = std::move(c);
  return scope.done(ok_status());
}

}  // namespace berth
