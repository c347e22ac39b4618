// What each of a berth-pull helper's two processes may still do once the helper has its hello
// (fetch_channel.h). The unpacker writes the image store (owners, modes, device nodes of whiteouts,
// file capabilities, overlay's trusted.* xattrs) and nothing else: the other capabilities (bounding
// set included) go, so do new privileges, the network (an empty network namespace, and no socket
// but a unix one) and, through a seccomp filter, the syscalls that reach beyond files (mounts,
// namespaces, ptrace, modules, kexec, bpf, keyrings, file handles ...). The fetcher, which reads
// every byte a registry sends, keeps no capability at all: it becomes an unprivileged user (uid and
// gid kFetcherId) in a mount namespace of its own where every mount is read-only, not dumpable,
// with no new privileges and the same filter. Both happen before a byte from a registry is read.
#pragma once

#include <sys/types.h>

#include "berth/status.h"

namespace berth {

// nobody:nogroup on Debian; the fetcher needs no account, only an id no file it must write has.
inline constexpr uid_t kFetcherId = 65534;

Status confine_unpacker();
Status confine_fetcher();

}  // namespace berth
