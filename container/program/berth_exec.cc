// berth-exec: runs one ExecSync command in a running container without an OCI runtime's start-up
// (runc exec costs ~20 ms of Go runtime and re-reading its state per probe). It does what the
// runtime's exec does, in the runtime's order, from a request berthd derived from the container's
// own spec (exec_request.h):
//   fd 0 the request, then /dev/null; fds 1 and 2 the command's output; fd 3 a pidfd of the
//   container's init; fd 4 the report ("pid N" once forked; "error ..." or "unsupported ..."
//   when the command did not start, and then exit status 125).
// The helper joins the container's cgroups, then all its namespaces at once through the pidfd
// (so a recycled pid cannot be joined), and forks: the child is in the container's pid namespace
// and takes the process settings (oom score, rlimits, AppArmor, bounding set, groups and ids,
// capabilities, umask, cwd, no_new_privs, seccomp) before exec; the parent waits and exits with
// the command's status (128+N for a signal, as the runtime does). The helper is non-dumpable from
// its first step, and berthd runs it from a sealed memfd, so a process in the container cannot
// reach the helper's binary through /proc/<pid>/exe.
#include <errno.h>
#include <fcntl.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <grp.h>
#include <unistd.h>

#include "berth/helper_process_steps.h"
#include "berth/inherited_fds.h"
#include "exec_request.h"

namespace {

using berth::exec_wire::ExecRequest;
using namespace berth::helper_steps;

constexpr int kPidfd = 3, kReport = 4;
constexpr size_t kRequestMax = 4 << 20;
constexpr int kFailedStatus = 125;

char request_buf[kRequestMax];
ExecRequest request;
sock_filter filter_buf[BPF_MAXINSNS];

void report(const char* kind, const char* what, int err) {
  char line[1024];
  int n = err ? snprintf(line, sizeof line, "%s %s: %s\n", kind, what, strerror(err))
              : snprintf(line, sizeof line, "%s %s\n", kind, what);
  if (n > 0)
    (void)!write(kReport, line, static_cast<size_t>(n) < sizeof line ? static_cast<size_t>(n) : sizeof line - 1);
}

[[noreturn]] void fail(const char* what, int err) {
  report("error", what, err);
  _exit(kFailedStatus);
}

// In the child, before the exec: a message the parent reports, then exit.
int exec_status_fd = -1;
[[noreturn]] void child_fail(const char* what, int err) {
  char line[1024];
  int n = snprintf(line, sizeof line, "%s: %s", what, strerror(err));
  if (n > 0)
    (void)!write(exec_status_fd, line, static_cast<size_t>(n) < sizeof line ? static_cast<size_t>(n) : sizeof line - 1);
  _exit(kFailedStatus);
}

const char* env_value(const char* name) {
  size_t len = strlen(name);
  for (int i = 0; i < request.envc; ++i)
    if (strncmp(request.envp[i], name, len) == 0 && request.envp[i][len] == '=') return request.envp[i] + len + 1;
  return nullptr;
}

// execve of argv[0], looked up in the command's own PATH when it has no slash (as the runtime
// does: with no PATH, a bare name is not found).
[[noreturn]] void exec_command() {
  char* const* argv = const_cast<char* const*>(request.argv);
  char* const* envp = const_cast<char* const*>(request.envp);
  const char* name = request.argv[0];
  if (strchr(name, '/')) {
    execve(name, argv, envp);
    child_fail(name, errno);
  }
  const char* path = env_value("PATH");
  int err = ENOENT;
  bool denied = false;
  char candidate[4096];
  for (const char* p = path; p && *p;) {
    const char* end = strchr(p, ':');
    size_t dlen = end ? static_cast<size_t>(end - p) : strlen(p);
    if (dlen > 0 && dlen + 1 + strlen(name) < sizeof candidate) {
      memcpy(candidate, p, dlen);
      candidate[dlen] = '/';
      strcpy(candidate + dlen + 1, name);
      execve(candidate, argv, envp);
      if (errno == EACCES)
        denied = true;
      else if (errno != ENOENT && errno != ENOTDIR)
        err = errno;
    }
    if (!end) break;
    p = end + 1;
  }
  char what[512];
  snprintf(what, sizeof what, "exec \"%s\": executable file not found in $PATH", name);
  if (denied && err == ENOENT) err = EACCES;
  child_fail(what, err);
}

void load_seccomp() {
  if (!request.seccomp_bpf) return;
  memcpy(filter_buf, request.seccomp_bpf, request.seccomp_len);
  sock_fprog prog{static_cast<unsigned short>(request.seccomp_len / sizeof(sock_filter)), filter_buf};
  if (syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, static_cast<unsigned>(request.seccomp_flags), &prog) != 0)
    child_fail("load the seccomp filter", errno);
}

