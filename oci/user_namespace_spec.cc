// See user_namespace_spec.h.
#include "berth/user_namespace_spec.h"

namespace berth {

void add_user_namespace(oci::Linux& linux, const std::string& userns_path, const std::vector<IdMapping>& uids,
                        const std::vector<IdMapping>& gids) {
  linux.namespaces.push_back({.type = "user", .path = userns_path});
  linux.uid_mappings = uids;
  linux.gid_mappings = gids;
}

}  // namespace berth
