// The seccomp section of an OCI spec for a CRI security profile: berth's RuntimeDefault profile,
// Unconfined (no filter), or a Localhost profile file.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "berth/status.h"

namespace berth {

enum class SeccompKind { runtime_default, unconfined, localhost };

struct SeccompRequest {
  SeccompKind kind = SeccompKind::unconfined;
  // Absolute path of an OCI seccomp JSON file, for localhost: read only if it is a regular file
  // of at most 1 MiB, without blocking on a FIFO or device.
  std::string localhost_path;
  std::string field;  // the request field named in errors
  // The process's capability set ("CAP_…"): RuntimeDefault allows what a capability grants.
  std::vector<std::string> capabilities;
};

// nullopt: no filter (unconfined, or privileged).
Result<std::optional<nlohmann::json>> seccomp_section(const SeccompRequest& request);

// berth's RuntimeDefault, an allowlist: every syscall is refused with EPERM unless the profile
// names it (the calls ordinary programs make: file and socket I/O, memory, threads, signals, time,
// processes, IPC; see seccomp_syscalls.cc), so a newer kernel's syscalls are not open by default.
// A syscall that a capability of the process stands for is added when the process has it (mount
// and unshare with CAP_SYS_ADMIN, reboot with CAP_SYS_BOOT, chroot with CAP_SYS_CHROOT, …). Some
// are filtered by argument: personality to the common personas, socket to every family but
// AF_VSOCK, and without CAP_SYS_ADMIN clone may not make namespaces and clone3 (whose flags a
// filter cannot see) is ENOSYS, so libc falls back to clone. io_uring, kexec, keyrings,
// userfaultfd and swap are never allowed (a Localhost profile may allow them). Names libseccomp
// does not know for this ABI are left out.
nlohmann::json runtime_default_seccomp(const std::vector<std::string>& capabilities);

}  // namespace berth