// The child: in the container's namespaces and cgroups, still root with every capability.
[[noreturn]] void become_command(int devnull) {
  if (dup2(devnull, 0) < 0) child_fail("stdin", errno);
  close(devnull);
  close(kPidfd);
  fcntl(kReport, F_SETFD, FD_CLOEXEC);
  if (request.has_oom_score_adj) {
    char v[32];
    snprintf(v, sizeof v, "%lld", static_cast<long long>(request.oom_score_adj));
    if (!write_file("/proc/self/oom_score_adj", v)) child_fail("set oom_score_adj", errno);
  }
  for (int i = 0; i < request.nrlimits; ++i) {
    rlimit l{request.rlimits[i].soft, request.rlimits[i].hard};
    if (setrlimit(static_cast<__rlimit_resource>(request.rlimits[i].type), &l) != 0) child_fail("setrlimit", errno);
  }
  if (request.apparmor && *request.apparmor) {
    char v[512];
    snprintf(v, sizeof v, "exec %s", request.apparmor);
    if (!write_file("/proc/self/attr/apparmor/exec", v) && !write_file("/proc/self/attr/exec", v))
      child_fail("set the AppArmor profile", errno);
  }
  // Without no_new_privs a filter needs CAP_SYS_ADMIN, so it goes on before the capabilities go
  // (and then also filters the calls below, as under the runtime).
  if (!request.no_new_privs) load_seccomp();
  for (int cap = 0; cap < 64; ++cap) {
    if ((request.cap_bounding >> cap) & 1) continue;
    if (prctl(PR_CAPBSET_DROP, cap, 0, 0, 0) != 0) {
      if (errno == EINVAL) break;  // past the kernel's last capability
      child_fail("drop from the bounding set", errno);
    }
  }
  if (prctl(PR_SET_KEEPCAPS, 1, 0, 0, 0) != 0) child_fail("keep capabilities", errno);
  if (setgroups(static_cast<size_t>(request.ngroups), request.groups) != 0) child_fail("setgroups", errno);
  if (setresgid(request.gid, request.gid, request.gid) != 0) child_fail("setgid", errno);
  // The cwd is entered as root first: a directory only root can pass through is still reached.
  bool in_cwd = chdir(request.cwd) == 0;
  if (setresuid(request.uid, request.uid, request.uid) != 0) child_fail("setuid", errno);
  if (prctl(PR_SET_KEEPCAPS, 0, 0, 0, 0) != 0) child_fail("clear keep-capabilities", errno);
  if (set_capabilities(request.cap_effective, request.cap_permitted, request.cap_inheritable) != 0)
    child_fail("set capabilities", errno);
  if (prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0) != 0 && errno != EINVAL)
    child_fail("clear ambient capabilities", errno);
  for (int cap = 0; cap < 64; ++cap)
    if (((request.cap_ambient >> cap) & 1) && prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_RAISE, cap, 0, 0) != 0)
      child_fail("raise an ambient capability", errno);
  umask(request.has_umask ? request.umask : 022);
  if (!in_cwd && chdir(request.cwd) != 0) child_fail("chdir to the working directory", errno);
  if (request.no_new_privs) {
    if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) child_fail("set no_new_privs", errno);
    load_seccomp();
  }
  exec_command();
}

