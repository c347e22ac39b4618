// See pod_user_namespace.h. The mapping rules are posix/'s validate_id_mappings.
#include "berth/pod_user_namespace.h"

namespace berth {

namespace v1 = runtime::v1;

std::vector<IdMapping> id_mappings_of(const google::protobuf::RepeatedPtrField<v1::IDMapping>& ids) {
  std::vector<IdMapping> out;
  for (const auto& m : ids) out.push_back({m.container_id(), m.host_id(), m.length()});
  return out;
}

Result<PodUserNamespace> pod_user_namespace(const v1::NamespaceOption& ns, const std::string& field) {
  if (!ns.has_userns_options()) return PodUserNamespace{};
  const v1::UserNamespace& u = ns.userns_options();
  const std::string f = field + ".userns_options";
  switch (u.mode()) {
    case v1::NODE:
      if (u.uids_size() > 0 || u.gids_size() > 0)
        return invalid_argument(f + ": mode NODE takes no uids or gids mappings");
      return PodUserNamespace{};
    case v1::POD: break;
    case v1::CONTAINER:
    case v1::TARGET:
      return invalid_argument(f + ".mode: " + v1::NamespaceMode_Name(u.mode()) +
                              " is not supported (only NODE and POD)");
    default: return invalid_argument(f + ".mode: unknown mode " + std::to_string(u.mode()));
  }
  PodUserNamespace out{true, id_mappings_of(u.uids()), id_mappings_of(u.gids())};
  if (Status s = validate_id_mappings(out.uids, f + ".uids"); !s.ok()) return s;
  if (Status s = validate_id_mappings(out.gids, f + ".gids"); !s.ok()) return s;
  if (ns.pid() == v1::NODE || ns.ipc() == v1::NODE)
    return invalid_argument(f +
                            ": a pod with a user namespace of its own cannot share the host's PID or IPC namespace");
  return out;
}

}  // namespace berth
