// SignalLoop: the one thread of berthd that takes SIGTERM, SIGINT and SIGHUP, with sigwait. The
// three are blocked in every thread from the start (block_stop_signals, before any thread
// exists), so no handler ever runs inside gRPC's threads. Internal to server/.
#pragma once

#include <functional>
#include <thread>

namespace berth {

// Blocks SIGTERM, SIGINT and SIGHUP in the calling thread and so in every thread it starts after;
// ignores SIGPIPE (a client that goes away mid-write is an error on that write, not berthd's end).
void block_stop_signals();

class SignalLoop {
 public:
  struct Handlers {
    std::function<void()> reload;          // each SIGHUP
    std::function<void(int signal)> stop;  // the first SIGTERM or SIGINT; the loop then ends
  };
  // Starts the thread. The signals must be blocked already (block_stop_signals).
  explicit SignalLoop(Handlers handlers);
  SignalLoop(const SignalLoop&) = delete;
  SignalLoop& operator=(const SignalLoop&) = delete;
  // Joins the thread, which ends once a stop signal came.
  ~SignalLoop();

 private:
  Handlers handlers_;
  std::thread thread_;
};

}  // namespace berth
