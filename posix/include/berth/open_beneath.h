// open_beneath: opens (creating it, and the directories on the way, when asked) a file named by a
// relative path below a directory, following no symlink and never leaving the directory
// (openat2 RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS). For CRI log files: the log directory is
// writable by others (kubelet, log agents), and a symlink planted there must not redirect a
// container's output onto a host file. Header-only and free of the C++ library, so the static
// berth-monitor uses the very same code as berthd.
#pragma once

#include <errno.h>
#include <fcntl.h>
#include <linux/openat2.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

namespace berth {

// Returns the fd, or -errno (ELOOP for a symlink on the way, EXDEV for a path leaving `dir`).
// `flags` are open(2) flags for the file itself (O_CLOEXEC and O_NOCTTY are added); with O_CREAT,
// missing directories on the way are made with mode 0755.
inline int open_beneath(const char* dir, const char* rel, int flags, mode_t mode) {
  int dirfd = ::open(dir, O_PATH | O_DIRECTORY | O_CLOEXEC);
  if (dirfd < 0) return -errno;
  char part[4096];
  const char* p = rel;
  for (;;) {
    while (*p == '/') ++p;
    const char* slash = strchr(p, '/');
    if (!slash) break;
    size_t n = static_cast<size_t>(slash - p);
    if (n == 0 || n >= sizeof part) {
      ::close(dirfd);
      return -EINVAL;
    }
    memcpy(part, p, n);
    part[n] = 0;
    if ((flags & O_CREAT) && ::mkdirat(dirfd, part, 0755) != 0 && errno != EEXIST) {
      int err = errno;
      ::close(dirfd);
      return -err;
    }
    open_how how;
    memset(&how, 0, sizeof how);
    how.flags = O_PATH | O_DIRECTORY | O_CLOEXEC;
    how.resolve = RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS;
    int next = static_cast<int>(::syscall(SYS_openat2, dirfd, part, &how, sizeof how));
    int err = errno;
    ::close(dirfd);
    if (next < 0) return -err;
    dirfd = next;
    p = slash + 1;
  }
  open_how how;
  memset(&how, 0, sizeof how);
  how.flags = static_cast<unsigned long long>(flags | O_CLOEXEC | O_NOCTTY | O_NOFOLLOW);
  how.mode = (flags & O_CREAT) ? mode : 0;
  how.resolve = RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS;
  int fd = static_cast<int>(::syscall(SYS_openat2, dirfd, p, &how, sizeof how));
  int err = errno;
  ::close(dirfd);
  return fd < 0 ? -err : fd;
}

}  // namespace berth
