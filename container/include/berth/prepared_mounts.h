// Mounts berthd makes on the host for a container before its runtime runs, under the container's
// bundle (<bundle>/mounts/<n>, below a private self-bind of that dir): the recursively read-only
// copy of a host path, for runtimes that do not list the `rro` mount option (crun before 1.9 has
// no `features` at all), and the id-mapped copy of a volume (runc 1.1 cannot make one). The
// runtime then bind-mounts the copy; a bind keeps each mount's read-only flag and idmap.
#pragma once

#include <sys/types.h>

#include <string>
#include <vector>

#include "berth/runtime_handlers.h"
#include "berth/status.h"
#include "berth/user_namespace.h"

namespace berth {

// How Mount.recursive_read_only is honoured for a runtime on this host.
enum class RecursiveReadOnly {
  unsupported,     // a kernel without mount_setattr (< 5.12): refused
  runtime_option,  // the runtime lists the `rro` mount option (`<runtime> features`)
  host_prepared,   // berthd makes the read-only tree itself (mount_setattr, AT_RECURSIVE)
};

// Whether this kernel has mount_setattr(2) (5.12+); asked once.
bool kernel_has_mount_setattr();

// From the handler table's entry for the container's handler: the runtime's own `rro` where it
// lists it, else berthd's copy; neither without mount_setattr (the runtime's rro is that call too).
RecursiveReadOnly recursive_read_only_mode(const HandlerFeatures& handler);

// A copy of `source` (a directory or a file, with everything mounted below it) at `target`:
// read-only in every mount when `read_only`, id-mapped through `uids`/`gids` when they are given.
struct PreparedMount {
  std::string source, target;
  bool read_only = false;
  std::vector<IdMapping> uids, gids;
  std::string field;  // what errors name ("config.mounts[2]")
};

// Where the user namespaces of id-mapped copies come from: the pod's own (pinned at
// `pod_userns_path`, opened, not made) when a mount's mappings are the pod's, as kubelet sends
// them; a new one per distinct mapping otherwise.
struct PodIdmap {
  std::string pod_userns_path;  // empty: the pod has none
  std::vector<IdMapping> uids, gids;
};

// Makes `dir` (mode `mode` when new) a private self-bind, once: berthd's state dir is under /run,
// shared on systemd hosts, and a copy attached there would be propagated (writable, or with the
// host's ids) into every namespace that receives /run's mounts, and outlive its release there.
// release_prepared_mounts undoes it.
Status make_private_mount_dir(const std::string& dir, mode_t mode);

// Makes each copy, private (nothing propagates to or from the host's copy); every target is in
// one dir. On failure what was made is left for release_prepared_mounts, which the caller runs.
Status prepare_mounts(const std::vector<PreparedMount>& mounts, const PodIdmap& pod);

// Detaches and removes every mount under `dir` (the container's <bundle>/mounts, or the id-mapped
// rootfs layers of <bundle>/idmap) and the dir. Idempotent: a missing dir is fine.
Status release_prepared_mounts(const std::string& dir);

}  // namespace berth
