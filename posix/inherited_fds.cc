// close_descriptors_from and mark_descriptors_cloexec_from: close_range(2) (Linux 5.9, and 5.11
// for CLOSE_RANGE_CLOEXEC), with a walk of /proc/self/fd through getdents64 into a stack buffer
// where the kernel lacks it. Written by hand because glibc's closefrom() is not async-signal-safe
// in its fallback and has no close-on-exec flavour.
#include "berth/inherited_fds.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <climits>

#ifndef CLOSE_RANGE_CLOEXEC
#define CLOSE_RANGE_CLOEXEC (1U << 2)
#endif

namespace berth {
namespace {

struct LinuxDirent64 {
  unsigned long long d_ino;
  long long d_off;
  unsigned short d_reclen;
  unsigned char d_type;
  char d_name[];
};

int parse_fd(const char* name) {
  if (*name == 0) return -1;
  long v = 0;
  for (const char* p = name; *p; ++p) {
    if (*p < '0' || *p > '9') return -1;
    v = v * 10 + (*p - '0');
    if (v > INT_MAX) return -1;
  }
  return static_cast<int>(v);
}

// Applies `cloexec` (set the flag) or close to every listed descriptor >= first but the walk's own
// and `except`.
int walk_proc_fds(int first, bool cloexec, int except) {
  int dir = static_cast<int>(syscall(SYS_openat, AT_FDCWD, "/proc/self/fd", O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (dir < 0) return errno;
  alignas(8) char buf[4096];
  int err = 0;
  for (;;) {
    long n = syscall(SYS_getdents64, dir, buf, sizeof buf);
    if (n < 0) {
      err = errno;
      break;
    }
    if (n == 0) break;
    for (long at = 0; at < n;) {
      auto* d = reinterpret_cast<LinuxDirent64*>(buf + at);
      at += d->d_reclen;
      int fd = parse_fd(d->d_name);
      if (fd < first || fd == dir || fd == except) continue;
      if (cloexec) {
        int flags = fcntl(fd, F_GETFD);
        if (flags >= 0 && !(flags & FD_CLOEXEC)) fcntl(fd, F_SETFD, flags | FD_CLOEXEC);
      } else {
        close(fd);
      }
    }
  }
  close(dir);
  return err;
}

int close_range_or_walk(int first, bool cloexec, int except) {
  if (first < 0) first = 0;
  const unsigned flags = cloexec ? CLOSE_RANGE_CLOEXEC : 0U;
  long rc = 0;
  if (except >= first) {
    if (except > first)
      rc = syscall(SYS_close_range, static_cast<unsigned>(first), static_cast<unsigned>(except - 1), flags);
    if (rc == 0) rc = syscall(SYS_close_range, static_cast<unsigned>(except + 1), ~0U, flags);
  } else {
    rc = syscall(SYS_close_range, static_cast<unsigned>(first), ~0U, flags);
  }
  if (rc == 0) return 0;
  if (errno != ENOSYS && errno != EINVAL) return errno;  // EINVAL: a kernel without the flag
  return walk_proc_fds(first, cloexec, except);
}

}  // namespace

int close_descriptors_from(int first, int except) noexcept { return close_range_or_walk(first, false, except); }

int mark_descriptors_cloexec_from(int first) noexcept { return close_range_or_walk(first, true, -1); }

}  // namespace berth
