// Interactive exec (the streaming server's Exec): `<runtime> exec` in the foreground, so it stays
// until the process ends and exits with its code (its pidfd tells when the session is over). Its
// stdio are pipes, or for a terminal the slave of a pty of ours: the runtime gives the process a
// pty of the container's and copies between the two, and a SIGWINCH makes it copy our size over.
// (A console socket would need `--detach`, which loses the exit code.) The spawned runtime is
// reaped here, never by anyone else.
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/ioctl.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <termios.h>
#include <unistd.h>

#include <cstring>
#include <mutex>
#include <sstream>

#include "berth/command.h"
#include "berth/mutex.h"
#include "berth/process_identity.h"
#include "berth/atomic_file.h"
#include "berth/file_text.h"
#include "berth/container_spec.h"
#include "berth/spawn.h"
#include "container_state.h"

namespace berth {

namespace v1 = runtime::v1;

namespace {

// A terminal pair, both ends close-on-exec from their making (openpty(3) makes them without, so
// a program started meanwhile would get them): the slave through TIOCGPTPEER (Linux 4.13), which
// also never resolves a path in /dev/pts.
Status open_terminal(const winsize& size, UniqueFd* master, UniqueFd* slave) {
  UniqueFd m(::posix_openpt(O_RDWR | O_NOCTTY | O_CLOEXEC));
  if (!m) return errno_status(errno, "posix_openpt");
  if (::grantpt(m.get()) != 0 || ::unlockpt(m.get()) != 0) return errno_status(errno, "unlock the terminal");
  UniqueFd s(::ioctl(m.get(), TIOCGPTPEER, O_RDWR | O_NOCTTY | O_CLOEXEC));
  if (!s) return errno_status(errno, "open the terminal's slave");
  if (::ioctl(m.get(), TIOCSWINSZ, &size) != 0) return errno_status(errno, "set the terminal size");
  *master = std::move(m);
  *slave = std::move(s);
  return ok_status();
}

std::string random_hex() {
  uint64_t v = 0;
  if (::getrandom(&v, sizeof v, 0) != sizeof v) v = static_cast<uint64_t>(::random());
  char buf[17];
  std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(v));
  return buf;
}

// The running runtime: killed and reaped, and its files removed, when the last owner lets go.
struct ExecProcess {
  pid_t pid = -1;
  std::string base;          // <bundle>/exec-<hex>: .json (process), .pid, .log
  std::string container_id;  // the cgroup the exec'd process runs in
  Mutex mu;
  bool reaped BERTH_GUARDED_BY(mu) = false;
  int status BERTH_GUARDED_BY(mu) = 0;

  bool runtime_exited() {
    siginfo_t info{};
    return ::waitid(P_PID, static_cast<id_t>(pid), &info, WEXITED | WNOHANG | WNOWAIT) == 0 && info.si_pid == pid;
  }
  void kill_process() {
    MutexLock lock(mu);
    if (reaped) return;
    // The runtime forwards signals, but a SIGKILL'd runtime cannot: kill the process itself too.
    // The process runs (and may already have talked to the client) a moment before the runtime
    // writes its pid file, so wait for the file while the runtime lives; killing only the runtime
    // would leave the process running in the container.
    pid_t exec_pid = 0;
    for (int i = 0; i < 200; ++i) {
      exec_pid = read_pid_file(base + ".pid");
      if (exec_pid > 0 || runtime_exited()) break;
      ::usleep(10'000);
    }
    // Through a pidfd and only while it is the container's (its pid may be reused once it ended).
    if (exec_pid > 0) kill_container_process(exec_pid, container_id, std::chrono::seconds(10));
    ::kill(pid, SIGKILL);  // the runtime: berthd's own unreaped child, so its pid cannot be reused
  }
  int wait() {
    MutexLock lock(mu);
    if (!reaped) {
      while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
      }
      reaped = true;
    }
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  }
  ~ExecProcess() {
    kill_process();
    wait();
    for (const char* ext : {".json", ".pid", ".log"}) ::unlink((base + ext).c_str());
  }
};

}  // namespace

