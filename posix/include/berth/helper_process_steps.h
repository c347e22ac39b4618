// Steps the static helpers that set up a process for a container or pod (berth-exec,
// berth-pause-launch) share. Inline and free of C++ library code, so those programs stay small
// and link none of it.
#pragma once

#include <errno.h>
#include <fcntl.h>
#include <linux/capability.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <stdint.h>

namespace berth::helper_steps {

// The whole of `text` to an existing file (a cgroup.procs, /proc/self/oom_score_adj, a sysctl);
// false with errno set otherwise.
inline bool write_file(const char* path, const char* text) {
  int fd = open(path, O_WRONLY | O_CLOEXEC);
  if (fd < 0) return false;
  ssize_t n = write(fd, text, strlen(text));
  int err = errno;
  close(fd);
  errno = err;
  return n == static_cast<ssize_t>(strlen(text));
}

// The effective, permitted and inheritable sets at once (capset, version 3: 64 bits each).
inline int set_capabilities(uint64_t effective, uint64_t permitted, uint64_t inheritable) {
  __user_cap_header_struct header{_LINUX_CAPABILITY_VERSION_3, 0};
  __user_cap_data_struct data[2];
  for (int i = 0; i < 2; ++i) {
    data[i].effective = static_cast<uint32_t>(effective >> (32 * i));
    data[i].permitted = static_cast<uint32_t>(permitted >> (32 * i));
    data[i].inheritable = static_cast<uint32_t>(inheritable >> (32 * i));
  }
  return static_cast<int>(syscall(SYS_capset, &header, data));
}

// fork(), with a close-on-exec status pipe between the two: in the child (0 returned) *status_fd
// is the write end, for the reason it fails before or at its exec; in the parent (the child's pid)
// the read end, for read_exec_failure. -1 with errno set when the pipe or the fork fails.
inline pid_t fork_with_exec_status(int* status_fd) {
  int p[2];
  if (pipe2(p, O_CLOEXEC) != 0) return -1;
  pid_t child = fork();
  if (child < 0) {
    int err = errno;
    close(p[0]);
    close(p[1]);
    errno = err;
    return -1;
  }
  close(child == 0 ? p[0] : p[1]);
  *status_fd = child == 0 ? p[1] : p[0];
  return child;
}

// What a forked child wrote on its close-on-exec status pipe before it failed, NUL-terminated in
// `buf`; 0 bytes means the exec went through (the pipe closed with it).
inline size_t read_exec_failure(int fd, char* buf, size_t size) {
  size_t got = 0;
  while (got < size - 1) {
    ssize_t r = read(fd, buf + got, size - 1 - got);
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) break;
    got += static_cast<size_t>(r);
  }
  buf[got] = '\0';
  return got;
}

}  // namespace berth::helper_steps
