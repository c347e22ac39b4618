// The OCI spec of a sandbox's pause container, built from the CRI PodSandboxConfig: namespaces,
// user, security (privileged, seccomp, no capabilities otherwise), namespaced sysctls, OOM score,
// cgroup path and the pod's resources.
#pragma once

#include <string>

#include "berth/cri_messages.h"
#include "berth/oci_spec.h"
#include "berth/status.h"
#include "berth/user_namespace.h"

namespace berth {

struct PauseSpecInputs {
  std::string rootfs;      // read-only dir holding /pause
  std::string netns_path;  // empty: host network
  std::string cgroups_path;
  std::string shm_path;  // the pod's /dev/shm (a tmpfs its containers share), or the host's
  int oom_score_adj = -998;
  bool cgroup_v2 = false;  // a cgroup namespace of its own, as containers get on cgroup v2
  std::vector<std::string> args = {"/pause"};
  std::string userns_path;  // the pod's pinned user namespace; empty: the host's
  std::vector<IdMapping> uids, gids;
};

// Checks the parts of the config berth must refuse (non-namespaced sysctls, bad modes, unknown
// seccomp profiles) and builds the spec config.json holds.
Result<oci::Spec> build_pause_spec(const runtime::v1::PodSandboxConfig& config, const PauseSpecInputs& in);

}  // namespace berth
