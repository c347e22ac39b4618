// eventually: the e2e tests' wait for a state berthd reaches on its own time (a bound against
// hangs, never a timing assertion).
#pragma once

#include <chrono>
#include <thread>

namespace berth::test {

// Polls `done` every `every` until it holds (true) or `timeout` passed (false, after a last look).
template <class Pred>
bool eventually(Pred done, std::chrono::milliseconds timeout = std::chrono::seconds(20),
                std::chrono::milliseconds every = std::chrono::milliseconds(20)) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (std::chrono::steady_clock::now() < deadline) {
    if (done()) return true;
    std::this_thread::sleep_for(every);
  }
  return done();
}

}  // namespace berth::test
