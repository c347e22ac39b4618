// The mounts a sandbox owns besides its netns pin: the pod's /dev/shm tmpfs, and the read-only
// rootfs of a pause image from a registry. Each unmount is fine when nothing is mounted.
#pragma once

#include <string>
#include <vector>

#include "berth/status.h"

namespace berth {

struct PauseImage;

// The pause image's layers, read-only (mount_layers_read_only of image/).
Result<std::string> mount_image_rootfs(const PauseImage& image, const std::string& target);
Status mount_pod_shm(const std::string& path);
// Detaches whatever is mounted at `target`; not mounted or gone is fine.
Status unmount_path(const std::string& target);

}  // namespace berth
