// ImageStatus: an unknown image is an empty answer, not an error (CRI's rule), and so is one never
// pulled for the runtime handler named; verbose adds the image config as pulled and which rule of
// the signature policy accepted the image.
#include "image_handler.h"
#include "image_to_cri.h"
#include "rpc_scope.h"
#include "services.h"
#include "berth/image_manager.h"

namespace berth {

grpc::Status ImageServiceImpl::ImageStatus(grpc::ServerContext*, const v1::ImageStatusRequest* req,
                                           v1::ImageStatusResponse* resp) {
  RpcScope scope("ImageStatus", "image=" + req->image().image());
  if (req->image().image().empty()) return scope.done(invalid_argument("image.image: no image reference given"));
  const std::string& asked = req->image().runtime_handler();
  auto handler = image_handler_key(ctx_.runtimes, asked, "image.runtime_handler", false);
  if (!handler.ok()) return scope.done(handler.status());
  auto r = ctx_.images.find(req->image().image());
  if (!r || (*handler && !r->serves(**handler))) return scope.done(ok_status());
  image_to_cri(*r, ctx_.pinned_images, resp->mutable_image(), asked);
  if (req->verbose()) {
    (*resp->mutable_info())["info"] = r->config_json;
    if (!r->accepted_by.empty()) (*resp->mutable_info())["signature_policy"] = r->accepted_by;
  }
  return scope.done(ok_status());
}

}  // namespace berth
