// berth-monitor's command line (berthd's spawn_monitor builds it). Persists nothing.
#pragma once

#include <stddef.h>

namespace berth::monitor {

struct MonitorOptions {
  const char* id = nullptr;
  const char* bundle = nullptr;
  const char* runtime = nullptr;  // runc or crun: a path, or a name looked up in PATH
  const char* runtime_root = nullptr;
  bool systemd_cgroup = false;
  const char* socket_path = nullptr;  // control socket
  const char* exit_file = nullptr;
  const char* log_path = nullptr;  // CRI log file
  const char* log_dir = nullptr;   // when set, log_path is below it and opened beneath it
  size_t log_line_max = 16384;
  bool tty = false;
  bool open_stdin = false;
  bool stdin_once = false;
  bool start = false;                    // `run --detach` (create and start in one runtime call)
  const char* restore_from = nullptr;    // CRIU images: `restore --detach` instead of create or run
  const char* pid_file = nullptr;        // default <bundle>/pid
  const char* runtime_log = nullptr;     // default <bundle>/runtime.log
  const char* console_socket = nullptr;  // default console.sock beside the control socket
  int sync_fd = 3;                       // create report; -1: none
};

// False with a message in err when an option is missing or wrong.
bool parse_monitor_options(int argc, char** argv, MonitorOptions* out, char* err, size_t cap);

}  // namespace berth::monitor
