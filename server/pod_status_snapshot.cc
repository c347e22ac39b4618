// The pod's status with its containers' statuses, read after the moment it is stamped with.
#include "pod_status_snapshot.h"

#include "berth/wall_clock.h"

namespace berth {

Status read_pod_status(SandboxManager& sandboxes, ContainerManager& containers, const std::string& id_or_prefix,
                       bool verbose, runtime::v1::PodSandboxStatusResponse* out) {
  const int64_t now = wall_clock_ns();
  if (Status s = sandboxes.status(id_or_prefix, verbose, out); !s.ok()) return s;
  out->set_timestamp(now);
  // A container removed between the list and its status is no longer the pod's: left out.
  for (const auto& cid : containers.ids_in_sandbox(out->status().id())) {
    runtime::v1::ContainerStatusResponse cs;
    if (containers.status(cid, false, &cs).ok()) *out->add_containers_statuses() = std::move(*cs.mutable_status());
  }
  return ok_status();
}

}  // namespace berth
