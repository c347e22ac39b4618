// Runs a program to completion: argv, environment, stdin bytes, a timeout, and a cap on captured
// output. Used wherever berth execs a helper (the OCI runtime's --version, CNI plugins, runc ...).
#pragma once

#include <sys/types.h>

#include <chrono>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "berth/status.h"
#include "berth/unique_fd.h"

namespace berth {

struct CommandResult;

struct Command {
  std::vector<std::string> argv;                // argv[0] is a path, or a name looked up in PATH
  std::optional<std::vector<std::string>> env;  // "K=V" entries; unset: inherit berthd's
  std::string stdin_data;
  std::chrono::milliseconds timeout{0};  // the whole run, output and exit; 0: no limit
  size_t output_limit = 16 << 20;        // per stream; more is read and dropped
  std::optional<std::string> cwd;
  // SIGKILL when berthd dies: for helpers whose outcome berthd waits for (runtime and CNI calls),
  // so none goes on unseen after a crash while recovery works on the same object.
  bool die_with_parent = true;
  // Run at the deadline, before the process group is killed: stops what the command started
  // outside its group (an exec's process inside a container), so the command, still alive, reaps
  // it. The command then has a short grace to exit by itself. It sees what came so far (the
  // report names what to stop).
  std::function<void(const CommandResult& so_far)> on_timeout;
  // Fds the program gets as 3, 4, ... (the caller keeps them open until run_command returns).
  std::vector<int> pass_fds;
  // Run once the program has started, before its input is written or its output read: for a step
  // that needs its pid while it waits (berthd moves a pause's launcher into a systemd scope). A
  // failure kills the program's group and is run_command's result.
  std::function<Status(pid_t)> on_started;
  // A pipe for the program's own report, apart from its output: its write end is the fd after
  // pass_fds; what comes through is CommandResult::report (capped like the output).
  bool capture_report = false;
};

struct CommandResult {
  int exit_code = -1;      // valid when term_signal == 0
  int term_signal = 0;     // the signal that ended it, or 0
  bool timed_out = false;  // killed (SIGKILL to its process group) because the timeout passed
  bool out_truncated = false;
  bool err_truncated = false;
  std::string out;
  std::string err;
  std::string report;  // with Command::capture_report

  // The value of the report's first "<key> <value>" line; empty when there is none.
  std::string report_value(const std::string& key) const;

  bool success() const { return !timed_out && term_signal == 0 && exit_code == 0; }
  // "exit status 2", "killed by signal 9", "timed out after 500ms"
  std::string describe(std::chrono::milliseconds timeout) const;
};

// A failure to start the program (ENOENT, EACCES, ETXTBSY ...) is an error Status whose
// sys_errno() is the exec's errno; once started, every ending is a CommandResult.
Result<CommandResult> run_command(const Command& cmd);

// A pipe, both ends close-on-exec (a program gets one end through Command::pass_fds).
struct Pipe {
  UniqueFd read, write;
};
Result<Pipe> make_pipe();

// The first executable file named `name` in `dirs` (or in PATH when dirs is empty); a name
// with a slash is checked as it is.
std::optional<std::string> find_executable(const std::string& name, const std::vector<std::string>& dirs = {});

}  // namespace berth
