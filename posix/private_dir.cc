// See private_dir.h.
#include "berth/private_dir.h"

#include <sys/stat.h>

#include <cerrno>

namespace berth {

Status make_private_dir(const std::string& dir, mode_t mode) {
  if (dir.empty()) return invalid_argument("make directory: empty path");
  for (size_t pos = 1; pos < dir.size(); ++pos) {
    if (dir[pos] != '/') continue;
    std::string part = dir.substr(0, pos);
    if (::mkdir(part.c_str(), 0755) != 0 && errno != EEXIST) return errno_status(errno, "mkdir " + part);
  }
  if (::mkdir(dir.c_str(), mode) != 0 && errno != EEXIST) return errno_status(errno, "mkdir " + dir);
  struct stat st {};
  if (::lstat(dir.c_str(), &st) != 0) return errno_status(errno, "stat " + dir);
  if (!S_ISDIR(st.st_mode)) return internal_error(dir + " exists and is not a directory");
  if ((st.st_mode & 07777) != mode && ::chmod(dir.c_str(), mode) != 0) return errno_status(errno, "chmod " + dir);
  return ok_status();
}

}  // namespace berth
