// The checks every request passes before a manager sees it: each field that becomes a path, a
// line of a file, a command-line argument, a CNI argument or an environment entry. The first bad
// field is INVALID_ARGUMENT naming it as the request spells it ("config.dns_config.servers[1]").
// Nothing has been made when a check fails.
#pragma once

#include <string>
#include <vector>

#include "berth/cri_messages.h"
#include "berth/status.h"

namespace berth {

Status check_pod_sandbox_config(const runtime::v1::PodSandboxConfig& config);
Status check_container_config(const runtime::v1::ContainerConfig& config);
// A command to exec (ExecSync, Exec): non-empty, and no argument with a NUL byte.
Status check_command(const std::vector<std::string>& cmd);

}  // namespace berth
