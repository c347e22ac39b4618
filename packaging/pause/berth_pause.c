/* berth-pause: the process that holds a pod's namespaces. It sleeps until signalled, reaps the
 * zombies that a shared PID namespace hands it, and exits 0 on SIGINT or SIGTERM. Written in C and
 * linked statically so it needs nothing from the rootfs it runs in. */
#include <signal.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

static void stop(int sig) {
  (void)sig;
  _exit(0);
}

static void reap(int sig) {
  (void)sig;
  while (waitpid(-1, NULL, WNOHANG) > 0) {
  }
}

int main(int argc, char** argv) {
  (void)argv;
  if (argc > 1) return 2; /* takes no arguments: a typo in a spec should not go unnoticed */
  /* It holds the pod for its whole life: a descriptor that reached it by accident would be held as
   * long (a node's listener among them), so it keeps its stdio alone. */
  if (syscall(SYS_close_range, 3U, ~0U, 0U) != 0) return 3;
  struct sigaction sa = {0};
  sa.sa_handler = stop;
  sigaction(SIGINT, &sa, NULL);
  sigaction(SIGTERM, &sa, NULL);
  sa.sa_handler = reap;
  sa.sa_flags = SA_NOCLDSTOP;
  sigaction(SIGCHLD, &sa, NULL);
  for (;;) pause();
}
