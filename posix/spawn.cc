// spawn_process: spawn_child with /dev/null for the stdio not given.
#include "berth/spawn.h"

#include <fcntl.h>

#include "berth/unique_fd.h"
#include "child_spawn.h"

extern char** environ;

namespace berth {

Result<pid_t> spawn_process(const SpawnRequest& r) {
  if (r.argv.empty()) return invalid_argument("spawn: no program");
  std::vector<char*> argv;
  for (const auto& a : r.argv) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  UniqueFd devnull(::open("/dev/null", O_RDWR | O_CLOEXEC));
  if (!devnull) return errno_status(errno, "exec " + r.argv[0] + ": open /dev/null");
  ChildSpec spec;
  spec.path = argv[0];
  spec.argv = argv.data();
  std::vector<char*> envp;
  if (r.env) {
    for (const auto& e : *r.env) envp.push_back(const_cast<char*>(e.c_str()));
    envp.push_back(nullptr);
  }
  spec.envp = r.env ? envp.data() : environ;
  if (r.extra_fds.size() > ChildSpec::kMaxExtra) return invalid_argument("spawn " + r.argv[0] + ": too many fds");
  for (int fd : r.extra_fds) spec.extra[spec.n_extra++] = fd;
  for (int t = 0; t < 3; ++t) spec.stdio[t] = r.stdio[t] >= 0 ? r.stdio[t] : devnull.get();
  spec.die_with_parent = r.die_with_parent;
  return spawn_child(spec, r.argv[0].c_str());
}

}  // namespace berth
