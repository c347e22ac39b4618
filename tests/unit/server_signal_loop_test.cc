// SignalLoop: SIGHUP reloads (as often as it comes), the first SIGTERM or SIGINT stops and ends the
// loop. Run in a child process with the three blocked from its start, as berthd has them: signals
// sent to a process reach any thread that does not block them, and a test binary may hold others
// (gRPC's) that do not.
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <condition_variable>
#include <mutex>

#include "../../server/signal_loop.h"

namespace berth {
namespace {

// The child's run: 0 when the loop reloaded twice and then stopped on SIGTERM. No deadline of its
// own: ctest's timeout bounds a loop that never answers.
int run_loop_and_signal_it() {
  block_stop_signals();
  std::mutex mu;
  std::condition_variable cv;
  int reloads = 0, stopped_by = 0;
  auto wait = [&](auto done) {
    std::unique_lock lock(mu);
    cv.wait(lock, done);
  };
  {
    SignalLoop loop({.reload =
                         [&] {
                           std::lock_guard lock(mu);
                           ++reloads;
                           cv.notify_all();
                         },
                     .stop =
                         [&](int sig) {
                           std::lock_guard lock(mu);
                           stopped_by = sig;
                           cv.notify_all();
                         }});
    ::kill(::getpid(), SIGHUP);
    wait([&] { return reloads == 1; });
    ::kill(::getpid(), SIGHUP);
    wait([&] { return reloads == 2; });
    ::kill(::getpid(), SIGTERM);
    wait([&] { return stopped_by != 0; });
  }  // joined: the loop ended after the stop
  return reloads == 2 && stopped_by == SIGTERM ? 0 : 1;
}

TEST(SignalLoop, HupReloadsAndTermStops) {
  pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) ::_exit(run_loop_and_signal_it());
  int status = 0;
  ASSERT_EQ(::waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFEXITED(status)) << "the child ended by signal " << (WIFSIGNALED(status) ? WTERMSIG(status) : 0);
  EXPECT_EQ(WEXITSTATUS(status), 0);
}

}  // namespace
}  // namespace berth
