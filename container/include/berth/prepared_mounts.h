// Mounts berthd makes on the host for a container before its runtime runs, under the container's
// bundle (<bundle>/mounts/<n>, below a private self-bind of that dir): today the recursively
// read-only copy of a host path, for runtimes that do not list the `rro` mount option (crun
// before 1.9 has no `features` at all). The runtime then bind-mounts the copy; a bind of a tree
// whose every mount is read-only gives read-only copies of every mount.
#pragma once

#include <string>

#include "berth/status.h"

namespace berth {

// How Mount.recursive_read_only is honoured for a runtime on this host.
enum class RecursiveReadOnly {
  unsupported,     // a kernel without mount_setattr (< 5.12): refused
  runtime_option,  // the runtime lists the `rro` mount option (`<runtime> features`)
  host_prepared,   // berthd makes the read-only tree itself (mount_setattr, AT_RECURSIVE)
};

// Whether this kernel has mount_setattr(2) (5.12+); asked once.
bool kernel_has_mount_setattr();

RecursiveReadOnly recursive_read_only_mode(bool runtime_has_rro_option);

// Binds `source` (a directory or a file, with everything mounted below it) at `target`, private
// (nothing propagates to or from the host's copy), and makes every mount of the copy read-only.
// On failure nothing is left mounted at `target`.
Status mount_recursive_read_only(const std::string& source, const std::string& target);

// Detaches and removes every mount under `dir` (the container's <bundle>/mounts) and the dir.
// Idempotent: a missing dir is fine.
Status release_prepared_mounts(const std::string& dir);

}  // namespace berth
