// overlayfs root filesystems. The lowerdir option lists the layers top first; a mount option
// string is limited to one page, which bounds the number of layers (the error says so).
#include "berth/container_rootfs.h"
#include "berth/layer_mount.h"
#include "berth/user_namespace.h"

#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>

namespace berth {

namespace {

// Detaches the id-mapped layers under `staging` and removes it; the overlay, once mounted, holds
// its own references to them.
Status release_idmapped_layers(const std::string& staging) {
  std::error_code ec;
  if (!std::filesystem::exists(staging, ec)) return ok_status();
  for (const auto& e : std::filesystem::directory_iterator(staging, ec)) {
    const std::string p = e.path().string();
    if (::umount2(p.c_str(), MNT_DETACH) != 0 && errno != EINVAL && errno != ENOENT)
      return errno_status(errno, "rootfs: detach the id-mapped layer " + p);
    if (::rmdir(p.c_str()) != 0 && errno != ENOENT) return errno_status(errno, "rootfs: rmdir " + p);
  }
  if (::rmdir(staging.c_str()) != 0 && errno != ENOENT) return errno_status(errno, "rootfs: rmdir " + staging);
  return ok_status();
}

}  // namespace

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
  struct Staged {
    const RootfsIdmap* idmap;
    ~Staged() {
      if (idmap) (void)release_idmapped_layers(idmap->staging);  // nothing to report: best effort on the way out
    }
  } staged{nullptr};
  if (idmap && !layers.empty()) {
    if (::chown(upper.c_str(), idmap->root_uid, idmap->root_gid) != 0)
      return errno_status(errno, "rootfs: give the upper dir " + upper + " to the pod's root");
    if (::mkdir(idmap->staging.c_str(), 0700) != 0) return errno_status(errno, "rootfs: mkdir " + idmap->staging);
    staged.idmap = idmap;
    for (size_t i = 0; i < lowers.size(); ++i) {
      std::string at = idmap->staging + "/" + std::to_string(i);
      if (::mkdir(at.c_str(), 0700) != 0) return errno_status(errno, "rootfs: mkdir " + at);
      if (Status s = attach_idmapped_mount(lowers[i], idmap->userns_fd, at, false); !s.ok()) return s.context("rootfs");
      lowers[i] = at;
    }
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
  return release_idmapped_layers(std::filesystem::path(target).parent_path().string() + "/idmap");
}

bool is_mount_point(const std::string& path) {
  struct stat self {}, parent {};
  if (::stat(path.c_str(), &self) != 0 || ::stat((path + "/..").c_str(), &parent) != 0) return false;
  return self.st_dev != parent.st_dev || self.st_ino == parent.st_ino;
}

}  // namespace berth
