// ImageStatus: an unknown image is an empty answer, not an error (CRI's rule); verbose adds the
// image config as pulled.
#include "image_to_cri.h"
#include "rpc_scope.h"
#include "services.h"
#include "berth/image_manager.h"

namespace berth {

grpc::Status ImageServiceImpl::ImageStatus(grpc::ServerContext*, const v1::ImageStatusRequest* req,
                                           v1::ImageStatusResponse* resp) {
  RpcScope scope("ImageStatus", "image=" + req->image().image());
  if (req->image().image().empty()) return scope.done(invalid_argument("image.image: no image reference given"));
  auto r = ctx_.images.find(req->image().image());
  if (!r) return scope.done(ok_status());
  image_to_cri(*r, ctx_.pinned_images, resp->mutable_image());
  if (req->verbose()) (*resp->mutable_info())["info"] = r->config_json;
  return scope.done(ok_status());
}

}  // namespace berth
