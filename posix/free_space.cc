// require_free_space; see free_space.h.
#include "berth/free_space.h"

#include <sys/statvfs.h>

namespace berth {

Status require_free_space(const std::string& dir, const std::string& what, FreeSpaceFloor floor) {
  struct statvfs st;
  if (::statvfs(dir.c_str(), &st) != 0) return ok_status();
  uint64_t bytes = static_cast<uint64_t>(st.f_bavail) * st.f_frsize;
  if (bytes < floor.bytes)
    return Status(Code::resource_exhausted, what + " " + dir + ": no space left on device (" + std::to_string(bytes) +
                                                " bytes free, at least " + std::to_string(floor.bytes) + " needed)");
  // f_files is 0 on filesystems without an inode limit (btrfs, some FUSE): nothing to run out of.
  if (st.f_files != 0 && st.f_favail < floor.inodes)
    return Status(Code::resource_exhausted, what + " " + dir + ": no inodes left on device (" +
                                                std::to_string(st.f_favail) + " free, at least " +
                                                std::to_string(floor.inodes) + " needed)");
  return ok_status();
}

}  // namespace berth
