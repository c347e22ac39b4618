// ImageFsInfo: bytes and inodes of the image store and of the containers' writable layers.
#include "rpc_scope.h"
#include "services.h"
#include "berth/image_manager.h"

namespace berth {

static void fill(const StoreUsage& u, v1::FilesystemUsage* out) {
  out->set_timestamp(u.timestamp_ns);
  out->mutable_fs_id()->set_mountpoint(u.mountpoint);
  out->mutable_used_bytes()->set_value(u.bytes);
  out->mutable_inodes_used()->set_value(u.inodes);
}

grpc::Status ImageServiceImpl::ImageFsInfo(grpc::ServerContext*, const v1::ImageFsInfoRequest*,
                                           v1::ImageFsInfoResponse* resp) {
  RpcScope scope("ImageFsInfo");
  auto images = ctx_.images.image_store_usage();
  if (!images.ok()) return scope.done(images.status());
  fill(*images, resp->add_image_filesystems());
  auto containers = ctx_.images.container_layers_usage();
  if (!containers.ok()) return scope.done(containers.status());
  fill(*containers, resp->add_container_filesystems());
  return scope.done(ok_status());
}

}  // namespace berth
