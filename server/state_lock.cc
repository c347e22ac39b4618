// Directory creation and the daemon's state-directory lock.
#include "state_lock.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <string>
#include <utility>

namespace berth {

Status make_dirs(const std::string& dir, mode_t mode) {
  if (dir.empty()) return invalid_argument("make directory: empty path");
  for (size_t pos = 1; pos <= dir.size(); ++pos) {
    if (pos != dir.size() && dir[pos] != '/') continue;
    std::string part = dir.substr(0, pos);
    if (mkdir(part.c_str(), mode) != 0 && errno != EEXIST) return errno_status(errno, "mkdir " + part);
  }
  struct stat st;
  if (stat(dir.c_str(), &st) != 0) return errno_status(errno, "stat " + dir);
  if (!S_ISDIR(st.st_mode)) return internal_error(dir + " exists and is not a directory");
  return {};
}

Result<StateDirLock> StateDirLock::acquire(const std::string& dir) {
  std::string path = dir + "/berthd.lock";
  UniqueFd fd(open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0600));
  if (!fd) return errno_status(errno, "open lock " + path);
  // A POSIX record lock, not flock: it belongs to this process alone, so a child forked by berthd
  // (a monitor before its exec) never keeps it, and a restart right after a crash is not refused.
  // berthd never opens this file anywhere else (closing any fd of it would drop the lock).
  struct flock want {};
  want.l_type = F_WRLCK;
  want.l_whence = SEEK_SET;
  if (fcntl(fd.get(), F_SETLK, &want) != 0) {
    if (errno != EAGAIN && errno != EACCES) return errno_status(errno, "lock " + path);
    struct flock held = want;
    std::string holder = "unknown";
    if (fcntl(fd.get(), F_GETLK, &held) == 0 && held.l_type != F_UNLCK) holder = std::to_string(held.l_pid);
    return failed_precondition("another berthd (pid " + holder + ") already uses " + dir + " (lock " + path +
                               " is held)");
  }
  std::string pid = std::to_string(getpid()) + "\n";
  if (ftruncate(fd.get(), 0) != 0 || pwrite(fd.get(), pid.data(), pid.size(), 0) < 0)
    return errno_status(errno, "write lock " + path);
  return StateDirLock(std::move(fd), std::move(path));
}

Result<DaemonDirs> claim_daemon_dirs(const std::string& root, const std::string& state) {
  // Modes for dirs made here; an existing one (which an operator may share) keeps its own. What has
  // content below them is 0700 whatever they are (each module makes its own with make_private_dir).
  for (auto [dir, mode] : {std::pair{&root, 0700}, {&state, 0711}})
    if (Status s = make_dirs(*dir, static_cast<mode_t>(mode)); !s.ok()) return s;
  auto state_lock = StateDirLock::acquire(state);
  if (!state_lock.ok()) return state_lock.status();
  auto root_lock = StateDirLock::acquire(root);
  if (!root_lock.ok()) return root_lock.status();
  return DaemonDirs{std::move(*state_lock), std::move(*root_lock)};
}

}  // namespace berth
