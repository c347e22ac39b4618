// User namespaces for pods (hostUsers: false) and id-mapped mounts. A pod's user namespace and
// the network namespace it owns are made together by a short-lived child cloned into both, whose
// maps berthd writes, and are pinned by bind mounts like a netns: the pause and every container
// join them by path, and the pin's fd is the idmap of the pod's id-mapped mounts.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "berth/status.h"
#include "berth/unique_fd.h"

namespace berth {

// One line of a uid_map or gid_map: the `length` ids from `container_id` inside the namespace are
// those from `host_id` outside it.
struct IdMapping {
  uint32_t container_id = 0, host_id = 0, length = 0;
  bool operator==(const IdMapping&) const = default;
};

// What a pod's (or a volume's) mappings must be: 1 to 340 lines (the kernel's limit), each of a
// positive length that does not wrap, no two overlapping inside or outside, container id 0
// mapped, and, unless `allow_host_root`, host id 0 left out. The message names `field`.
Status validate_id_mappings(const std::vector<IdMapping>& ids, const std::string& field, bool allow_host_root = false);

// The host id that container id `id` maps to, in *host; false when `id` is not mapped.
bool map_to_host(const std::vector<IdMapping>& ids, uint32_t id, uint32_t* host);

// "0 65536 65536\n..." as /proc/<pid>/uid_map takes it.
std::string id_map_text(const std::vector<IdMapping>& ids);

// A user namespace with these mappings, as an fd of nsfs (for MOUNT_ATTR_IDMAP or setns); the
// child that made it is gone when this returns.
Result<UniqueFd> make_user_namespace(const std::vector<IdMapping>& uids, const std::vector<IdMapping>& gids);

// A new user namespace with these mappings and a network namespace it owns, pinned on
// `userns_pin` and `netns_pin` (files made here, mode 0444; both must not exist). On failure
// nothing is left.
Status create_pinned_user_and_net_ns(const std::vector<IdMapping>& uids, const std::vector<IdMapping>& gids,
                                     const std::string& userns_pin, const std::string& netns_pin);

// A new user namespace with these mappings alone, pinned on `userns_pin` (a pod that keeps the
// node's network namespace). On failure nothing is left.
Status create_pinned_user_ns(const std::vector<IdMapping>& uids, const std::vector<IdMapping>& gids,
                             const std::string& userns_pin);

// Unpins a namespace pinned by a bind mount and removes the file; missing is fine.
Status remove_namespace_pin(const std::string& path);

// A detached copy of the mount tree at `path` (recursively when `recursive`), id-mapped through the
// user namespace `userns_fd`, attached on `target` (an existing empty dir).
Status attach_idmapped_mount(const std::string& path, int userns_fd, const std::string& target, bool recursive);

// Whether this kernel can build a pod's root: an overlay whose lower layer is an id-mapped mount
// and whose upper is not, tried under `scratch_dir` (made and removed here). ok, or why not.
Status probe_idmapped_overlay(const std::string& scratch_dir);

}  // namespace berth
