/* syscall-probe: makes one chosen syscall per argument, harmlessly, and prints "<probe>: OK" or
 * "<probe>: <errno name>", so a test can tell a seccomp refusal (EPERM, ENOSYS) from the kernel's
 * own answer; "ids" prints the process's real and effective uid and "hold" keeps it alive (for
 * the set-user-ID copy in the image). Built static into a test image: busybox has no applet for most of these calls. */
#define _GNU_SOURCE
#include <errno.h>
#include <linux/sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/timex.h>
#include <sys/wait.h>
#include <unistd.h>

/* Numbers shared by every architecture since Linux 5.1 (glibc 2.36 headers may lack them). */
#ifndef SYS_io_uring_setup
#define SYS_io_uring_setup 425
#endif
#ifndef SYS_clone3
#define SYS_clone3 435
#endif
#define NR_STATMOUNT 457

/* The result of a raw call: >= 0 is success. */
static long report(const char* probe, long rc) {
  if (rc >= 0) printf("%s: OK\n", probe);
  else printf("%s: %s\n", probe, strerrorname_np(errno) ? strerrorname_np(errno) : "E?");
  return rc;
}

/* A child made with `flags` exits at once; the parent reaps it. */
static long clone_and_reap(unsigned long flags) {
  long pid = syscall(SYS_clone, flags | SIGCHLD, 0, 0, 0, 0);
  if (pid == 0) _exit(0);
  if (pid > 0) waitpid((pid_t)pid, NULL, 0);
  return pid;
}

static long clone3_and_reap(void) {
  struct clone_args args;
  memset(&args, 0, sizeof args);
  args.exit_signal = SIGCHLD;
  long pid = syscall(SYS_clone3, &args, sizeof args);
  if (pid == 0) _exit(0);
  if (pid > 0) waitpid((pid_t)pid, NULL, 0);
  return pid;
}

/* A child asks to be traced by this process, the way strace and gdb start a program. */
static long trace_child(void) {
  int fds[2];
  if (pipe(fds) != 0) return -1;
  pid_t pid = fork();
  if (pid == 0) {
    int e = ptrace(PTRACE_TRACEME, 0, 0, 0) == 0 ? 0 : errno;
    (void)!write(fds[1], &e, sizeof e);
    _exit(0);
  }
  int e = 0;
  (void)!read(fds[0], &e, sizeof e);
  waitpid(pid, NULL, 0);
  if (e != 0) {
    errno = e;
    return -1;
  }
  return 0;
}

static int probe(const char* name) {
  long rc;
  if (!strcmp(name, "io_uring_setup")) {
    uint32_t params[30]; /* struct io_uring_params is 120 bytes */
    memset(params, 0, sizeof params);
    rc = report(name, syscall(SYS_io_uring_setup, 1, params));
    if (rc >= 0) close((int)rc);
  } else if (!strcmp(name, "keyctl")) {
    rc = report(name, syscall(SYS_keyctl, 0 /* KEYCTL_GET_KEYRING_ID */, -3 /* session */, 0));
  } else if (!strcmp(name, "statmount")) {
    /* Newer than the profile's names: the kernel would say EFAULT for the null buffer. */
    rc = report(name, syscall(NR_STATMOUNT, NULL, NULL, 0, 0));
  } else if (!strcmp(name, "clone")) {
    rc = report(name, clone_and_reap(0));
  } else if (!strcmp(name, "clone-newuser")) {
    rc = report(name, clone_and_reap(CLONE_NEWUSER));
  } else if (!strcmp(name, "clone-newns")) {
    rc = report(name, clone_and_reap(CLONE_NEWNS));
  } else if (!strcmp(name, "clone3")) {
    rc = report(name, clone3_and_reap());
  } else if (!strcmp(name, "personality-query")) {
    rc = report(name, syscall(SYS_personality, 0xffffffffUL));
  } else if (!strcmp(name, "personality-linux")) {
    rc = report(name, syscall(SYS_personality, 0x0UL));
  } else if (!strcmp(name, "personality-no-randomize")) {
    rc = report(name, syscall(SYS_personality, 0x0040000UL /* ADDR_NO_RANDOMIZE */));
  } else if (!strcmp(name, "socket-inet")) {
    rc = report(name, socket(AF_INET, SOCK_STREAM, 0));
    if (rc >= 0) close((int)rc);
  } else if (!strcmp(name, "socket-unix")) {
    rc = report(name, socket(AF_UNIX, SOCK_DGRAM, 0));
    if (rc >= 0) close((int)rc);
  } else if (!strcmp(name, "socket-vsock")) {
    rc = report(name, socket(40 /* AF_VSOCK */, SOCK_STREAM, 0));
    if (rc >= 0) close((int)rc);
  } else if (!strcmp(name, "ptrace-child")) {
    rc = report(name, trace_child());
  } else if (!strcmp(name, "adjtimex-read")) {
    struct timex tx;
    memset(&tx, 0, sizeof tx);
    rc = report(name, syscall(SYS_adjtimex, &tx));
  } else if (!strcmp(name, "ntp_gettime")) {
    /* glibc reads the kernel clock state through clock_adjtime. */
    struct ntptimeval tv;
    rc = report(name, ntp_gettime(&tv));
  } else if (!strcmp(name, "kcmp")) {
    pid_t self = getpid();
    rc = report(name, syscall(SYS_kcmp, self, self, 0 /* KCMP_FILE */, 0, 0));
  } else if (!strcmp(name, "chroot")) {
    rc = report(name, chroot("/"));
  } else if (!strcmp(name, "ids")) {
    printf("ids: uid=%u euid=%u\n", (unsigned)getuid(), (unsigned)geteuid());
    rc = 0;
  } else if (!strcmp(name, "hold")) {
    /* Stays, with the ids it has, for the node to look at from /proc. */
    printf("hold: OK\n");
    for (;;) pause();
  } else {
    printf("%s: unknown probe\n", name);
    return 2;
  }
  return rc < 0;
}

int main(int argc, char** argv) {
  int failed = 0;
  setvbuf(stdout, NULL, _IOLBF, 0);
  for (int i = 1; i < argc; ++i) failed |= probe(argv[i]);
  return failed;
}
