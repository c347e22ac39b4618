// Mounting an image's layer snapshots: the overlayfs lowerdir option (layers top first, bounded
// by the one page a mount's options may take) and the read-only mount of an image's layers that
// sandbox images and image volumes use (a container's rootfs adds its own upper dir).
#pragma once

#include <string>
#include <vector>

#include "berth/status.h"

namespace berth {

// "lowerdir=<top>:…:<lowest>" for `layers` given lowest first. INVALID_ARGUMENT when it, with
// `extra` more bytes of options, does not fit a mount's option page (too many layers).
Result<std::string> overlay_lowerdir(const std::vector<std::string>& layers, size_t extra = 0);

// `layers` (lowest first) read-only, nosuid and nodev at `target` (made when missing): overlayfs
// for several, a bind for one (overlayfs wants two lower dirs without an upper one), an empty
// tmpfs for none.
Status mount_layers_read_only(const std::vector<std::string>& layers, const std::string& target);

}  // namespace berth
