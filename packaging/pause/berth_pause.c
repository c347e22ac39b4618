/* berth-pause: the process that holds a pod's namespaces. It sleeps until signalled, reaps the
 * zombies that a shared PID namespace hands it, and exits 0 on SIGINT or SIGTERM. Written in C and
 * linked statically so it needs nothing from the rootfs it runs in. */
#include <signal.h>
#include <stdlib.h>
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
  struct sigaction sa = {0};
  sa.sa_handler = stop;
  sigaction(SIGINT, &sa, NULL);
  sigaction(SIGTERM, &sa, NULL);
  sa.sa_handler = reap;
  sa.sa_flags = SA_NOCLDSTOP;
  sigaction(SIGCHLD, &sa, NULL);
  for (;;) pause();
}
