// ListPodSandbox and StreamPodSandboxes: from memory, filtered by id prefix, state and labels.
#include "rpc_scope.h"
#include "services.h"
#include "berth/sandbox_manager.h"
#include "stream_batches.h"

namespace berth {

grpc::Status RuntimeServiceImpl::ListPodSandbox(grpc::ServerContext*, const v1::ListPodSandboxRequest* req,
                                                v1::ListPodSandboxResponse* resp) {
  RpcScope scope("ListPodSandbox");
  for (auto& s : ctx_.sandboxes.list(req->filter())) *resp->add_items() = std::move(s);
  return scope.done(ok_status());
}

grpc::Status RuntimeServiceImpl::StreamPodSandboxes(grpc::ServerContext*, const v1::StreamPodSandboxesRequest* req,
                                                    grpc::ServerWriter<v1::StreamPodSandboxesResponse>* writer) {
  RpcScope scope("StreamPodSandboxes");
  return scope.done(stream_in_batches(
      writer, ctx_.sandboxes.list(req->filter()), [](auto& b, const auto& p) { *b.add_pod_sandboxes() = p; },
      "StreamPodSandboxes"));
}

}  // namespace berth
