// Kubelet's loops as timed tasks: each task runs every `period`, first at `start + offset`, until
// `stop`. One thread per task list, like a goroutine per loop; a task that falls behind skips the
// ticks it missed (as a Go ticker does) instead of bursting to catch up. A sliding task waits its
// period from the end of its last run (wait.Until, as kubelet's PLEG relist does), so it drifts
// against the ticker-driven ones instead of meeting the same one every time.
#pragma once

#include <chrono>
#include <functional>
#include <vector>

namespace berth::bench {

struct PeriodicTask {
  std::chrono::milliseconds period, offset;
  std::function<void()> run;
  bool sliding = false;
};

void run_periodic(std::vector<PeriodicTask> tasks, std::chrono::steady_clock::time_point start,
                  std::chrono::steady_clock::time_point stop);

}  // namespace berth::bench
