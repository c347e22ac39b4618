// spawn_child: clone(CLONE_VM | CLONE_VFORK) on a small stack of its own, as glibc's posix_spawn
// does, so the parent's pages are never copied and the parent resumes only once the child exec'd
// or failed. The child runs on the parent's memory: it only makes system calls, and it reports an
// exec failure through a shared int. Signals stay blocked in the parent thread around the clone,
// so no handler of berthd's runs in the child before its dispositions are reset. The child keeps
// only the descriptors it is given.
#include "child_spawn.h"

#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>

#include "berth/inherited_fds.h"

namespace berth {
namespace {

struct ChildArgs {
  const ChildSpec* spec;
  pid_t parent;
  sigset_t parent_mask;
  volatile int exec_errno;
};

// N of a program named "/proc/self/fd/N" (berth-exec runs from a sealed memfd), else -1.
int program_fd(const char* path) {
  static const char kPrefix[] = "/proc/self/fd/";
  if (strncmp(path, kPrefix, sizeof kPrefix - 1) != 0) return -1;
  int fd = 0;
  const char* p = path + sizeof kPrefix - 1;
  if (*p == 0) return -1;
  for (; *p; ++p) {
    if (*p < '0' || *p > '9' || fd > 100000000) return -1;
    fd = fd * 10 + (*p - '0');
  }
  return fd;
}

// Runs in the child on its own stack: only async-signal-safe calls.
int child_main(void* raw) {
  auto* a = static_cast<ChildArgs*>(raw);
  const ChildSpec& s = *a->spec;
  auto fail = [a](int err) {
    a->exec_errno = err ? err : EINVAL;
    _exit(127);
  };
  if (s.die_with_parent) {
    if (prctl(PR_SET_PDEATHSIG, SIGKILL) != 0) fail(errno);
    if (getppid() != a->parent) fail(ESRCH);  // the parent died before the prctl
  }
  // Back to default dispositions: berthd ignores SIGPIPE, and exec keeps ignored signals ignored.
  struct sigaction dfl;
  memset(&dfl, 0, sizeof dfl);
  dfl.sa_handler = SIG_DFL;
  for (int sig = 1; sig < NSIG; ++sig) {
    if (sig == SIGKILL || sig == SIGSTOP) continue;
    sigaction(sig, &dfl, nullptr);
  }
  if (s.new_process_group && setpgid(0, 0) != 0) fail(errno);
  // Lift the given fds above every target first, so no dup2 below overwrites another's source.
  constexpr int kTargets = 3 + ChildSpec::kMaxExtra;
  const int n = 3 + s.n_extra;
  int lifted[kTargets];
  for (int t = 0; t < n; ++t) {
    lifted[t] = -1;
    int src = t < 3 ? s.stdio[t] : s.extra[t - 3];
    if (src < 0) continue;
    lifted[t] = fcntl(src, F_DUPFD_CLOEXEC, n);
    if (lifted[t] < 0) fail(errno);
  }
  for (int t = 0; t < n; ++t) {
    if (lifted[t] >= 0 && dup2(lifted[t], t) < 0) fail(errno);
    if (lifted[t] < 0 && t >= 3) close(t);  // an extra not given is no descriptor of berthd's
  }
  // The second wall behind close-on-exec: whatever a library of berthd's opened without it (or
  // berthd inherited) stays behind; the child gets 0..n-1 and nothing else (but, until the exec,
  // the descriptor of a program exec'd as /proc/self/fd/N, itself close-on-exec).
  if (int err = close_descriptors_from(n, program_fd(s.path))) fail(err);
  if (s.cwd && chdir(s.cwd) != 0) fail(errno);
  sigset_t none;
  sigemptyset(&none);
  sigprocmask(SIG_SETMASK, &none, nullptr);
  if (strchr(s.path, '/'))
    execve(s.path, s.argv, s.envp);
  else
    execvpe(s.path, s.argv, s.envp);
  fail(errno);
  return 127;
}

}  // namespace

Result<pid_t> spawn_child(const ChildSpec& spec, const char* what) {
  constexpr size_t kStack = 64 * 1024;
  void* stack = mmap(nullptr, kStack, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_STACK, -1, 0);
  if (stack == MAP_FAILED) return errno_status(errno, std::string("exec ") + what + ": stack");
  ChildArgs args{&spec, getpid(), {}, 0};
  sigset_t all;
  sigfillset(&all);
  pthread_sigmask(SIG_BLOCK, &all, &args.parent_mask);
  pid_t pid = clone(child_main, static_cast<char*>(stack) + kStack, CLONE_VM | CLONE_VFORK | SIGCHLD, &args);
  int clone_errno = errno;
  pthread_sigmask(SIG_SETMASK, &args.parent_mask, nullptr);
  munmap(stack, kStack);
  if (pid < 0) return errno_status(clone_errno, std::string("exec ") + what + ": clone");
  if (int err = args.exec_errno) {
    while (waitpid(pid, nullptr, 0) < 0 && errno == EINTR) {
    }
    return errno_status(err, std::string("exec ") + what, err == ENOENT ? Code::not_found : Code::internal);
  }
  return pid;
}

}  // namespace berth
