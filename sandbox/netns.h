// Pinned network namespaces: a new netns made on a thread of its own, kept alive by a bind mount
// of its nsfs file on <dir>/<id>, with loopback brought up through libnl.
#pragma once

#include <string>
#include <vector>

#include "berth/status.h"
#include "berth/user_namespace.h"

namespace berth {

// Creates <dir>/<id> and pins a fresh netns there; on failure nothing is left.
Result<std::string> create_pinned_netns(const std::string& dir, const std::string& id);
// A pod with a user namespace of its own: that namespace (pinned on `userns_pin`) and a netns it
// owns (pinned on `netns_pin`), loopback up; on failure nothing is left.
Status create_pinned_userns_netns(const std::vector<IdMapping>& uids, const std::vector<IdMapping>& gids,
                                  const std::string& userns_pin, const std::string& netns_pin);
// Unmounts and removes the pin; a missing pin is fine.
Status remove_pinned_netns(const std::string& path);

}  // namespace berth
