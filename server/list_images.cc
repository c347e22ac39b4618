// ListImages and StreamImages: every image, or the one the filter's image names; the stream sends
// them in batches so a node with many images never builds one huge message.
#include "image_to_cri.h"
#include "rpc_scope.h"
#include "services.h"
#include "berth/image_manager.h"
#include "stream_batches.h"

namespace berth {

grpc::Status ImageServiceImpl::ListImages(grpc::ServerContext*, const v1::ListImagesRequest* req,
                                          v1::ListImagesResponse* resp) {
  RpcScope scope("ListImages");
  const std::string& want = req->filter().image().image();
  if (!want.empty()) {
    if (auto r = ctx_.images.find(want)) image_to_cri(*r, ctx_.pinned_images, resp->add_images());
    return scope.done(ok_status());
  }
  for (const auto& r : ctx_.images.list()) image_to_cri(r, ctx_.pinned_images, resp->add_images());
  return scope.done(ok_status());
}

grpc::Status ImageServiceImpl::StreamImages(grpc::ServerContext*, const v1::StreamImagesRequest* req,
                                            grpc::ServerWriter<v1::StreamImagesResponse>* writer) {
  RpcScope scope("StreamImages");
  std::vector<ImageRecord> images;
  const std::string& want = req->filter().image().image();
  if (!want.empty()) {
    if (auto r = ctx_.images.find(want)) images.push_back(*r);
  } else {
    images = ctx_.images.list();
  }
  return scope.done(stream_in_batches(
      writer, images, [this](auto& b, const auto& r) { image_to_cri(r, ctx_.pinned_images, b.add_images()); },
      "StreamImages"));
}

}  // namespace berth
