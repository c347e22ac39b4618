// Running a Rollback's steps and reporting the ones that fail (berthd's log is where an operator
// looks for what a failed operation left behind for the next start's sweep).
#include "berth/rollback.h"

#include <spdlog/spdlog.h>

namespace berth {

Status Rollback::run() {
  Status first;
  for (auto it = steps_.rbegin(); it != steps_.rend(); ++it) {
    Status s = it->undo();
    if (s.ok()) continue;
    spdlog::error("{}: undo step '{}' failed: {}", object_, it->name, s.message());
    if (first.ok()) first = s.context("undo step '" + it->name + "'");
  }
  steps_.clear();
  return first;
}

}  // namespace berth
