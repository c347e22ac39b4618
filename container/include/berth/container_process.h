// What a container runs, decided from its image config and its CRI ContainerConfig the way
// Kubernetes defines it: command/args against the image's Entrypoint/Cmd, environment, working
// directory and the user (resolved in the image's own /etc/passwd and /etc/group).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "berth/status.h"

namespace berth {

// The parts of an OCI image config a container's process depends on.
struct ImageProcessDefaults {
  std::vector<std::string> entrypoint;
  std::vector<std::string> cmd;
  std::vector<std::string> env;  // "KEY=value"
  std::string working_dir;
  std::string user;  // "", "uid", "uid:gid", "name", "name:group"
};

// Kubernetes rules: command given -> command + args (image Entrypoint and Cmd ignored);
// only args given -> Entrypoint + args; neither -> Entrypoint + Cmd. Empty result is an error.
Result<std::vector<std::string>> resolve_process_args(const ImageProcessDefaults& image,
                                                      const std::vector<std::string>& command,
                                                      const std::vector<std::string>& args);

// Image env first, then the config's; a key set by both keeps its first position with the
// config's value. Keys may not be empty or contain '='.
Result<std::vector<std::string>> merge_process_env(const std::vector<std::string>& image_env,
                                                   const std::vector<std::pair<std::string, std::string>>& config_env);

struct UserRequest {
  std::optional<int64_t> run_as_user;
  std::string run_as_username;
  std::optional<int64_t> run_as_group;
  std::vector<int64_t> supplemental_groups;
  std::string image_user;                   // the image config's User, used when neither run_as_* is set
  bool strict_supplemental_groups = false;  // SupplementalGroupsPolicy Strict: no /etc/group memberships
};

struct ResolvedUser {
  uint32_t uid = 0;
  uint32_t gid = 0;
  std::vector<uint32_t> additional_gids;  // /etc/group memberships, then supplemental_groups
  std::string username;                   // empty when the uid has no passwd entry
};

// Reads <rootfs>/etc/passwd and <rootfs>/etc/group without following links out of the rootfs.
// A name that is not in the image's passwd (or group) file is an INVALID_ARGUMENT naming it.
Result<ResolvedUser> resolve_user(const std::string& rootfs, const UserRequest& request);

}  // namespace berth
