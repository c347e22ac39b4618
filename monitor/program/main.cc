// berth-monitor: one per container, started detached by berthd (spawn_monitor). Runs the OCI
// runtime's create as the container init's subreaper, then holds the container's stdio, writes
// the CRI log, serves the control socket, and persists the exit in the exit file before telling
// anyone (monitor_protocol.h). It outlives berthd restarts and crashes.
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../exit_record.h"
#include "berth/inherited_fds.h"
#include "berth/monitor_protocol.h"
#include "../packet_io.h"
#include "child_reaper.h"
#include "container_io.h"
#include "control_server.h"
#include "log_file.h"
#include "monitor_options.h"
#include "runtime_create.h"

namespace berth::monitor {
namespace {

namespace proto = berth::monitor_protocol;

struct Monitor {
  MonitorOptions opts;
  ChildReaper reaper;
  LogFile log;
  bool log_created = false;
  ControlServer control;
  ContainerIo io;
  UniqueFd exit_reserve;  // the exit file's temp file, its blocks taken before the container runs
};

// One per process; at namespace scope so no guarded local static pulls C++ runtime code in.
Monitor the_monitor;

bool sync_fd_usable(int fd) { return fd >= 0 && fcntl(fd, F_GETFD) >= 0; }

constexpr size_t kExitTextMax = sizeof ExitRecord::reason * 6 + 256;

void exit_temp_path(const char* path, char* temp, size_t size) { snprintf(temp, size, "%s.tmp-%d", path, getpid()); }

// The exit file's temp file with room for the longest record, made before the container runs: a
// container that exits while its state dir is full (a small /run) still has its exit recorded.
// Returns 0 or an errno.
int reserve_exit_file(const char* path, UniqueFd* out) {
  char temp[4096];
  snprintf(temp, sizeof temp, "%s.reserved", path);
  UniqueFd fd(open(temp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600));
  if (!fd) return errno;
  int err = posix_fallocate(fd.get(), 0, kExitTextMax);
  if (err) {
    unlink(temp);
    return err;
  }
  *out = static_cast<UniqueFd&&>(fd);
  return 0;
}

// Temp file, fsync, rename, fsync of the directory: the same steps as berth_posix's
// write_file_atomically, in plain C because linking the C++ runtime into every monitor would cost
// ~200 KiB of resident text each. Into the reserved temp file when there is one: its blocks are
// overwritten and the rest cut off, which takes no new space.
void write_exit_file(const char* path, const ExitRecord& r, UniqueFd reserved = UniqueFd()) {
  char text[kExitTextMax];
  size_t n = format_exit_record(r, text, sizeof text);
  char temp[4096];
  if (reserved)
    snprintf(temp, sizeof temp, "%s.reserved", path);
  else
    exit_temp_path(path, temp, sizeof temp);
  UniqueFd fd = reserved ? static_cast<UniqueFd&&>(reserved)
                         : UniqueFd(open(temp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600));
  bool ok = fd.valid();
  for (size_t off = 0; ok && off < n;) {
    ssize_t w = pwrite(fd.get(), text + off, n - off, static_cast<off_t>(off));
    if (w < 0 && errno == EINTR) continue;
    ok = w > 0;
    if (ok) off += static_cast<size_t>(w);
  }
  ok = ok && ftruncate(fd.get(), static_cast<off_t>(n)) == 0;
  ok = ok && fsync(fd.get()) == 0;
  fd.reset();
  ok = ok && rename(temp, path) == 0;
  if (!ok) {
    dprintf(2, "berth-monitor: write exit file %s: %s\n", path, strerror(errno));
    unlink(temp);
    return;
  }
  char dir[4096];
  snprintf(dir, sizeof dir, "%s", path);
  char* slash = strrchr(dir, '/');
  if (slash) *(slash == dir ? slash + 1 : slash) = 0;
  UniqueFd dfd(open(slash ? dir : ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (dfd) fsync(dfd.get());
}

// The create did not happen: leave nothing behind but the exit file, say why, and go.
[[noreturn]] void fail_create(Monitor& m, int err, const char* message) {
  m.control.remove_socket();
  if (m.log_created) {
    struct stat st;
    if (stat(m.opts.log_path, &st) == 0 && st.st_size == 0) unlink(m.opts.log_path);
  }
  ExitRecord r;
  r.exit_code = -1;
  r.exited_at_ns = realtime_ns();
  snprintf(r.reason, sizeof r.reason, "create failed: %s", message);
  if (m.opts.exit_file) write_exit_file(m.opts.exit_file, r, static_cast<UniqueFd&&>(m.exit_reserve));
  if (sync_fd_usable(m.opts.sync_fd)) {
    proto::CreateFailed f{err};
    proto::send_packet(m.opts.sync_fd, proto::Type::create_failed, &f, sizeof f, message, strlen(message));
  }
  dprintf(2, "berth-monitor %s: create failed: %s\n", m.opts.id ? m.opts.id : "?", message);
  _exit(1);
}

// Tells berthd the socket is bound and waits for its go. False when berthd is gone (the report
// socket closed) or answered anything else: then nothing may be created, since no berthd will
// ever hear of this container's start and its recovery may already have looked for this monitor.
bool berthd_says_go(int sync_fd) {
  if (proto::send_packet(sync_fd, proto::Type::listening, nullptr, 0, nullptr, 0) != 0) return false;
  unsigned char buf[proto::kMaxPacket];
  int fds[proto::kMaxFds];
  for (;;) {
    int nfds = 0;
    ssize_t r = proto::recv_packet(sync_fd, buf, fds, &nfds);
    for (int i = 0; i < nfds; ++i) close(fds[i]);
    if (r == -EINTR) continue;
    proto::Message msg;
    return r > 0 && proto::decode(buf, static_cast<size_t>(r), &msg) == proto::DecodeError::none &&
           msg.type == proto::Type::go;
  }
}

// berthd went before its go: leave as if never started (no exit file: the container stays
// CREATED and can be started again).
[[noreturn]] void abandon_start(Monitor& m) {
  m.control.remove_socket();
  if (m.log_created) {
    struct stat st;
    if (stat(m.opts.log_path, &st) == 0 && st.st_size == 0) unlink(m.opts.log_path);
  }
  dprintf(2, "berth-monitor %s: berthd went before the start was confirmed; nothing was created\n",
          m.opts.id ? m.opts.id : "?");
  _exit(0);
}

void fail_errno(Monitor& m, int err, const char* what, const char* path) {
  char text[1024];
  snprintf(text, sizeof text, "%s %s: %s", what, path, strerror(err));
  fail_create(m, err, text);
}

ExitRecord exit_record_of(const Reaped& r) {
  ExitRecord e;
  e.exited_at_ns = r.at_ns;
  if (WIFSIGNALED(r.status)) {
    e.signal = WTERMSIG(r.status);
    e.exit_code = 128 + e.signal;
    const char* name = sigabbrev_np(e.signal);
    snprintf(e.reason, sizeof e.reason, "killed by signal %d (SIG%s)", e.signal, name ? name : "?");
  } else {
    e.exit_code = WEXITSTATUS(r.status);
    snprintf(e.reason, sizeof e.reason, "exited with status %d", e.exit_code);
  }
  return e;
}

// Serves the container until its init exits; returns that exit.
Reaped run_until_exit(Monitor& m, pid_t container_pid) {
  constexpr int kMaxPoll = 160;
  pollfd fds[kMaxPoll];
  Reaped exit;
  for (;;) {
    m.reaper.reap();
    if (m.reaper.take(container_pid, &exit)) return exit;
    int n = 0;
    fds[n++] = {m.reaper.fd(), POLLIN, 0};
    fds[n++] = {m.io.output_fd(kStdout), POLLIN, 0};
    fds[n++] = {m.io.output_fd(kStderr), POLLIN, 0};
    fds[n++] = {m.io.stdin_poll_fd(), POLLOUT, 0};
    int fixed = n;
    n += m.control.add_pollfds(fds + n, kMaxPoll - n);
    if (poll(fds, static_cast<nfds_t>(n), -1) < 0) {
      if (errno == EINTR) continue;
      dprintf(2, "berth-monitor: poll: %s\n", strerror(errno));
      sleep(1);
      continue;
    }
    if (fds[1].revents) m.io.read_output(kStdout);
    if (fds[2].revents) m.io.read_output(kStderr);
    if (fds[3].revents) m.io.write_stdin();
    m.control.handle_events(fds + fixed, n - fixed);
  }
}

int run(int argc, char** argv) {
  Monitor& m = the_monitor;
  char err[512];
  if (!parse_monitor_options(argc, argv, &m.opts, err, sizeof err)) {
    dprintf(2, "berth-monitor: %s\n", err);
    fail_create(m, EINVAL, err);
  }
  const MonitorOptions& o = m.opts;
  // The report socket is for the monitor alone: the runtime and the container's init must not
  // inherit it.
  if (sync_fd_usable(o.sync_fd)) fcntl(o.sync_fd, F_SETFD, FD_CLOEXEC);
  signal(SIGPIPE, SIG_IGN);  // a gone attach client or reader is an EPIPE, never a death
  signal(SIGHUP, SIG_IGN);
  if (prctl(PR_SET_CHILD_SUBREAPER, 1) != 0) fail_errno(m, errno, "prctl", "PR_SET_CHILD_SUBREAPER");
  if (int e = m.reaper.open()) fail_errno(m, e, "signalfd", "SIGCHLD");
  m.log_created = access(o.log_path, F_OK) != 0;
  if (int e = m.log.open(o.log_path, o.log_dir, o.log_line_max)) fail_errno(m, e, "open log", o.log_path);
  if (int e = m.control.listen(o.socket_path)) fail_errno(m, e, "listen on", o.socket_path);
  if (int e = m.io.prepare(o.tty, o.open_stdin, o.log_line_max, &m.log, &m.control)) fail_errno(m, e, "stdio", "pipes");

  if (sync_fd_usable(o.sync_fd) && !berthd_says_go(o.sync_fd)) abandon_start(m);
  if (int e = reserve_exit_file(o.exit_file, &m.exit_reserve))
    fail_errno(m, e, "reserve room for the exit file", o.exit_file);

  CreateResult created;
  run_runtime_create(o, m.io.runtime_stdio(), m.reaper, &created);
  if (!created.ok) fail_create(m, created.sys_errno, created.message);
  m.io.start(static_cast<UniqueFd&&>(created.console_master));
  m.control.set_targets(&m.io, &m.log, created.container_pid, o.stdin_once);
  m.reaper.watch(created.container_pid);
  if (sync_fd_usable(o.sync_fd)) {
    proto::Created c{created.container_pid, getpid()};
    proto::send_packet(o.sync_fd, proto::Type::created, &c, sizeof c, nullptr, 0);
    close(o.sync_fd);
  }

  Reaped exit = run_until_exit(m, created.container_pid);
  // Order matters: every byte the container wrote is logged, then the exit is durable, and only
  // then anyone is told, so a reader of the exit file never misses a log line.
  m.io.drain_outputs();
  m.io.end_stdin();
  ExitRecord record = exit_record_of(exit);
  write_exit_file(o.exit_file, record, static_cast<UniqueFd&&>(m.exit_reserve));
  m.control.report_exit(record);
  m.control.remove_socket();
  m.reaper.reap();
  return 0;
}

}  // namespace
}  // namespace berth::monitor

int main(int argc, char** argv) {
  // Stdio must be open: the pipes made later must not land on 0-2.
  for (int fd = 0; fd < 3; ++fd) {
    if (fcntl(fd, F_GETFD) < 0) open("/dev/null", O_RDWR);
  }
  // berthd hands over 0-3 alone; anything else that got here goes no further than this process.
  berth::mark_descriptors_cloexec_from(berth::monitor::proto::kSyncFd + 1);
  return berth::monitor::run(argc, argv);
}
