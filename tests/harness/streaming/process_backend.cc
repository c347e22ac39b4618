// Host processes behind the streaming test server: every process is spawned in its own process
// group (its own session with a tty), reaped by the outcome call, and killed with its group when
// cancelled or when the session lets go of it.
#include "process_backend.h"

#include <fcntl.h>
#include <pty.h>
#include <signal.h>
#include <spawn.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <memory>

#include "berth/netns_connect.h"

extern char** environ;

namespace berth::test {

namespace {

struct Child {
  pid_t pid = -1;
  bool reaped = false;
  int status = 0;
  UniqueFd tty;  // a pty master kept for resizes
  std::mutex mu;

  int wait() {
    std::lock_guard lock(mu);
    if (!reaped) {
      while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
      }
      reaped = true;
    }
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  }
  void kill_group() {
    std::lock_guard lock(mu);
    if (!reaped) ::kill(-pid, SIGKILL);
  }
  ~Child() {
    kill_group();
    wait();
  }
};

UniqueFd cloexec(int fd) {
  if (fd >= 0) ::fcntl(fd, F_SETFD, FD_CLOEXEC);
  return UniqueFd(fd);
}

}  // namespace

Result<StreamIo> ProcessBackend::spawn(const std::vector<std::string>& argv, bool tty, bool in, bool out, bool err,
                                       uint16_t width, uint16_t height) {
  if (argv.empty()) return invalid_argument("empty command");
  UniqueFd child_fds[3], ours[3];
  UniqueFd master;
  if (tty) {
    int m = -1, s = -1;
    winsize size{};
    size.ws_col = width;
    size.ws_row = height;
    if (::openpty(&m, &s, nullptr, nullptr, &size) != 0) return errno_status(errno, "openpty");
    master = cloexec(m);
    UniqueFd slave = cloexec(s);
    for (int i = 0; i < 3; ++i) child_fds[i] = UniqueFd(::fcntl(slave.get(), F_DUPFD_CLOEXEC, 3));
    if (in) ours[0] = UniqueFd(::fcntl(master.get(), F_DUPFD_CLOEXEC, 3));
    if (out) ours[1] = UniqueFd(::fcntl(master.get(), F_DUPFD_CLOEXEC, 3));
  } else {
    bool want[3] = {in, out, err};
    for (int i = 0; i < 3; ++i) {
      if (!want[i]) {
        child_fds[i] = UniqueFd(::open("/dev/null", O_RDWR | O_CLOEXEC));
        continue;
      }
      int p[2];
      if (::pipe2(p, O_CLOEXEC) != 0) return errno_status(errno, "pipe");
      child_fds[i] = UniqueFd(i == 0 ? p[0] : p[1]);
      ours[i] = UniqueFd(i == 0 ? p[1] : p[0]);
    }
  }
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  for (int i = 0; i < 3; ++i) posix_spawn_file_actions_adddup2(&actions, child_fds[i].get(), i);
  posix_spawnattr_t attr;
  posix_spawnattr_init(&attr);
  sigset_t none;
  sigemptyset(&none);
  posix_spawnattr_setsigmask(&attr, &none);
  posix_spawnattr_setflags(&attr, short((tty ? POSIX_SPAWN_SETSID : POSIX_SPAWN_SETPGROUP) | POSIX_SPAWN_SETSIGMASK));
  posix_spawnattr_setpgroup(&attr, 0);
  std::vector<char*> args;
  for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  pid_t pid = -1;
  int rc = ::posix_spawnp(&pid, args[0], &actions, &attr, args.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  posix_spawnattr_destroy(&attr);
  if (rc != 0) return errno_status(rc, "spawn " + argv[0], rc == ENOENT ? Code::not_found : Code::internal);
  {
    std::lock_guard lock(mu_);
    started_.push_back(pid);
  }
  auto child = std::make_shared<Child>();
  child->pid = pid;
  child->tty = std::move(master);
  StreamIo io;
  io.stdin_fd = std::move(ours[0]);
  io.stdout_fd = std::move(ours[1]);
  io.stderr_fd = std::move(ours[2]);
  io.done_fd = UniqueFd(int(::syscall(SYS_pidfd_open, pid, 0)));
  if (!io.done_fd) return errno_status(errno, "pidfd_open");
  if (tty) {
    io.resize = [child](uint16_t w, uint16_t h) {
      winsize ws{};
      ws.ws_col = w;
      ws.ws_row = h;
      ::ioctl(child->tty.get(), TIOCSWINSZ, &ws);
    };
  }
  io.outcome = [child]() -> Result<int> { return child->wait(); };
  io.cancel = [this, child] {
    ++cancelled_;
    child->kill_group();
    child->wait();
  };
  return io;
}

Result<StreamIo> ProcessBackend::exec(const ExecTarget& t) {
  return spawn(t.cmd, t.tty, t.stdin, t.stdout, t.stderr, t.tty_width, t.tty_height);
}

Result<StreamIo> ProcessBackend::attach(const AttachTarget& t) {
  std::vector<std::string> argv;
  {
    std::lock_guard lock(mu_);
    auto it = attach_.find(t.container_id);
    if (it == attach_.end()) return not_found("container " + t.container_id + " not found");
    argv = it->second;
  }
  return spawn(argv, t.tty, t.stdin, t.stdout, t.stderr, t.tty_width, t.tty_height);
}

Result<UniqueFd> ProcessBackend::connect_port(const std::string& sandbox_id, int32_t port) {
  {
    std::unique_lock lock(mu_);
    ++waiting_;
    held_cv_.wait(lock, [&] { return !hold_; });
    --waiting_;
  }
  return connect_in_netns(sandbox_id == "host" ? "" : "/run/netns/" + sandbox_id, port);
}

void ProcessBackend::hold_connects(bool hold) {
  std::lock_guard lock(mu_);
  hold_ = hold;
  held_cv_.notify_all();
}

int ProcessBackend::connects_waiting() {
  std::lock_guard lock(mu_);
  return waiting_;
}

void ProcessBackend::set_attach_command(const std::string& container_id, std::vector<std::string> argv) {
  std::lock_guard lock(mu_);
  attach_[container_id] = std::move(argv);
}

std::vector<pid_t> ProcessBackend::started() {
  std::lock_guard lock(mu_);
  return started_;
}

}  // namespace berth::test