Result<ExecSession> ContainerManager::exec_session(const std::string& id_or_prefix, const ExecSessionRequest& req) {
  Status err;
  auto c = impl_->find(id_or_prefix, &err);
  if (!c) return err;
  const std::string id = c->id;
  if (c->state() != v1::CONTAINER_RUNNING)
    return failed_precondition("exec in container " + id + ": it is not running");
  auto rt = impl_->runtime_for(c->runtime_handler);
  if (!rt.ok()) return rt.status();
  auto spec = oci::read_spec_file(c->bundle + "/config.json");
  if (!spec.ok()) return spec.status().context("exec in container " + id);
  auto exec_spec = exec_process(*spec, req.cmd, req.tty);
  if (!exec_spec.ok()) return exec_spec.status().context("exec in container " + id);

  auto proc = std::make_shared<ExecProcess>();
  std::string hex = random_hex();
  proc->base = c->bundle + "/exec-" + hex;
  proc->container_id = c->id;
  if (Status s = write_file_atomically(proc->base + ".json", oci::to_json(*exec_spec).dump(), 0600, false); !s.ok())
    return s;
  std::vector<std::string> args{
      "--log",      proc->base + ".log", "--log-format", "json", "exec", "--process", proc->base + ".json",
      "--pid-file", proc->base + ".pid"};
  UniqueFd master, slave;
  if (req.tty) {
    winsize ws{};
    ws.ws_row = req.height ? req.height : 24;
    ws.ws_col = req.width ? req.width : 80;
    if (Status s = open_terminal(ws, &master, &slave); !s.ok()) return s.context("exec in container " + id);
  }
  args.push_back(id);

  // The process's stdio: pipes for what the client wants, /dev/null for the rest (and all of it
  // with a terminal, which carries the stdio itself).
  ExecSession session;
  Pipe in, out, errp;
  for (auto [want, pipe] :
       {std::pair{req.stdin && !req.tty, &in}, {req.stdout && !req.tty, &out}, {req.stderr && !req.tty, &errp}}) {
    if (!want) continue;
    auto p = make_pipe();
    if (!p.ok()) return p.status();
    *pipe = std::move(*p);
  }
  auto spawned =
      spawn_process({.argv = rt->argv(args),
                     .stdio = {req.tty ? slave.get() : in.read.get(), req.tty ? slave.get() : out.write.get(),
                               req.tty ? slave.get() : errp.write.get()}});
  if (!spawned.ok()) {
    MutexLock lock(proc->mu);
    proc->reaped = true;  // nothing to reap
    return spawned.status().context("exec in container " + id);
  }
  proc->pid = *spawned;
  in.read.reset();
  out.write.reset();
  errp.write.reset();
  slave.reset();
  UniqueFd pidfd(static_cast<int>(::syscall(SYS_pidfd_open, proc->pid, 0)));
  if (!pidfd) return errno_status(errno, "exec in container " + id + ": pidfd_open");

  if (req.tty) {
    if (req.stdin) session.stdin_fd = UniqueFd(::fcntl(master.get(), F_DUPFD_CLOEXEC, 0));
    if (req.stdout) session.stdout_fd = UniqueFd(::fcntl(master.get(), F_DUPFD_CLOEXEC, 0));
  } else {
    session.stdin_fd = std::move(in.write);
    session.stdout_fd = std::move(out.read);
    session.stderr_fd = std::move(errp.read);
  }
  session.done_fd = std::move(pidfd);
  auto term = std::make_shared<UniqueFd>(std::move(master));
  pid_t runtime_pid = proc->pid;
  session.resize = [term, runtime_pid](uint16_t width, uint16_t height) {
    if (!*term) return;
    winsize ws{};
    ws.ws_col = width;
    ws.ws_row = height;
    ::ioctl(term->get(), TIOCSWINSZ, &ws);
    ::kill(runtime_pid, SIGWINCH);  // the runtime copies the new size to the container's pty
  };
  std::string binary = rt->binary();
  session.wait = [proc, term, binary, id]() -> Result<int> {
    int code = proc->wait();
    if (std::string msg = runtime_log_error(proc->base + ".log"); !msg.empty())
      return internal_error("exec in container " + id + ": " + binary + ": " + msg);
    return code;
  };
  session.kill = [proc] { proc->kill_process(); };
  return session;
}

}  // namespace berth
