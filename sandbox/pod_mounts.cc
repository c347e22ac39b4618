// See pod_mounts.h.
#include "pod_mounts.h"

#include <sys/mount.h>
#include <sys/stat.h>

#include <cerrno>

#include "berth/layer_mount.h"
#include "berth/sandbox_manager.h"

namespace berth {

Result<std::string> mount_image_rootfs(const PauseImage& image, const std::string& target) {
  if (image.layer_dirs.empty()) return invalid_argument("sandbox image has no layers");
  if (image.args.empty()) return invalid_argument("sandbox image has no Entrypoint or Cmd");
  if (Status s = mount_layers_read_only(image.layer_dirs, target); !s.ok())
    return s.context("mount sandbox image rootfs");
  return target;
}

Status mount_pod_shm(const std::string& path) {
  if (::mkdir(path.c_str(), 0755) != 0 && errno != EEXIST) return errno_status(errno, "mkdir " + path);
  if (::mount("shm", path.c_str(), "tmpfs", MS_NOSUID | MS_NODEV | MS_NOEXEC, "mode=1777,size=65536k") != 0)
    return errno_status(errno, "mount the pod's shm on " + path);
  return ok_status();
}

Status unmount_path(const std::string& target) {
  // Loops: a path may hold several stacked mounts (a mount repeated by a step run twice).
  for (int i = 0; i < 16; ++i) {
    if (::umount2(target.c_str(), MNT_DETACH) != 0) {
      if (errno == EINVAL || errno == ENOENT) return ok_status();
      return errno_status(errno, "unmount " + target);
    }
  }
  return internal_error("unmount " + target + ": still mounted after 16 unmounts");
}

}  // namespace berth
