// make_private_dir: berth's directories that hold container and sandbox content (bundles, rootfs
// mounts, pod shm, writable layers, image snapshots, records) must not be reachable by other host
// users: an image may ship a setuid-root binary or a device node, and any local user able to walk
// to it could run or open it. The mode is set also on a directory that exists already (made by an
// older berth with a wider one).
#pragma once

#include <sys/types.h>

#include <string>

#include "berth/status.h"

namespace berth {

// mkdir -p (missing parents 0755) and the leaf chmod'ed to `mode` (0700 unless said otherwise).
Status make_private_dir(const std::string& dir, mode_t mode = 0700);

}  // namespace berth
