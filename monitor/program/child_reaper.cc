// SIGCHLD via signalfd plus a waitpid(-1) loop; see child_reaper.h.
#include "child_reaper.h"

#include <errno.h>
#include <signal.h>
#include <sys/signalfd.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

namespace berth::monitor {

int64_t realtime_ns() {
  timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  return static_cast<int64_t>(ts.tv_sec) * 1000000000 + ts.tv_nsec;
}

int ChildReaper::open() {
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGCHLD);
  if (sigprocmask(SIG_BLOCK, &set, nullptr) != 0) return errno;
  sfd_.reset(signalfd(-1, &set, SFD_NONBLOCK | SFD_CLOEXEC));
  return sfd_ ? 0 : errno;
}

void ChildReaper::reap() {
  signalfd_siginfo info[8];
  while (read(sfd_.get(), info, sizeof info) > 0) {
  }
  for (;;) {
    int status = 0;
    pid_t pid = waitpid(-1, &status, WNOHANG);
    if (pid <= 0) break;
    Reaped r{pid, status, realtime_ns()};
    Reaped* slot = nullptr;
    for (auto& w : watched_) {
      if (w.pid == pid && w.at_ns == 0) slot = &w;
    }
    if (!slot) {
      slot = &recent_[next_];
      next_ = (next_ + 1) % kRemembered;
    }
    *slot = r;
  }
}

void ChildReaper::watch(pid_t pid) {
  for (auto& w : watched_) {
    if (w.pid == 0) {
      w = Reaped{pid, 0, 0};
      return;
    }
  }
}

bool ChildReaper::take(pid_t pid, Reaped* out) {
  for (auto& w : watched_) {
    if (w.pid == pid && pid > 0 && w.at_ns != 0) {
      *out = w;
      w = Reaped{};
      return true;
    }
  }
  for (auto& r : recent_) {
    if (r.pid == pid && pid > 0) {
      *out = r;
      r.pid = 0;
      return true;
    }
  }
  return false;
}

}  // namespace berth::monitor
