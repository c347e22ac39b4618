// spawn_monitor: berth-monitor started detached (double fork, setsid) so berthd never reaps it and
// a berthd crash leaves it running; the create outcome comes back on a socketpair at fd 3. Between
// fork and exec only async-signal-safe calls run: berthd is multithreaded.
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <spdlog/spdlog.h>
#include <vector>

#include "berth/command.h"
#include "berth/fault_point.h"
#include "berth/inherited_fds.h"
#include "berth/monitor.h"
#include "berth/monitor_protocol.h"
#include "packet_io.h"

extern char** environ;

namespace berth {

namespace proto = berth::monitor_protocol;

namespace {

using Clock = std::chrono::steady_clock;

// Debian 12's <sys/pidfd.h> lacks extern "C", so the syscalls are made directly.
int pidfd_open(pid_t pid) { return static_cast<int>(syscall(SYS_pidfd_open, pid, 0)); }
int pidfd_kill(int pidfd) { return static_cast<int>(syscall(SYS_pidfd_send_signal, pidfd, SIGKILL, nullptr, 0)); }

std::vector<std::string> monitor_argv(const MonitorSpawnOptions& o, const std::string& binary) {
  auto abs = [](const std::string& p) { return std::filesystem::absolute(p).lexically_normal().string(); };
  std::vector<std::string> a{binary,
                             "--id",
                             o.id,
                             "--bundle",
                             abs(o.bundle),
                             "--runtime",
                             o.runtime_path,
                             "--runtime-root",
                             abs(o.runtime_root),
                             "--socket",
                             abs(o.socket_path),
                             "--exit-file",
                             abs(o.exit_file),
                             "--log-path",
                             abs(o.log_path),
                             "--log-line-max",
                             std::to_string(o.log_line_max)};
  if (!o.log_dir.empty()) a.insert(a.end(), {"--log-dir", abs(o.log_dir)});
  if (o.systemd_cgroup) a.push_back("--systemd-cgroup");
  if (o.tty) a.push_back("--tty");
  if (o.open_stdin) a.push_back("--stdin");
  if (o.stdin_once) a.push_back("--stdin-once");
  if (o.start) a.push_back("--start");
  if (!o.restore_from.empty()) a.insert(a.end(), {"--restore-from", abs(o.restore_from)});
  return a;
}

// Runs in the forked child: never returns.
[[noreturn]] void become_monitor(int report, int devnull, int diag, const char* path, char* const* argv,
                                 char* const* envp, unsigned char* spawned, size_t spawned_len, unsigned char* failed,
                                 size_t failed_len) {
  setsid();
  pid_t pid = fork();
  if (pid != 0) {
    // The intermediate child: says who the monitor is (or why there is none) and leaves, so the
    // monitor is re-parented to init (or the nearest subreaper) at once.
    int32_t value = pid > 0 ? pid : errno;
    memcpy((pid > 0 ? spawned : failed) + sizeof(proto::Header), &value, sizeof value);
    send(report, pid > 0 ? spawned : failed, pid > 0 ? spawned_len : failed_len, MSG_NOSIGNAL);
    _exit(pid > 0 ? 0 : 1);
  }
  struct sigaction dfl {};
  dfl.sa_handler = SIG_DFL;
  for (int sig = 1; sig < NSIG; ++sig) sigaction(sig, &dfl, nullptr);
  sigset_t none;
  sigemptyset(&none);
  sigprocmask(SIG_SETMASK, &none, nullptr);
  if (chdir("/") != 0) {
  }
  // Lift every fd we keep above the targets first, so no dup2 below overwrites another's source.
  // The lifted copies are close-on-exec: only what dup2 makes of them below reaches the monitor.
  report = fcntl(report, F_DUPFD_CLOEXEC, 10);
  devnull = fcntl(devnull, F_DUPFD_CLOEXEC, 10);
  diag = diag >= 0 ? fcntl(diag, F_DUPFD_CLOEXEC, 10) : devnull;
  dup2(devnull, 0);
  dup2(devnull, 1);
  dup2(diag, 2);
  dup2(report, proto::kSyncFd);
  int32_t err = close_descriptors_from(proto::kSyncFd + 1);
  if (err == 0) {
    execve(path, argv, envp);
    err = errno;
  }
  memcpy(failed + sizeof(proto::Header), &err, sizeof err);
  send(proto::kSyncFd, failed, failed_len, MSG_NOSIGNAL);
  _exit(127);
}

// Waits until the process behind pidfd is gone (zombie or reaped), SIGKILLing it after `grace`.
void wait_gone(int pidfd, pid_t pgid, std::chrono::milliseconds grace) {
  if (pidfd < 0) return;
  pollfd p{pidfd, POLLIN, 0};
  if (poll(&p, 1, static_cast<int>(grace.count())) > 0) return;
  pidfd_kill(pidfd);
  if (pgid > 0) kill(-pgid, SIGKILL);
  poll(&p, 1, 10000);
}

}  // namespace

Result<MonitorStarted> spawn_monitor(const MonitorSpawnOptions& o) {
  const std::string what = "create " + o.id;
  if (o.id.empty() || o.bundle.empty() || o.runtime_path.empty() || o.runtime_root.empty() || o.socket_path.empty() ||
      o.exit_file.empty() || o.log_path.empty() || o.monitor_path.empty())
    return invalid_argument(what +
                            ": spawn monitor: id, bundle, runtime, runtime root, socket, exit file, log path and "
                            "monitor path are required");
  if (std::filesystem::absolute(o.socket_path).string().size() >= sizeof(sockaddr_un::sun_path))
    return invalid_argument(what + ": monitor socket path " + o.socket_path + " is too long for a unix socket");
  auto binary = find_executable(o.monitor_path);
  if (!binary) return Status(Code::not_found, what + ": berth-monitor not found at " + o.monitor_path);

  std::vector<std::string> args;
  try {
    args = monitor_argv(o, *binary);
  } catch (const std::exception& e) {
    return internal_error(what + ": monitor arguments: " + e.what());
  }
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);

