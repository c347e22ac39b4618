// sigwait in one thread (see signal_loop.h).
#include "signal_loop.h"

#include <signal.h>

namespace berth {

namespace {

sigset_t stop_signals() {
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGTERM);
  sigaddset(&set, SIGINT);
  sigaddset(&set, SIGHUP);
  return set;
}

}  // namespace

void block_stop_signals() {
  sigset_t set = stop_signals();
  pthread_sigmask(SIG_BLOCK, &set, nullptr);
  signal(SIGPIPE, SIG_IGN);
}

SignalLoop::SignalLoop(Handlers handlers) : handlers_(std::move(handlers)) {
  thread_ = std::thread([this] {
    sigset_t set = stop_signals();
    int sig = 0;
    while (sigwait(&set, &sig) == 0 && sig == SIGHUP) handlers_.reload();
    handlers_.stop(sig);
  });
}

SignalLoop::~SignalLoop() { thread_.join(); }

}  // namespace berth