// The target's user namespace is joined only when it is not ours (joining one's own is EINVAL).
bool same_user_namespace() {
  char fdinfo[64], line[256], path[64];
  snprintf(fdinfo, sizeof fdinfo, "/proc/self/fdinfo/%d", kPidfd);
  FILE* f = fopen(fdinfo, "re");
  if (!f) return true;
  long pid = 0;
  while (fgets(line, sizeof line, f))
    if (strncmp(line, "Pid:", 4) == 0) pid = strtol(line + 4, nullptr, 10);
  fclose(f);
  if (pid <= 0) return true;
  snprintf(path, sizeof path, "/proc/%ld/ns/user", pid);
  struct stat theirs, ours;
  if (stat(path, &theirs) != 0 || stat("/proc/self/ns/user", &ours) != 0) return true;
  return theirs.st_ino == ours.st_ino && theirs.st_dev == ours.st_dev;
}

}  // namespace

int main() {
  // First: nothing in the container may read this process's memory or reach its binary.
  prctl(PR_SET_DUMPABLE, 0, 0, 0, 0);
  // Run from a memfd, it would be named after the fd's number in ps and top.
  prctl(PR_SET_NAME, "berth-exec", 0, 0, 0);
  // The command is given 0-2 alone: nothing berthd leaked past its own wall reaches the container.
  if (int err = berth::mark_descriptors_cloexec_from(kReport + 1))
    fail("mark inherited descriptors close-on-exec", err);
  size_t len = 0;
  for (;;) {
    ssize_t n = read(0, request_buf + len, kRequestMax - len);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) fail("read the request", errno);
    if (n == 0) break;
    len += static_cast<size_t>(n);
    if (len == kRequestMax) fail("read the request: larger than 4 MiB", 0);
  }
  if (const char* why = berth::exec_wire::parse_exec_request(request_buf, len, &request)) fail(why, 0);
  int devnull = open("/dev/null", O_RDWR | O_CLOEXEC);
  if (devnull < 0) fail("open /dev/null", errno);
  // The cgroups are joined through the host's hierarchies, before the mount namespace changes.
  for (int i = 0; i < request.ncgroups; ++i)
    if (!write_file(request.cgroup_procs[i], "0")) fail(request.cgroup_procs[i], errno);
  int flags = CLONE_NEWNS | CLONE_NEWIPC | CLONE_NEWUTS | CLONE_NEWNET | CLONE_NEWPID | CLONE_NEWCGROUP;
  if (!same_user_namespace()) flags |= CLONE_NEWUSER;
  if (setns(kPidfd, flags) != 0) {
    if (errno == EINVAL || errno == EBADF) {
      report("unsupported", "setns through a pidfd", errno);
      _exit(kFailedStatus);
    }
    fail(errno == ESRCH ? "join the container: its init has exited" : "join the container's namespaces", errno);
  }
  int status_fd = -1;
  pid_t child = fork_with_exec_status(&status_fd);
  if (child < 0) fail("fork", errno);
  if (child == 0) {
    exec_status_fd = status_fd;
    become_command(devnull);
  }
  close(devnull);
  char line[64];
  int n = snprintf(line, sizeof line, "pid %d\n", child);
  (void)!write(kReport, line, static_cast<size_t>(n));
  char why[1100];
  size_t got = read_exec_failure(status_fd, why, sizeof why);
  int status = 0;
  while (waitpid(child, &status, 0) < 0 && errno == EINTR) {
  }
  if (got > 0) fail(why, 0);
  // _exit, not return: nothing is left to flush, and in sanitizer builds LeakSanitizer's exit
  // check would stop the world from a task born in the container's PID namespace, which cannot
  // see this process, and hang.
  _exit(WIFSIGNALED(status) ? 128 + WTERMSIG(status) : WEXITSTATUS(status));
}
