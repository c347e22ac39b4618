// StateDirLock: an exclusive POSIX record lock on <dir>/berthd.lock held for the daemon's life, so a second
// berthd on the same state or root directory refuses to start instead of corrupting the first.
#pragma once

#include <string>

#include "berth/status.h"
#include "berth/unique_fd.h"

namespace berth {

class StateDirLock {
 public:
  static Result<StateDirLock> acquire(const std::string& dir);
  const std::string& path() const { return path_; }

 private:
  StateDirLock(UniqueFd fd, std::string path) : fd_(std::move(fd)), path_(std::move(path)) {}
  UniqueFd fd_;
  std::string path_;
};

// mkdir -p with `mode` for the directories it creates.
Status make_dirs(const std::string& dir, mode_t mode);

// berthd's two directories, made and locked for the daemon's life: root (durable state) and
// state (runtime state).
struct DaemonDirs {
  StateDirLock state, root;
};
Result<DaemonDirs> claim_daemon_dirs(const std::string& root, const std::string& state);

}  // namespace berth
