// `<runtime> create` spawned with the container's stdio; the wait also serves the console socket,
// because runc hands over the pty master while create is still running. The spawn is written out
// here rather than calling posix/'s spawn_process: berth-monitor is built without exceptions and
// without the C++ runtime library (std::string, Status), which spawn_process needs.
#include "runtime_create.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../flat_json.h"

extern char** environ;

namespace berth::monitor {
namespace {

UniqueFd listen_console(const char* path, int* err) {
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  if (strlen(path) >= sizeof addr.sun_path) {
    *err = ENAMETOOLONG;
    return UniqueFd();
  }
  strcpy(addr.sun_path, path);
  UniqueFd s(socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0));
  if (!s) {
    *err = errno;
    return s;
  }
  unlink(path);
  mode_t old = umask(0177);
  int rc = bind(s.get(), reinterpret_cast<sockaddr*>(&addr), sizeof addr);
  umask(old);
  if (rc != 0 || listen(s.get(), 4) != 0) {
    *err = errno;
    return UniqueFd();
  }
  return s;
}

// The pty master arrives as SCM_RIGHTS with the pty's name as data.
UniqueFd receive_console(int conn) {
  char name[256];
  iovec iov{name, sizeof name};
  msghdr msg{};
  msg.msg_iov = &iov;
  msg.msg_iovlen = 1;
  alignas(cmsghdr) char control[CMSG_SPACE(sizeof(int))];
  msg.msg_control = control;
  msg.msg_controllen = sizeof control;
  if (recvmsg(conn, &msg, MSG_CMSG_CLOEXEC) <= 0) return UniqueFd();
  cmsghdr* c = CMSG_FIRSTHDR(&msg);
  if (!c || c->cmsg_type != SCM_RIGHTS) return UniqueFd();
  int fd;
  memcpy(&fd, CMSG_DATA(c), sizeof fd);
  return UniqueFd(fd);
}

// The last "error"/"fatal" message the runtime logged after `offset`.
bool last_logged_error(const char* path, off_t offset, char* out, size_t cap) {
  UniqueFd fd(open(path, O_RDONLY | O_CLOEXEC));
  if (!fd) return false;
  struct stat st;
  if (fstat(fd.get(), &st) != 0 || st.st_size <= offset) return false;
  constexpr off_t kTail = 64 * 1024;
  if (st.st_size - offset > kTail) offset = st.st_size - kTail;
  size_t size = static_cast<size_t>(st.st_size - offset);
  char* text = static_cast<char*>(malloc(size));
  if (!text) return false;
  ssize_t n = pread(fd.get(), text, size, offset);
  bool found = false;
  for (ssize_t start = 0; n > 0 && start < n;) {
    const char* nl = static_cast<const char*>(memchr(text + start, '\n', static_cast<size_t>(n - start)));
    size_t len = nl ? static_cast<size_t>(nl - (text + start)) : static_cast<size_t>(n - start);
    JsonField level, msg;
    if (find_json_field(text + start, len, "level", &level) &&
        ((level.len == 5 && memcmp(level.begin, "error", 5) == 0) ||
         (level.len == 5 && memcmp(level.begin, "fatal", 5) == 0)) &&
        find_json_field(text + start, len, "msg", &msg) && msg.is_string) {
      json_string_value(msg, out, cap);
      found = true;
    }
    start += static_cast<ssize_t>(len) + 1;
  }
  free(text);
  return found;
}

void read_error_text(int fd, char* out, size_t cap) {
  size_t n = 0;
  while (fd >= 0 && n + 1 < cap) {
    ssize_t r = read(fd, out + n, cap - 1 - n);
    if (r <= 0) break;
    n += static_cast<size_t>(r);
  }
  while (n > 0 && (out[n - 1] == '\n' || out[n - 1] == ' ')) --n;
  out[n] = 0;
}

pid_t read_pid_file(const char* path) {
  UniqueFd fd(open(path, O_RDONLY | O_CLOEXEC));
  char buf[32] = {};
  if (!fd || read(fd.get(), buf, sizeof buf - 1) <= 0) return 0;
  return static_cast<pid_t>(atoi(buf));
}

}  // namespace

