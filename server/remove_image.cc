// RemoveImage: by id, tag or digest; one tag of several only untags; unknown images succeed.
#include "rpc_scope.h"
#include "services.h"
#include "berth/image_manager.h"

namespace berth {

grpc::Status ImageServiceImpl::RemoveImage(grpc::ServerContext*, const v1::RemoveImageRequest* req,
                                           v1::RemoveImageResponse*) {
  RpcScope scope("RemoveImage", "image=" + req->image().image());
  if (req->image().image().empty()) return scope.done(invalid_argument("image.image: no image reference given"));
  return scope.done(ctx_.images.remove(req->image().image()));
}

}  // namespace berth
