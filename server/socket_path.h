// Preparing the listening socket's path: its directory exists, a stale socket left by a dead
// daemon is removed, and a socket some live process still serves is never touched.
#pragma once

#include <string>

#include "berth/status.h"

namespace berth {

Status prepare_socket_path(const std::string& path);

}  // namespace berth
