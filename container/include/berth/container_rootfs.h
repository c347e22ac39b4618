// A container's root filesystem: overlayfs with the image's layer snapshots as lower dirs and the
// container's own writable upper (and work) dir, mounted under the runtime state dir.
#pragma once

#include <string>
#include <vector>

#include "berth/status.h"

namespace berth {

// `layers` lowest first. Creates upper, work and target when missing.
Status mount_container_rootfs(const std::vector<std::string>& layers, const std::string& upper, const std::string& work,
                              const std::string& target);
// Detaches the mount; a path that is not mounted (or gone) is fine.
Status unmount_container_rootfs(const std::string& target);
bool is_mount_point(const std::string& path);

}  // namespace berth
