// CRI log file output; see log_file.h.
#include "log_file.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "../cri_log_line.h"
#include "berth/open_beneath.h"
#include "child_reaper.h"

namespace berth::monitor {
namespace {

int make_parent_dirs(const char* path) {
  char dir[PATH_MAX];
  size_t n = strlen(path);
  if (n >= sizeof dir) return ENAMETOOLONG;
  memcpy(dir, path, n + 1);
  for (char* p = dir + 1; *p; ++p) {
    if (*p != '/') continue;
    *p = 0;
    if (mkdir(dir, 0755) != 0 && errno != EEXIST) return errno;
    *p = '/';
  }
  return 0;
}

int open_log(const char* path, const char* dir, UniqueFd* out) {
  if (dir) {
    int fd = open_beneath(dir, path + strlen(dir) + 1, O_WRONLY | O_APPEND | O_CREAT, 0640);
    if (fd < 0) return -fd;
    *out = UniqueFd(fd);
    return 0;
  }
  int err = make_parent_dirs(path);
  if (err) return err;
  UniqueFd fd(::open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0640));
  if (!fd) return errno;
  *out = std::move(fd);
  return 0;
}

}  // namespace

int LogFile::open(const char* path, const char* log_dir, size_t line_max) {
  path_ = path;
  dir_ = log_dir;
  line_cap_ = line_max + kCriLogHeaderMax;
  line_ = static_cast<char*>(malloc(line_cap_));
  if (!line_) return ENOMEM;
  return open_log(path_, dir_, &fd_);
}

int LogFile::reopen() {
  UniqueFd fresh;
  int err = open_log(path_, dir_, &fresh);
  if (err) return err;
  fd_ = std::move(fresh);
  return 0;
}

void LogFile::write_record(const char* stream, bool partial, const char* data, size_t len) {
  size_t n = format_cri_log_line(realtime_ns(), stream, partial, data, len, line_, line_cap_);
  const char* p = line_;
  const size_t whole = n;
  while (n > 0) {
    ssize_t w = ::write(fd_.get(), p, n);
    if (w < 0 && errno == EINTR) continue;
    // A full disk or a lost file drops the record: the container must never wait on its log.
    if (w <= 0) {
      int err = w < 0 ? errno : ENOSPC;
      // The part that went in is at the file's end (O_APPEND, and only this process writes):
      // cut it off, whatever the file's size (kubelet may have truncated or renamed it).
      struct stat st;
      if (n != whole && fstat(fd_.get(), &st) == 0 && S_ISREG(st.st_mode) &&
          st.st_size >= static_cast<off_t>(whole - n))
        (void)!ftruncate(fd_.get(), st.st_size - static_cast<off_t>(whole - n));
      lost(len, err);
      return;
    }
    p += w;
    n -= static_cast<size_t>(w);
  }
  loss_.writing = 1;
}

void LogFile::lost(size_t len, int err) {
  loss_.records++;
  loss_.bytes += len;
  loss_.sys_errno = err;
  loss_.writing = 0;
}

bool LogFile::take_loss_change(monitor_protocol::LogLoss* out) {
  bool losing = loss_.records != 0 && loss_.writing == 0;
  timespec now{};
  clock_gettime(CLOCK_MONOTONIC, &now);
  const int64_t now_ns = static_cast<int64_t>(now.tv_sec) * 1000000000 + now.tv_nsec;
  if (!losing && reported_losing_) loss_ended_at_ns_ = now_ns;
  // The state is told again once a second while records are lost, and for 3 s after they are not.
  const bool repeat = (losing || (loss_ended_at_ns_ >= 0 && now_ns - loss_ended_at_ns_ < 3000000000)) &&
                      now_ns - reported_at_ns_ >= 1000000000;
  if (losing == reported_losing_ && !repeat) return false;
  reported_losing_before_ = reported_losing_;
  reported_losing_ = losing;
  reported_at_ns_ = now_ns;
  *out = loss_;
  return true;
}

void LogFile::report_again() {
  reported_losing_ = reported_losing_before_;
  reported_at_ns_ = 0;
}

}  // namespace berth::monitor
