// run_periodic; see periodic_calls.h.
#include "periodic_calls.h"

#include <algorithm>
#include <thread>

namespace berth::bench {

void run_periodic(std::vector<PeriodicTask> tasks, std::chrono::steady_clock::time_point start,
                  std::chrono::steady_clock::time_point stop) {
  using Clock = std::chrono::steady_clock;
  std::vector<Clock::time_point> due;
  for (const auto& t : tasks) due.push_back(start + t.offset);
  while (!tasks.empty()) {
    size_t next = std::min_element(due.begin(), due.end()) - due.begin();
    if (due[next] >= stop) return;
    std::this_thread::sleep_until(due[next]);
    tasks[next].run();
    auto now = Clock::now();
    if (tasks[next].sliding) {
      due[next] = now + tasks[next].period;
      continue;
    }
    do due[next] += tasks[next].period;
    while (due[next] < now);
  }
}

}  // namespace berth::bench
