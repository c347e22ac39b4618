// What a pod's (or one of its containers') NamespaceOption.userns_options asks for: the host's
// user namespace (mode NODE, or no userns_options at all, as kubelets before 1.30 send) or one of
// the pod's own with the given mappings (mode POD). TARGET and CONTAINER are refused: kubelet
// never sends them.
#pragma once

#include <string>
#include <vector>

#include "berth/cri_messages.h"
#include "berth/status.h"
#include "berth/user_namespace.h"

namespace berth {

struct PodUserNamespace {
  bool own = false;  // false: the host's
  std::vector<IdMapping> uids, gids;
  bool operator==(const PodUserNamespace&) const = default;
};

// `field` names the NamespaceOption in messages ("config.linux.security_context.namespace_options").
Result<PodUserNamespace> pod_user_namespace(const runtime::v1::NamespaceOption& ns, const std::string& field);

std::vector<IdMapping> id_mappings_of(const google::protobuf::RepeatedPtrField<runtime::v1::IDMapping>& ids);

}  // namespace berth