  int sv[2];
  if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) != 0) return errno_status(errno, what + ": socketpair");
  UniqueFd ours(sv[0]), theirs(sv[1]);
  UniqueFd devnull(open("/dev/null", O_RDWR | O_CLOEXEC));
  if (!devnull) return errno_status(errno, what + ": open /dev/null");
  UniqueFd diag;
  if (!o.diagnostics_path.empty()) {
    diag.reset(open(o.diagnostics_path.c_str(), O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0600));
    if (!diag) return errno_status(errno, what + ": open " + o.diagnostics_path);
  }
  // Both packets are encoded now: the child only patches a number in and sends.
  unsigned char spawned[proto::kMaxPacket], failed[proto::kMaxPacket];
  proto::Spawned sp{0};
  size_t spawned_len = proto::encode(proto::Type::spawned, &sp, sizeof sp, nullptr, 0, spawned);
  const std::string exec_text = "start berth-monitor " + *binary;
  proto::CreateFailed cf{0};
  size_t failed_len =
      proto::encode(proto::Type::create_failed, &cf, sizeof cf, exec_text.data(), exec_text.size(), failed);

  pid_t child = fork();
  if (child < 0) return errno_status(errno, what + ": fork");
  if (child == 0)
    become_monitor(theirs.get(), devnull.get(), diag.get(), binary->c_str(), argv.data(), environ, spawned, spawned_len,
                   failed, failed_len);
  theirs.reset();
  fault_point(FaultPoint::start_container_monitor_forked);
  while (waitpid(child, nullptr, 0) < 0 && errno == EINTR) {
  }

  pid_t monitor_pid = 0;
  UniqueFd pidfd;
  // Everything that must go when the create did not happen: the monitor (and what it started,
  // sharing its process group), the socket, and the runtime's container if one was made.
  auto abandon = [&](bool kill_now) {
    if (kill_now) {
      if (pidfd) pidfd_kill(pidfd.get());
      kill(-child, SIGKILL);
    }
    wait_gone(pidfd.get(), child, std::chrono::seconds(10));
    ::unlink(o.socket_path.c_str());
    if (kill_now) {
      Command del;
      del.argv = {o.runtime_path, "--root", o.runtime_root, "delete", "--force", o.id};
      del.timeout = std::chrono::seconds(30);
      auto deleted = run_command(del);
      if (!deleted.ok() || deleted->exit_code != 0)
        spdlog::error("container {}: undo step 'runtime delete' of a failed monitor start failed: {}", o.id,
                      deleted.ok() ? deleted->err : deleted.status().message());
    }
  };

  const auto deadline = Clock::now() + o.timeout;
  for (;;) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
    if (left <= 0) {
      abandon(true);
      return deadline_exceeded(what + ": " + o.runtime_path + " create did not finish in " +
                               std::to_string(o.timeout.count()) + "ms");
    }
    pollfd p{ours.get(), POLLIN, 0};
    int pr = poll(&p, 1, static_cast<int>(left));
    if (pr < 0 && errno != EINTR) {
      Status s = errno_status(errno, what + ": wait for berth-monitor");
      abandon(true);
      return s;
    }
    if (pr <= 0) continue;
    unsigned char buf[proto::kMaxPacket];
    int fds[proto::kMaxFds];
    int nfds = 0;
    ssize_t r = proto::recv_packet(ours.get(), buf, fds, &nfds, MSG_DONTWAIT);
    for (int i = 0; i < nfds; ++i) close(fds[i]);
    if (r == -EAGAIN || r == -EINTR) continue;
    proto::Message m;
    if (r <= 0 || proto::decode(buf, static_cast<size_t>(r), &m) != proto::DecodeError::none) {
      abandon(true);
      return internal_error(what + ": berth-monitor exited before reporting the create" +
                            (o.diagnostics_path.empty() ? std::string() : " (see " + o.diagnostics_path + ")"));
    }
    const char* text = nullptr;
    size_t text_len = 0;
    if (m.type == proto::Type::listening) {
      // Its socket is bound: from here a berthd killed mid-start finds the monitor at recovery,
      // and before here the monitor creates nothing without this go.
      fault_point(FaultPoint::start_container_monitor_listening);
      if (int e = proto::send_packet(ours.get(), proto::Type::go, nullptr, 0, nullptr, 0); e != 0) {
        Status st = errno_status(e, what + ": tell berth-monitor to go");
        abandon(true);
        return st;
      }
    } else if (m.type == proto::Type::spawned) {
      proto::Spawned s;
      if (m.fixed(&s)) {
        monitor_pid = s.monitor_pid;
        pidfd.reset(pidfd_open(monitor_pid));
      }
    } else if (m.type == proto::Type::created) {
      proto::Created c;
      if (!m.fixed(&c)) continue;
      return MonitorStarted{monitor_pid ? monitor_pid : c.monitor_pid, c.container_pid};
    } else if (m.type == proto::Type::create_failed) {
      proto::CreateFailed f;
      if (!m.fixed(&f, &text, &text_len)) continue;
      std::string message(text, text_len);
      abandon(false);
      // The runtime's words are all there is of its own failures: a full disk is told by them.
      bool full = f.sys_errno == ENOSPC || f.sys_errno == EDQUOT ||
                  message.find("no space left on device") != std::string::npos;
      Code code = full ? Code::resource_exhausted : Code::internal;
      if (f.sys_errno) return errno_status(f.sys_errno, what + ": " + message, code);
      return Status(code, what + ": " + message);
    }
  }
}

}  // namespace berth
