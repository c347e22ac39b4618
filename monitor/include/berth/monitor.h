// berthd's side of berth-monitor: starting one (detached) per container, and asking a running one
// to reopen its log, to attach, or reading the exit file it left. Persists nothing itself: the
// monitor owns the CRI log file and the exit file.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <cstdint>
#include <string>

#include "berth/status.h"
#include "berth/unique_fd.h"

namespace berth {

struct MonitorSpawnOptions {
  std::string monitor_path;  // the berth-monitor binary
  std::string id;            // container id
  std::string bundle;        // OCI bundle; the runtime's pid file and runtime.log go here
  std::string runtime_path;  // runc or crun: a path, or a name looked up in PATH
  std::string runtime_root;  // the runtime's --root
  bool systemd_cgroup = false;
  std::string socket_path;  // the monitor's control socket (under 108 bytes)
  std::string exit_file;
  std::string log_path;  // the CRI log file
  // The pod's log directory, when log_path lies below it: the file is then opened with no symlink
  // followed and never outside it (a link planted there cannot redirect the container's output).
  std::string log_dir;
  size_t log_line_max = 16384;  // longer lines are cut into P records
  bool tty = false;
  bool open_stdin = false;
  bool stdin_once = false;
  bool start = false;                        // also start the container (`run --detach`): no `runtime start` after
  std::string restore_from;                  // CRIU images to restore the container from (`restore --detach`)
  std::string diagnostics_path;              // the monitor's own stderr (appended); empty: /dev/null
  std::chrono::milliseconds timeout{60000};  // for the whole create
};

struct MonitorStarted {
  pid_t monitor_pid = 0;
  pid_t container_pid = 0;
};

// Starts berth-monitor detached from the caller (double fork, own session, default signals, only
// stdio and the create-report socket open), which runs `<runtime> create` (or `run --detach`
// with `start`); returns once the container is created (and started). On failure no monitor process and no socket file
// are left; the Status carries the runtime's message ("create <id>: ...").
Result<MonitorStarted> spawn_monitor(const MonitorSpawnOptions& opts);

inline constexpr int kUnknownExitCode = 255;  // the monitor died without recording an exit

struct ExitInfo {
  int exit_code = -1;  // 128 + signal when killed; -1 when the create failed
  int signal = 0;
  int64_t exited_at_ns = 0;  // ns since the epoch
  std::string reason;
};

// not_found when the file does not exist (the container has not exited).
Result<ExitInfo> read_exit_file(const std::string& path);

struct MonitorHello {
  pid_t monitor_pid = 0;
  pid_t container_pid = 0;  // 0 while the monitor has not created the container yet
};

// Asks a monitor who it serves. A monitor still running the runtime's create answers once the
// create is over, so this also waits (up to `timeout`) for a create in progress. NOT_FOUND when
// no monitor listens on the socket.
Result<MonitorHello> monitor_hello(const std::string& socket_path, std::chrono::milliseconds timeout);

// Makes the monitor reopen its log path (after kubelet renamed the file); returns once the new
// file exists.
Status reopen_log(const std::string& socket_path, std::chrono::milliseconds timeout);

struct AttachOptions {
  bool want_stdin = false;
  bool want_stdout = true;
  bool want_stderr = true;  // ignored for a tty: all output is stdout
  std::chrono::milliseconds timeout{10000};
};

// One attach: pipes carrying the container's stdio from now on, and the control connection.
// A client that does not read loses output (its pipe is full) but never slows the container.
// Destroying the session detaches; the container keeps running.
class AttachSession {
 public:
  UniqueFd stdin_fd;   // write end: bytes go to the container's stdin; close it to end this stdin
  UniqueFd stdout_fd;  // read ends: EOF once the container exited and its output was drained
  UniqueFd stderr_fd;  // empty for a tty
  bool tty = false;

  // Readable when the exit message arrived or the monitor is gone.
  int control_fd() const { return conn_.get(); }
  Status resize(unsigned rows, unsigned cols);
  // The container's exit, waiting up to `timeout` for the monitor to report it.
  Result<ExitInfo> wait_exit(std::chrono::milliseconds timeout);

 private:
  friend Result<AttachSession> attach(const std::string&, const AttachOptions&);
  UniqueFd conn_;
  std::string socket_path_;
};

Result<AttachSession> attach(const std::string& socket_path, const AttachOptions& opts);

}  // namespace berth
