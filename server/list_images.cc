// ListImages and StreamImages: every image, or the one the filter's image names, or those pulled
// for the filter's runtime handler; the stream sends them in batches so a node with many images
// never builds one huge message.
#include "image_handler.h"
#include "image_to_cri.h"
#include "rpc_scope.h"
#include "services.h"
#include "berth/image_manager.h"
#include "stream_batches.h"

namespace berth {

// The images the filter names (its image, its runtime handler), or every one.
static Result<std::vector<ImageRecord>> filtered(const ServiceContext& ctx, const v1::ImageSpec& filter) {
  auto handler = image_handler_key(ctx.runtimes, filter.runtime_handler(), "filter.image.runtime_handler", false);
  if (!handler.ok()) return handler.status();
  std::vector<ImageRecord> images;
  if (!filter.image().empty()) {
    if (auto r = ctx.images.find(filter.image())) images.push_back(std::move(*r));
  } else {
    images = ctx.images.list();
  }
  if (*handler) std::erase_if(images, [&](const ImageRecord& r) { return !r.serves(**handler); });
  return images;
}

grpc::Status ImageServiceImpl::ListImages(grpc::ServerContext*, const v1::ListImagesRequest* req,
                                          v1::ListImagesResponse* resp) {
  RpcScope scope("ListImages");
  auto images = filtered(ctx_, req->filter().image());
  if (!images.ok()) return scope.done(images.status());
  for (const auto& r : *images)
    image_to_cri(r, ctx_.pinned_images, resp->add_images(), req->filter().image().runtime_handler());
  return scope.done(ok_status());
}

grpc::Status ImageServiceImpl::StreamImages(grpc::ServerContext*, const v1::StreamImagesRequest* req,
                                            grpc::ServerWriter<v1::StreamImagesResponse>* writer) {
  RpcScope scope("StreamImages");
  auto images = filtered(ctx_, req->filter().image());
  if (!images.ok()) return scope.done(images.status());
  const std::string& asked = req->filter().image().runtime_handler();
  return scope.done(stream_in_batches(
      writer, *images,
      [this, &asked](auto& b, const auto& r) { image_to_cri(r, ctx_.pinned_images, b.add_images(), asked); },
      "StreamImages"));
}

}  // namespace berth
