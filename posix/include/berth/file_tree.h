// Walks of directory trees that a container or an image controls (writable layers, bundles,
// snapshots): their depth is the tree owner's choice, so no walk here recurses or keeps a
// descriptor per level. Each walk holds at most two directory fds and memory in proportion to the
// depth (a few bytes per level), goes back up through ".." and checks that it came back to the
// very directory it left (by device and inode), so a tree moved about meanwhile can never lead it
// elsewhere. Neither walk crosses into another filesystem.
#pragma once

#include <cstdint>
#include <string>

#include "berth/status.h"

namespace berth {

struct DiskUsage {
  uint64_t bytes = 0;   // allocated blocks, as du counts them
  uint64_t inodes = 0;  // each inode once, however many hard links point at it
};

// NOT_FOUND when `dir` does not exist. Entries that vanish during the walk are skipped; a
// directory moved out from under the walk ends it with FAILED_PRECONDITION (the caller keeps its
// previous figure).
Result<DiskUsage> measure_disk_usage(const std::string& dir);

// rm -rf of `path` (a file or a directory tree), at any depth. A missing path is fine. It never
// crosses a mount point (FAILED_PRECONDITION naming it: something is still mounted below) and
// never follows a symlink; an entry it cannot remove is an error naming it.
Status remove_tree(const std::string& path);

}  // namespace berth
