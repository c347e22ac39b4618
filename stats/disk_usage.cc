// A depth-first walk with openat/fstatat on directory fds (no path rebuilding, no exec of du).
#include "berth/disk_usage.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <set>
#include <utility>
#include <vector>

#include "berth/unique_fd.h"

namespace berth {

namespace {

class Walker {
 public:
  explicit Walker(dev_t dev) : dev_(dev) {}

  void count(const struct stat& st) {
    if (st.st_nlink > 1 && !S_ISDIR(st.st_mode)) {
      if (!seen_.emplace(st.st_dev, st.st_ino).second) return;
    }
    usage.inodes++;
    usage.bytes += static_cast<uint64_t>(st.st_blocks) * 512;
  }

  // Takes ownership of dirfd. Returns 0 or an errno for the top directory only; entries that
  // vanish while we walk (a running container deleting files) are skipped.
  void walk(int dirfd) {
    DIR* d = ::fdopendir(dirfd);
    if (!d) {
      ::close(dirfd);
      return;
    }
    while (dirent* e = ::readdir(d)) {
      if (std::strcmp(e->d_name, ".") == 0 || std::strcmp(e->d_name, "..") == 0) continue;
      struct stat st {};
      if (::fstatat(::dirfd(d), e->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0) continue;
      if (st.st_dev != dev_) continue;
      count(st);
      if (S_ISDIR(st.st_mode)) {
        int child = ::openat(::dirfd(d), e->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (child >= 0) walk(child);
      }
    }
    ::closedir(d);
  }

  DiskUsage usage;

 private:
  dev_t dev_;
  std::set<std::pair<dev_t, ino_t>> seen_;
};

}  // namespace

Result<DiskUsage> measure_disk_usage(const std::string& dir) {
  int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return errno_status(errno, "measure disk usage of " + dir, errno == ENOENT ? Code::not_found : Code::internal);
  struct stat st {};
  if (::fstat(fd, &st) != 0) {
    int err = errno;
    ::close(fd);
    return errno_status(err, "stat " + dir);
  }
  Walker w(st.st_dev);
  w.count(st);
  w.walk(fd);
  return w.usage;
}

}  // namespace berth
