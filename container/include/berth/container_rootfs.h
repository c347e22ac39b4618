// A container's root filesystem: overlayfs with the image's layer snapshots as lower dirs and the
// container's own writable upper (and work) dir, mounted under the runtime state dir.
#pragma once

#include <string>
#include <vector>

#include "berth/status.h"

namespace berth {

// A pod with a user namespace of its own: each layer is mounted id-mapped through that namespace
// (its files show as the pod's ids, and container root owns what root owns in the image), on a
// dir of `staging` that goes once the overlay holds the layers; the upper is not id-mapped, so what
// the container writes is stored under the host ids it runs as, and it belongs to the pod's root.
struct RootfsIdmap {
  int userns_fd = -1;
  std::string staging;  // <bundle>/idmap
  uint32_t root_uid = 0, root_gid = 0;
};

// Each of `layers` attached id-mapped through `userns_fd` at <staging>/<i> (staging made private,
// 0700): the copies, in the same order, for an overlay's lower dirs. On failure what was made is
// left for release_prepared_mounts(staging).
Result<std::vector<std::string>> attach_idmapped_layers(const std::vector<std::string>& layers, int userns_fd,
                                                        const std::string& staging);

// `layers` lowest first. Creates upper, work and target when missing.
Status mount_container_rootfs(const std::vector<std::string>& layers, const std::string& upper, const std::string& work,
                              const std::string& target, const RootfsIdmap* idmap = nullptr);
// Detaches the mount and any id-mapped layer a mount cut short left in <target>/../idmap; a path
// that is not mounted (or gone) is fine.
Status unmount_container_rootfs(const std::string& target);
bool is_mount_point(const std::string& path);

}  // namespace berth
