// Starting a program that outlives the call (a runtime's create, an interactive exec): stdio from
// given fds or /dev/null, default signal dispositions and an empty signal mask (berthd blocks
// SIGTERM/SIGINT for its signal thread and ignores SIGPIPE; a child must not inherit that).
// The caller owns the child: it must reap it.
#pragma once

#include <sys/types.h>

#include <optional>
#include <string>
#include <vector>

#include "berth/status.h"

namespace berth {

struct SpawnRequest {
  std::vector<std::string> argv;  // argv[0]: a path, or a name looked up in PATH
  int stdio[3] = {-1, -1, -1};    // fds for the child's 0, 1, 2; -1: /dev/null
  // SIGKILL when the calling thread (berthd) dies: only for a child that thread waits for.
  bool die_with_parent = false;
  // More fds the child takes by number: extra_fds[i] becomes its fd 3 + i (at most 4).
  std::vector<int> extra_fds;
  // The child's whole environment ("NAME=value"); berthd's own when not given.
  std::optional<std::vector<std::string>> env;
};

// The child's pid; an exec failure (ENOENT, EACCES, ETXTBSY ...) is an error with its errno.
Result<pid_t> spawn_process(const SpawnRequest& request);

}  // namespace berth
