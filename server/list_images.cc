// ListImages: every image, or the one the filter's image names.
#include "image_to_cri.h"
#include "rpc_scope.h"
#include "services.h"

namespace berth {

grpc::Status ImageServiceImpl::ListImages(grpc::ServerContext*, const v1::ListImagesRequest* req, v1::ListImagesResponse* resp) {
  RpcScope scope("ListImages");
  const std::string& want = req->filter().image().image();
  if (!want.empty()) {
    if (auto r = ctx_.images.find(want)) image_to_cri(*r, resp->add_images());
    return scope.done(ok_status());
  }
  for (const auto& r : ctx_.images.list()) image_to_cri(r, resp->add_images());
  return scope.done(ok_status());
}

}  // namespace berth
