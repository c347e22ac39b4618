// Reaping for berth-monitor, which is parent of the runtime and subreaper of the container's
// init and of whatever else gets re-parented to it. Persists nothing.
#pragma once

#include <stdint.h>
#include <sys/types.h>

#include "berth/unique_fd.h"

namespace berth::monitor {

struct Reaped {
  pid_t pid = 0;
  int status = 0;     // as from waitpid
  int64_t at_ns = 0;  // CLOCK_REALTIME when reaped
};

class ChildReaper {
 public:
  // Blocks SIGCHLD and opens a signalfd for it. Returns 0 or an errno.
  int open();
  int fd() const { return sfd_.get(); }
  // A pid whose exit must be kept until take(), however many strays are reaped meanwhile.
  void watch(pid_t pid);
  // Reaps every exited child. The container's init can exit before its pid is known (runc is
  // still writing the pid file), so the last few exits of other pids are remembered too.
  void reap();
  // The exit of pid, once reaped.
  bool take(pid_t pid, Reaped* out);

 private:
  UniqueFd sfd_;
  static constexpr int kWatched = 2;
  Reaped watched_[kWatched];
  static constexpr int kRemembered = 32;
  Reaped recent_[kRemembered];
  int next_ = 0;
};

int64_t realtime_ns();

}  // namespace berth::monitor
