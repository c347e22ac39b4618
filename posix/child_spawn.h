// spawn_child: the one place berth starts a program, shared by run_command and spawn_process.
// It is posix_spawn's job, written out because posix_spawn cannot ask the kernel to kill the
// child when berthd dies (PR_SET_PDEATHSIG): a runtime or CNI plugin berthd was waiting for must
// not carry on unseen after berthd was killed, racing the recovery of the object it was working on.
#pragma once

#include <sys/types.h>

#include "berth/status.h"

namespace berth {

struct ChildSpec {
  const char* path = nullptr;  // the program; searched in PATH when it has no '/'
  char* const* argv = nullptr;
  char* const* envp = nullptr;
  int stdio[3] = {-1, -1, -1};  // fds for 0, 1, 2 (already open; -1: leave as inherited)
  // More fds for a helper that takes them by number: extra[i] becomes fd 3 + i.
  static constexpr int kMaxExtra = 4;
  int extra[kMaxExtra] = {-1, -1, -1, -1};
  int n_extra = 0;
  const char* cwd = nullptr;       // null: unchanged
  bool new_process_group = false;  // its own group, so a timeout can kill what it started
  bool die_with_parent = false;    // SIGKILL when the calling thread (berthd) dies
};

// The child's pid once it exec'd; an exec failure (ENOENT, EACCES, ETXTBSY ...) is an error
// carrying that errno, with the child already reaped.
Result<pid_t> spawn_child(const ChildSpec& spec, const char* what);

}  // namespace berth
