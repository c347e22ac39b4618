// The checks Exec and Attach share before they hand out a URL: the streams asked for, and a
// container that exists and runs.
#pragma once

#include "berth/container_manager.h"
#include "berth/status.h"

namespace berth {

Status check_stream_stdio(bool in, bool out, bool err, bool tty);
Result<ContainerInfo> running_container(ContainerManager& containers, const std::string& id_or_prefix);

}  // namespace berth
