// posix_spawn with the stdio and signal set-up of spawn.h (glibc reports exec errors as the
// return value, so no pipe is needed to learn of them).
#include "berth/spawn.h"

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>

extern char** environ;

namespace berth {

Result<pid_t> spawn_process(const SpawnRequest& r) {
  if (r.argv.empty()) return invalid_argument("spawn: no program");
  std::vector<char*> argv;
  for (const auto& a : r.argv) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  for (int target = 0; target < 3; ++target) {
    if (r.stdio[target] >= 0) posix_spawn_file_actions_adddup2(&fa, r.stdio[target], target);
    else posix_spawn_file_actions_addopen(&fa, target, "/dev/null", target == 0 ? O_RDONLY : O_WRONLY, 0);
  }
  posix_spawnattr_t attr;
  posix_spawnattr_init(&attr);
  sigset_t none, all;
  sigemptyset(&none);
  sigfillset(&all);
  posix_spawnattr_setsigmask(&attr, &none);
  posix_spawnattr_setsigdefault(&attr, &all);
  posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF);
  pid_t pid = -1;
  int err = ::posix_spawnp(&pid, argv[0], &fa, &attr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&fa);
  posix_spawnattr_destroy(&attr);
  if (err != 0) return errno_status(err, "exec " + r.argv[0]);
  return pid;
}

}  // namespace berth
