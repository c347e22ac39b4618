// Pinned network namespaces: a new netns made on a thread of its own, kept alive by a bind mount
// of its nsfs file on <dir>/<id>, with loopback brought up through libnl.
#pragma once

#include <string>

#include "berth/status.h"

namespace berth {

// Creates <dir>/<id> and pins a fresh netns there; on failure nothing is left.
Result<std::string> create_pinned_netns(const std::string& dir, const std::string& id);
// Unmounts and removes the pin; a missing pin is fine.
Status remove_pinned_netns(const std::string& path);

}  // namespace berth
