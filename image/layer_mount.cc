// Read-only mounts of layer snapshots (see layer_mount.h).
#include "berth/layer_mount.h"

#include <sys/mount.h>
#include <unistd.h>

#include <cerrno>
#include <filesystem>

namespace berth {

Result<std::string> overlay_lowerdir(const std::vector<std::string>& layers, size_t extra) {
  std::string lower;
  for (auto it = layers.rbegin(); it != layers.rend(); ++it) lower += (lower.empty() ? "" : ":") + *it;
  std::string opt = "lowerdir=" + lower;
  if (opt.size() + extra >= static_cast<size_t>(::sysconf(_SC_PAGESIZE)))
    return invalid_argument("the image has too many layers for one overlay mount (" + std::to_string(layers.size()) +
                            ")");
  return opt;
}

Status mount_layers_read_only(const std::vector<std::string>& layers, const std::string& target) {
  std::error_code ec;
  std::filesystem::create_directories(target, ec);
  if (ec) return Status(Code::internal, "mkdir " + target + ": " + ec.message());
  const unsigned long flags = MS_RDONLY | MS_NOSUID | MS_NODEV;
  if (layers.empty()) {
    if (::mount("tmpfs", target.c_str(), "tmpfs", flags, "size=4k,mode=755") != 0)
      return errno_status(errno, "mount an empty tmpfs on " + target);
    return ok_status();
  }
  if (layers.size() == 1) {
    if (::mount(layers[0].c_str(), target.c_str(), nullptr, MS_BIND, nullptr) != 0)
      return errno_status(errno, "bind " + layers[0] + " at " + target);
    if (::mount(nullptr, target.c_str(), nullptr, MS_BIND | MS_REMOUNT | flags, nullptr) != 0) {
      Status s = errno_status(errno, "make " + target + " read-only");
      ::umount2(target.c_str(), MNT_DETACH);
      return s;
    }
    return ok_status();
  }
  auto lower = overlay_lowerdir(layers);
  if (!lower.ok()) return lower.status();
  if (::mount("overlay", target.c_str(), "overlay", flags, lower->c_str()) != 0)
    return errno_status(errno, "mount overlay on " + target);
  return ok_status();
}

}  // namespace berth
