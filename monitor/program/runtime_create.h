// Runs the OCI runtime's `create` for the container and learns its init pid (and, for a tty, the
// pty master runc sends to the console socket). Persists nothing; the runtime writes the pid file
// and its JSON log in the bundle.
#pragma once

#include <sys/types.h>

#include "berth/unique_fd.h"
#include "child_reaper.h"
#include "monitor_options.h"

namespace berth::monitor {

struct RuntimeStdio {
  int in = -1, out = -1, err = -1;  // become the runtime's (and so the container init's) stdio
  int error_text = -1;              // read end where the runtime's own stderr lands
};

struct CreateResult {
  bool ok = false;
  pid_t container_pid = 0;
  UniqueFd console_master;  // tty only
  int sys_errno = 0;
  char message[2048] = {};  // why it failed: the runtime's last logged error, or its stderr
};

void run_runtime_create(const MonitorOptions& o, const RuntimeStdio& stdio, ChildReaper& reaper, CreateResult* out);

}  // namespace berth::monitor