void run_runtime_create(const MonitorOptions& o, const RuntimeStdio& stdio, ChildReaper& reaper, CreateResult* out) {
  UniqueFd console_listener, console_conn;
  if (o.tty) {
    int err = 0;
    console_listener = listen_console(o.console_socket, &err);
    if (!console_listener) {
      out->sys_errno = err;
      snprintf(out->message, sizeof out->message, "console socket %s: %s", o.console_socket, strerror(err));
      return;
    }
  }
  struct stat st;
  off_t log_offset = stat(o.runtime_log, &st) == 0 ? st.st_size : 0;
  unlink(o.pid_file);

  const char* argv[24];
  int n = 0;
  argv[n++] = o.runtime;
  argv[n++] = "--root";
  argv[n++] = o.runtime_root;
  if (o.systemd_cgroup) argv[n++] = "--systemd-cgroup";
  argv[n++] = "--log";
  argv[n++] = o.runtime_log;
  argv[n++] = "--log-format";
  argv[n++] = "json";
  // `run --detach` spares a second runtime process for `start` when the caller starts at once.
  if (o.restore_from) {
    // A container made from a checkpoint: CRIU brings its processes back instead, started.
    argv[n++] = "restore";
    argv[n++] = "--detach";
    argv[n++] = "--image-path";
    argv[n++] = o.restore_from;
    argv[n++] = "--work-path";
    argv[n++] = o.bundle;
  } else if (o.start) {
    argv[n++] = "run";
    argv[n++] = "--detach";
  } else {
    argv[n++] = "create";
  }
  argv[n++] = "--bundle";
  argv[n++] = o.bundle;
  argv[n++] = "--pid-file";
  argv[n++] = o.pid_file;
  if (o.tty) {
    argv[n++] = "--console-socket";
    argv[n++] = o.console_socket;
  }
  argv[n++] = o.id;
  argv[n] = nullptr;

  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_adddup2(&fa, stdio.in, 0);
  posix_spawn_file_actions_adddup2(&fa, stdio.out, 1);
  posix_spawn_file_actions_adddup2(&fa, stdio.err, 2);
  posix_spawn_file_actions_addclosefrom_np(&fa, 3);  // the runtime gets its stdio and nothing else
  posix_spawnattr_t attr;
  posix_spawnattr_init(&attr);
  sigset_t none, all;
  sigemptyset(&none);
  sigfillset(&all);
  posix_spawnattr_setsigmask(&attr, &none);
  posix_spawnattr_setsigdefault(&attr, &all);
  posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF);
  pid_t runtime_pid = 0;
  int rc = posix_spawnp(&runtime_pid, o.runtime, &fa, &attr, const_cast<char* const*>(argv), environ);
  posix_spawn_file_actions_destroy(&fa);
  posix_spawnattr_destroy(&attr);
  if (rc != 0) {
    out->sys_errno = rc;
    snprintf(out->message, sizeof out->message, "exec %s: %s", o.runtime, strerror(rc));
    if (o.tty) unlink(o.console_socket);
    return;
  }
  reaper.watch(runtime_pid);

  Reaped done;
  for (;;) {
    reaper.reap();
    if (reaper.take(runtime_pid, &done)) break;
    pollfd fds[3] = {{reaper.fd(), POLLIN, 0}, {console_listener.get(), POLLIN, 0}, {console_conn.get(), POLLIN, 0}};
    if (poll(fds, 3, -1) < 0 && errno != EINTR) break;
    if (fds[1].revents & POLLIN) console_conn.reset(accept4(console_listener.get(), nullptr, nullptr, SOCK_CLOEXEC));
    if ((fds[2].revents & (POLLIN | POLLHUP)) && !out->console_master)
      out->console_master = receive_console(console_conn.get());
  }
  if (o.tty) {
    // runc may exit before the monitor got around to accepting: the connection waits in the queue.
    if (!console_conn) console_conn.reset(accept4(console_listener.get(), nullptr, nullptr, SOCK_CLOEXEC));
    if (console_conn && !out->console_master) out->console_master = receive_console(console_conn.get());
    console_listener.reset();
    unlink(o.console_socket);
  }

  bool exited_ok = WIFEXITED(done.status) && WEXITSTATUS(done.status) == 0;
  if (exited_ok) {
    out->container_pid = read_pid_file(o.pid_file);
    if (out->container_pid <= 0) {
      snprintf(out->message, sizeof out->message, "%s create succeeded but left no pid in %s", o.runtime, o.pid_file);
      return;
    }
    if (o.tty && !out->console_master) {
      snprintf(out->message, sizeof out->message, "%s create sent no pty master to %s", o.runtime, o.console_socket);
      return;
    }
    out->ok = true;
    return;
  }
  if (last_logged_error(o.runtime_log, log_offset, out->message, sizeof out->message)) return;
  read_error_text(stdio.error_text, out->message, sizeof out->message);
  if (out->message[0]) return;
  if (WIFSIGNALED(done.status))
    snprintf(out->message, sizeof out->message, "%s create killed by signal %d", o.runtime, WTERMSIG(done.status));
  else
    snprintf(out->message, sizeof out->message, "%s create exited with status %d", o.runtime, WEXITSTATUS(done.status));
}

}  // namespace berth::monitor
