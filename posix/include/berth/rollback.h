// Rollback: the named undo steps of a multi-step operation (CreateContainer), run newest first
// when the operation fails (explicitly, or when the guard goes out of scope undismissed). Each
// step returns a Status; a failed one is logged with the object and the step, never dropped.
#pragma once

#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "berth/status.h"

namespace berth {

class Rollback {
 public:
  // `object` names what is being made in the log lines ("container 3f2a…").
  explicit Rollback(std::string object) : object_(std::move(object)) {}
  Rollback(const Rollback&) = delete;
  Rollback& operator=(const Rollback&) = delete;
  ~Rollback() { (void)run(); }

  void add(std::string step, std::function<Status()> undo) { steps_.push_back({std::move(step), std::move(undo)}); }
  // The operation succeeded: nothing is undone.
  void dismiss() { steps_.clear(); }
  // Undoes now, newest first, every step even after a failure; the guard is then empty. Returns
  // the first failure, named by its step (each one is also logged).
  Status run();

 private:
  struct Step {
    std::string name;
    std::function<Status()> undo;
  };
  std::string object_;
  std::vector<Step> steps_;
};

}  // namespace berth
