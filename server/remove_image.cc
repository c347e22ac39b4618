// RemoveImage: by id, tag or digest, the image with all its tags (CRI 1.36); with a runtime handler,
// that handler's claim on it; unknown images succeed; an image pinned by berth.toml's
// pinned_images is refused.
#include "image_handler.h"
#include "pinned_images.h"
#include "rpc_scope.h"
#include "services.h"
#include "berth/image_manager.h"

namespace berth {

grpc::Status ImageServiceImpl::RemoveImage(grpc::ServerContext*, const v1::RemoveImageRequest* req,
                                           v1::RemoveImageResponse*) {
  RpcScope scope("RemoveImage", "image=" + req->image().image());
  if (req->image().image().empty()) return scope.done(invalid_argument("image.image: no image reference given"));
  auto handler = image_handler_key(ctx_.runtimes, req->image().runtime_handler(), "image.runtime_handler", false);
  if (!handler.ok()) return scope.done(handler.status());
  // kubelet's image GC never removes a pinned image; a caller that asks anyway is told why.
  if (auto r = ctx_.images.find(req->image().image()))
    if (auto entry = ctx_.pinned_images.pinning(*r))
      return scope.done(failed_precondition("image " + req->image().image() + ": pinned by pinned_images entry \"" +
                                            *entry + "\" (berth.toml); take it out of pinned_images and reload first"));
  return scope.done(ctx_.images.remove(req->image().image(), *handler));
}

}  // namespace berth
