// run_command: spawn_child (which reports exec errors such as ETXTBSY as an errno, which the CNI
// retry depends on) plus a poll loop that feeds stdin, drains both output pipes and waits
// for the exit, all under one deadline: at it the child's whole process group is killed.
#include "berth/command.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "berth/unique_fd.h"
#include "child_spawn.h"

extern char** environ;

namespace berth {
namespace {

using Clock = std::chrono::steady_clock;

// A child that exits without reading its stdin must not kill the caller with SIGPIPE, whether or
// not the process ignores it: SIGPIPE is blocked on this thread for the write, and a pending one
// is taken before it is unblocked.
ssize_t write_no_sigpipe(int fd, const void* data, size_t len) {
  sigset_t pipe_set, old;
  sigemptyset(&pipe_set);
  sigaddset(&pipe_set, SIGPIPE);
  pthread_sigmask(SIG_BLOCK, &pipe_set, &old);
  ssize_t w = write(fd, data, len);
  int err = errno;
  if (w < 0 && err == EPIPE && !sigismember(&old, SIGPIPE)) {
    timespec zero{};
    while (sigtimedwait(&pipe_set, nullptr, &zero) < 0 && errno == EINTR) {
    }
  }
  pthread_sigmask(SIG_SETMASK, &old, nullptr);
  errno = err;
  return w;
}

std::vector<char*> c_strings(const std::vector<std::string>& v) {
  std::vector<char*> out;
  out.reserve(v.size() + 1);
  for (const auto& s : v) out.push_back(const_cast<char*>(s.c_str()));
  out.push_back(nullptr);
  return out;
}

// A pollable handle on the child's exit, so waiting for it shares the output loop's deadline.
// Invalid on kernels without pidfd_open (< 5.3); the loop then looks every 10ms instead.
UniqueFd open_pidfd(pid_t pid) {
#ifdef SYS_pidfd_open
  return UniqueFd(static_cast<int>(syscall(SYS_pidfd_open, pid, 0)));
#else
  (void)pid;
  return UniqueFd();
#endif
}

void append_capped(std::string& buf, const char* data, size_t n, size_t limit, bool& truncated) {
  size_t room = buf.size() < limit ? limit - buf.size() : 0;
  if (n > room) truncated = true;
  buf.append(data, std::min(n, room));
}

}  // namespace

Result<Pipe> make_pipe() {
  int fds[2];
  if (pipe2(fds, O_CLOEXEC) != 0) return errno_status(errno, "pipe");
  return Pipe{UniqueFd(fds[0]), UniqueFd(fds[1])};
}

std::string CommandResult::report_value(const std::string& key) const {
  for (size_t at = 0; at < report.size();) {
    size_t end = report.find('\n', at);
    if (end == std::string::npos) end = report.size();
    if (report.compare(at, key.size() + 1, key + " ") == 0)
      return report.substr(at + key.size() + 1, end - at - key.size() - 1);
    at = end + 1;
  }
  return "";
}

std::string CommandResult::describe(std::chrono::milliseconds timeout) const {
  if (timed_out) return "timed out after " + std::to_string(timeout.count()) + "ms";
  if (term_signal != 0) return "killed by signal " + std::to_string(term_signal);
  return "exit status " + std::to_string(exit_code);
}

Result<CommandResult> run_command(const Command& cmd) {
  if (cmd.argv.empty()) return invalid_argument("run command: empty argv");
  auto in = make_pipe();
  auto out = make_pipe();
  auto err = make_pipe();
  if (!in.ok()) return in.status();
  if (!out.ok()) return out.status();
  if (!err.ok()) return err.status();
  if (cmd.pass_fds.size() + cmd.capture_report > ChildSpec::kMaxExtra)
    return invalid_argument("run command: too many fds to pass");
  Pipe report;
  if (cmd.capture_report) {
    auto p = make_pipe();
    if (!p.ok()) return p.status();
    report = std::move(*p);
  }

  // berthd blocks SIGTERM/SIGINT for its signal thread and ignores SIGPIPE; the child starts with
  // neither (spawn_child resets them), in its own process group so a timeout can kill everything
  // it started.
  auto argv = c_strings(cmd.argv);
  std::vector<char*> envp;
  if (cmd.env) envp = c_strings(*cmd.env);
  ChildSpec spec;
  spec.path = argv[0];
  spec.argv = argv.data();
  spec.envp = cmd.env ? envp.data() : environ;
  spec.stdio[0] = in->read.get();
  spec.stdio[1] = out->write.get();
  spec.stdio[2] = err->write.get();
  for (int fd : cmd.pass_fds) spec.extra[spec.n_extra++] = fd;
  if (report.write) spec.extra[spec.n_extra++] = report.write.get();
  spec.cwd = cmd.cwd ? cmd.cwd->c_str() : nullptr;
  spec.new_process_group = true;
  spec.die_with_parent = cmd.die_with_parent;
  auto spawned = spawn_child(spec, cmd.argv[0].c_str());
  if (!spawned.ok()) return spawned.status();
  pid_t pid = *spawned;
  in->read.reset();
  out->write.reset();
  err->write.reset();
  report.write.reset();
  fcntl(in->write.get(), F_SETFL, O_NONBLOCK);
  if (cmd.stdin_data.empty()) in->write.reset();
  if (cmd.on_started) {
    if (Status s = cmd.on_started(pid); !s.ok()) {
      kill(-pid, SIGKILL);
      kill(pid, SIGKILL);
      while (waitpid(pid, nullptr, 0) < 0 && errno == EINTR) {
      }
      return s;
    }
  }

  CommandResult res;
  size_t stdin_off = 0;
  auto deadline = Clock::now() + cmd.timeout;
  bool timeout_handled = false;
  char buf[65536];
  // The deadline covers the exit too: a child that closes its output and then hangs must not
  // block us in waitpid, so the exit is polled for alongside the pipes.
  UniqueFd pidfd = open_pidfd(pid);
  bool exited = false;
  int status = 0;
  auto reap = [&]() -> Status {
    for (;;) {
      pid_t w = waitpid(pid, &status, WNOHANG);
      if (w == pid) exited = true;
      if (w >= 0) return ok_status();
      if (errno != EINTR) return errno_status(errno, "wait for " + cmd.argv[0]);
    }
  };
  while (out->read || err->read || report.read || !exited) {
    pollfd fds[5];
    int n = 0;
    int out_i = -1, err_i = -1, rep_i = -1, in_i = -1, pid_i = -1;
    if (out->read) {
      out_i = n;
      fds[n++] = {out->read.get(), POLLIN, 0};
    }
    if (err->read) {
      err_i = n;
      fds[n++] = {err->read.get(), POLLIN, 0};
    }
    if (report.read) {
      rep_i = n;
      fds[n++] = {report.read.get(), POLLIN, 0};
    }
    if (in->write) {
      in_i = n;
      fds[n++] = {in->write.get(), POLLOUT, 0};
    }
    if (!exited && pidfd) {
      pid_i = n;
      fds[n++] = {pidfd.get(), POLLIN, 0};
    }
    int wait_ms = -1;
    if (cmd.timeout.count() > 0) {
      auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
      if (left.count() <= 0 && cmd.on_timeout && !timeout_handled) {
        timeout_handled = true;
        res.timed_out = true;
        cmd.on_timeout(res);
        deadline = Clock::now() + std::chrono::seconds(2);
        continue;
      }
      if (left.count() <= 0) {
        res.timed_out = true;
        kill(-pid, SIGKILL);
        if (!exited) kill(pid, SIGKILL);
        break;
      }
      wait_ms = static_cast<int>(left.count());
    }
    if (!exited && !pidfd) wait_ms = wait_ms < 0 ? 10 : std::min(wait_ms, 10);
    int pr = poll(fds, n, wait_ms);
    if (pr < 0) {
      if (errno == EINTR) continue;
      int e = errno;
      kill(-pid, SIGKILL);
      if (!exited) waitpid(pid, nullptr, 0);
      return errno_status(e, "poll output of " + cmd.argv[0]);
    }
    auto drain = [&](int idx, UniqueFd& fd, std::string& sink, bool& trunc) {
      if (idx < 0 || !(fds[idx].revents & (POLLIN | POLLHUP | POLLERR))) return;
      ssize_t r = read(fd.get(), buf, sizeof buf);
      if (r > 0)
        append_capped(sink, buf, static_cast<size_t>(r), cmd.output_limit, trunc);
      else if (r == 0 || (errno != EINTR && errno != EAGAIN))
        fd.reset();
    };
    drain(out_i, out->read, res.out, res.out_truncated);
    drain(err_i, err->read, res.err, res.err_truncated);
    bool report_truncated = false;
    drain(rep_i, report.read, res.report, report_truncated);
    if (in_i >= 0 && (fds[in_i].revents & (POLLOUT | POLLERR | POLLHUP))) {
      ssize_t w =
          write_no_sigpipe(in->write.get(), cmd.stdin_data.data() + stdin_off, cmd.stdin_data.size() - stdin_off);
      if (w > 0) stdin_off += static_cast<size_t>(w);
      if ((w < 0 && errno != EAGAIN && errno != EINTR) || stdin_off == cmd.stdin_data.size()) in->write.reset();
    }
    if (!exited && (pid_i < 0 || fds[pid_i].revents != 0)) {
      if (Status s = reap(); !s.ok()) {
        kill(-pid, SIGKILL);
        return s;
      }
    }
  }
  in->write.reset();
  // Only a child killed at the deadline is still unreaped here; SIGKILL makes this wait short.
  while (!exited && waitpid(pid, &status, 0) < 0) {
    if (errno != EINTR) return errno_status(errno, "wait for " + cmd.argv[0]);
  }
  // Children of a timed-out command may still hold the group; make sure none outlives it.
  if (res.timed_out) kill(-pid, SIGKILL);
  if (WIFEXITED(status)) res.exit_code = WEXITSTATUS(status);
  if (WIFSIGNALED(status)) res.term_signal = WTERMSIG(status);
  return res;
}

std::optional<std::string> find_executable(const std::string& name, const std::vector<std::string>& dirs) {
  auto runnable = [](const std::string& p) {
    struct stat st;
    return stat(p.c_str(), &st) == 0 && S_ISREG(st.st_mode) && access(p.c_str(), X_OK) == 0;
  };
  if (name.empty()) return std::nullopt;
  if (name.find('/') != std::string::npos) return runnable(name) ? std::optional<std::string>(name) : std::nullopt;
  std::vector<std::string> search = dirs;
  if (search.empty()) {
    const char* path = getenv("PATH");
    std::string p = path ? path : "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin";
    size_t start = 0;
    while (start <= p.size()) {
      size_t end = p.find(':', start);
      if (end == std::string::npos) end = p.size();
      if (end > start) search.push_back(p.substr(start, end - start));
      start = end + 1;
    }
  }
  for (const auto& d : search) {
    std::string candidate = d + "/" + name;
    if (runnable(candidate)) return candidate;
  }
  return std::nullopt;
}

}  // namespace berth
