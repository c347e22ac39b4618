// require_free_space: the check before a step that writes several files a half-done step would
// leave behind (a container's start: the runtime's state, its log, the monitor's socket and exit
// file). A full filesystem is then refused up front, naming it, rather than failing in the
// runtime's words half-way and leaving the container unstartable.
#pragma once

#include <cstdint>
#include <string>

#include "berth/status.h"

namespace berth {

struct FreeSpaceFloor {
  uint64_t bytes = 1 << 20;  // well above what one start writes (a few KiB), below any real free space
  uint64_t inodes = 64;
};

// RESOURCE_EXHAUSTED "<what> <dir>: no space left on device (N bytes free, at least M needed)"
// (or the same for inodes) when the filesystem of `dir` has less than the floor for unprivileged
// users; ok when it has enough or cannot be asked (the step itself then reports).
Status require_free_space(const std::string& dir, const std::string& what, FreeSpaceFloor floor = {});

}  // namespace berth
