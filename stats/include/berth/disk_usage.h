// Bytes and inodes used by a directory tree (a container's writable layer), counted with one
// walk of the tree in-process: kubelet asks for this for every container on each stats call.
#pragma once

#include <cstdint>
#include <string>

#include "berth/status.h"

namespace berth {

struct DiskUsage {
  uint64_t bytes = 0;   // allocated blocks, as du counts them
  uint64_t inodes = 0;  // each inode once, however many hard links point at it
};

// Does not cross into other filesystems (mounts below the dir are not the layer's).
Result<DiskUsage> measure_disk_usage(const std::string& dir);

}  // namespace berth
