// See user_namespace_spec.h.
#include "berth/user_namespace_spec.h"

namespace berth {

namespace {

nlohmann::json spec_mappings(const std::vector<IdMapping>& ids) {
  nlohmann::json out = nlohmann::json::array();
  for (const IdMapping& m : ids)
    out.push_back({{"containerID", m.container_id}, {"hostID", m.host_id}, {"size", m.length}});
  return out;
}

}  // namespace

void add_user_namespace(nlohmann::json& linux, const std::string& userns_path, const std::vector<IdMapping>& uids,
                        const std::vector<IdMapping>& gids) {
  linux["namespaces"].push_back({{"type", "user"}, {"path", userns_path}});
  linux["uidMappings"] = spec_mappings(uids);
  linux["gidMappings"] = spec_mappings(gids);
}

}  // namespace berth
