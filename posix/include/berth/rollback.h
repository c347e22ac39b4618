// Rollback: the undo steps of a multi-step operation (RunPodSandbox, CreateContainer), run in
// reverse when the operation fails (the guard goes out of scope undismissed).
#pragma once

#include <functional>
#include <utility>
#include <vector>

namespace berth {

class Rollback {
 public:
  Rollback() = default;
  Rollback(const Rollback&) = delete;
  Rollback& operator=(const Rollback&) = delete;
  ~Rollback() { run(); }

  void add(std::function<void()> undo) { steps_.push_back(std::move(undo)); }
  // The operation succeeded: nothing is undone.
  void dismiss() { steps_.clear(); }
  // Undoes now (newest first); the guard is then empty.
  void run() {
    for (auto it = steps_.rbegin(); it != steps_.rend(); ++it) (*it)();
    steps_.clear();
  }

 private:
  std::vector<std::function<void()>> steps_;
};

}  // namespace berth
