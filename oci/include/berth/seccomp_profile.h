// The seccomp section of an OCI spec for a CRI security profile: berth's RuntimeDefault profile,
// Unconfined (no filter), or a Localhost profile file.
#pragma once

#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "berth/status.h"

namespace berth {

enum class SeccompKind { runtime_default, unconfined, localhost };

struct SeccompRequest {
  SeccompKind kind = SeccompKind::unconfined;
  std::string localhost_path;  // absolute path of an OCI seccomp JSON file, for localhost
  std::string field;           // the request field named in errors
};

// nullopt: no filter (unconfined, or privileged).
Result<std::optional<nlohmann::json>> seccomp_section(const SeccompRequest& request);

// berth's RuntimeDefault: everything is allowed except syscalls a container has no business
// making (kernel modules, kexec, reboot, clock setting, swap, bpf, perf, keyrings, …), each
// checked by name with libseccomp so only syscalls this kernel's ABI knows are listed.
nlohmann::json runtime_default_seccomp();

}  // namespace berth
