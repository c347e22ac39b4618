// A container's bind mounts from its CRI mounts: checked (absolute paths, host path exists,
// propagation the host mount allows) and turned into OCI mount entries.
#pragma once

#include <string>
#include <vector>

#include "berth/prepared_mounts.h"
#include "berth/status.h"
#include "berth/user_namespace.h"

namespace berth {

enum class MountPropagation { private_, host_to_container, bidirectional };

struct MountRequest {
  std::string container_path;
  std::string host_path;
  bool readonly = false;
  MountPropagation propagation = MountPropagation::private_;
  bool recursive_read_only = false;
  bool has_image = false;    // an image volume (Mount.image)
  std::string image_source;  // where the image volume (or its sub path) is mounted on the host
  // Mount.uidMappings/gidMappings: an id-mapped mount (kubelet sends the pod's mappings for
  // the volumes of a pod with a user namespace).
  std::vector<IdMapping> uid_mappings, gid_mappings;
};

struct OciMount {
  std::string destination;
  std::string type;
  std::string source;
  std::vector<std::string> options;
  // Set when `source` is a copy of this host path that berthd mounts (prepare_mount) before the
  // runtime runs: recursively read-only, id-mapped, or both.
  std::string prepared_from;
  bool prepared_read_only = false;
  std::vector<IdMapping> uid_mappings, gid_mappings;  // empty: not id-mapped
  std::string field;  // the request's "config.mounts[i]", for errors after resolve_mounts
};

// How recursive_read_only and id-mapping requests are honoured, and where host-prepared copies go.
struct MountPolicy {
  RecursiveReadOnly recursive_read_only = RecursiveReadOnly::unsupported;
  std::string prepared_dir;      // <bundle>/mounts
  bool idmapped_mounts = false;  // the kernel has mount_setattr (5.12+), so MOUNT_ATTR_IDMAP
  // The pod's own user namespace mappings (empty: it has none). Its image volumes are id-mapped
  // through it already (ImageVolumes), so mappings on such a mount must be these.
  std::vector<IdMapping> pod_uid_mappings{}, pod_gid_mappings{};
};

// `mountinfo` is the text of /proc/self/mountinfo (a parameter so tests can give their own).
// Errors name the field (config.mounts[i].…) and the reason.
Result<std::vector<OciMount>> resolve_mounts(const std::vector<MountRequest>& mounts, const std::string& mountinfo,
                                             const MountPolicy& policy = {});

// Whether `path` is `dir` or below it (by name: neither is resolved).
bool path_under(const std::string& path, const std::string& dir);

// The propagation ("shared", "slave", "private") of the mount holding `path`, from mountinfo text.
std::string mount_propagation_of(const std::string& path, const std::string& mountinfo);
// Whether a mount is at `dir` itself (not only above it) and its propagation is private.
bool is_private_mount_point(const std::string& dir, const std::string& mountinfo);

}  // namespace berth
