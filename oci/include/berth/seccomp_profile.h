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
  std::string localhost_path;  // absolute path of an OCI seccomp JSON file, for localhost
  std::string field;           // the request field named in errors
  // The process's capability set ("CAP_…"): RuntimeDefault allows what a capability grants.
  std::vector<std::string> capabilities;
};

// nullopt: no filter (unconfined, or privileged).
Result<std::optional<nlohmann::json>> seccomp_section(const SeccompRequest& request);

// berth's RuntimeDefault: everything is allowed except syscalls a container has no business
// making (kernel modules, kexec, reboot, clock setting, swap, bpf, perf, keyrings, mounts and
// namespaces, …). A syscall that a capability of the process stands for is allowed when the
// process has it (mount and unshare with CAP_SYS_ADMIN, reboot with CAP_SYS_BOOT, …). Without
// CAP_SYS_ADMIN, clone may not make namespaces and clone3 (whose flags a filter cannot see) is
// ENOSYS, so libc falls back to clone. Names are checked with libseccomp for this kernel's ABI.
nlohmann::json runtime_default_seccomp(const std::vector<std::string>& capabilities);

}  // namespace berth
