// What a berth-pull helper may still do once it has its hello: write the image store (owners,
// modes, device nodes of whiteouts, file capabilities, overlay's trusted.* xattrs) and talk to
// registries. Everything else a root process could do is taken away before it reads a byte from
// a registry: the other capabilities (bounding set included), new privileges, and through a
// seccomp filter the syscalls that reach beyond files and sockets (mounts, namespaces, ptrace,
// modules, kexec, bpf, keyrings, file handles ...).
#pragma once

#include "berth/status.h"

namespace berth {

Status confine_pull_helper();

}  // namespace berth
