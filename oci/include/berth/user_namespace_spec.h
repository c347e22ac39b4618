// A spec's user namespace: the pod's, joined by the path of its pin. runc 1.1 wants the mappings
// too (it refuses a user namespace without them, and maps the ids of what it creates with them).
#pragma once

#include <string>
#include <vector>

#include "berth/oci_spec.h"
#include "berth/user_namespace.h"

namespace berth {

void add_user_namespace(oci::Linux& linux, const std::string& userns_path, const std::vector<IdMapping>& uids,
                        const std::vector<IdMapping>& gids);

}  // namespace berth
