// overlayfs root filesystems. The lowerdir option lists the layers top first; a mount option
// string is limited to one page, which bounds the number of layers (the error says so).
#include "berth/container_rootfs.h"
#include "berth/layer_mount.h"
#include "berth/prepared_mounts.h"
#include "berth/rollback.h"
#include "berth/user_namespace.h"

#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>

namespace berth {

Result<std::vector<std::string>> attach_idmapped_layers(const std::vector<std::string>& layers, int userns_fd,
                                                        const std::string& staging) {
  // Private, as the volume copies are: the layers' id-mapped copies are not propagated through a
  // shared /run while they are attached.
  if (Status s = make_private_mount_dir(staging, 0700); !s.ok()) return s;
  std::vector<std::string> copies;
  for (size_t i = 0; i < layers.size(); ++i) {
    std::string at = staging + "/" + std::to_string(i);
    if (::mkdir(at.c_str(), 0700) != 0) return errno_status(errno, "mkdir " + at);
    if (Status s = attach_idmapped_mount(layers[i], userns_fd, at, false); !s.ok()) return s;
    if (::mount(nullptr, at.c_str(), nullptr, MS_PRIVATE, nullptr) != 0)
      return errno_status(errno, "make the layer copy " + at + " private");
    copies.push_back(at);
  }
  return copies;
}

Status mount_container_rootfs(const std::vector<std::string>& layers, const std::string& upper, const std::string& work,
                              const std::string& target, const RootfsIdmap* idmap) {
  std::error_code ec;
  for (const auto& d : {upper, work, target}) {
    std::filesystem::create_directories(d, ec);
    if (ec) return Status(Code::internal, "rootfs: mkdir " + d + ": " + ec.message());
  }
  std::vector<std::string> lowers = layers;
  if (lowers.empty()) {
    // An image without layers: overlayfs still wants a lower dir.
    lowers.push_back(work + "-empty");
    std::filesystem::create_directories(lowers[0], ec);
  }
  // The overlay, once mounted, holds its own references to the layers: their staged copies go
  // whatever the outcome. A release that fails is logged, not returned (the mount's own error, or
  // its success, is the answer), and unmount_container_rootfs sweeps again.
  Rollback staged("container rootfs " + target);
  if (idmap && !layers.empty()) {
    if (::chown(upper.c_str(), idmap->root_uid, idmap->root_gid) != 0)
      return errno_status(errno, "rootfs: give the upper dir " + upper + " to the pod's root");
    staged.add("release the id-mapped layer copies", [idmap] { return release_prepared_mounts(idmap->staging); });
    auto copies = attach_idmapped_layers(lowers, idmap->userns_fd, idmap->staging);
    if (!copies.ok()) return copies.status().context("rootfs");
    lowers = std::move(*copies);
  }
  const std::string rest = ",upperdir=" + upper + ",workdir=" + work;
  auto lower = overlay_lowerdir(lowers, rest.size());
  if (!lower.ok()) return lower.status().context("rootfs");
  std::string opts = *lower + rest;
  if (::mount("overlay", target.c_str(), "overlay", 0, opts.c_str()) != 0)
    return errno_status(errno, "rootfs: mount overlay on " + target);
  return ok_status();
}

Status unmount_container_rootfs(const std::string& target) {
  if (::umount2(target.c_str(), MNT_DETACH) != 0 && errno != EINVAL && errno != ENOENT)
    return errno_status(errno, "rootfs: unmount " + target);
  return release_prepared_mounts(std::filesystem::path(target).parent_path().string() + "/idmap");
}

bool is_mount_point(const std::string& path) {
  struct stat self {
  }, parent{};
  if (::stat(path.c_str(), &self) != 0 || ::stat((path + "/..").c_str(), &parent) != 0) return false;
  return self.st_dev != parent.st_dev || self.st_ino == parent.st_ino;
}

}  // namespace berth
