// ListContainers and StreamContainers: from memory, filtered by id prefix, state, pod sandbox id
// prefix and labels.
#include "rpc_scope.h"
#include "services.h"
#include "berth/container_manager.h"
#include "stream_batches.h"

namespace berth {

grpc::Status RuntimeServiceImpl::ListContainers(grpc::ServerContext*, const v1::ListContainersRequest* req,
                                                v1::ListContainersResponse* resp) {
  RpcScope scope("ListContainers");
  for (auto& c : ctx_.containers.list(req->filter())) *resp->add_containers() = std::move(c);
  return scope.done(ok_status());
}

grpc::Status RuntimeServiceImpl::StreamContainers(grpc::ServerContext*, const v1::StreamContainersRequest* req,
                                                  grpc::ServerWriter<v1::StreamContainersResponse>* writer) {
  RpcScope scope("StreamContainers");
  return scope.done(stream_in_batches(
      writer, ctx_.containers.list(req->filter()), [](auto& b, const auto& c) { *b.add_containers() = c; },
      "StreamContainers"));
}

}  // namespace berth
