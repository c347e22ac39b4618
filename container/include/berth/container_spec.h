// The OCI runtime spec (config.json) of a container, built from its CRI ContainerConfig, the pod it
// joins and its image: process (args, env, user, cwd, tty, capabilities, no_new_privs, OOM score,
// AppArmor), root, mounts (defaults, the pod's shm and DNS/host files, CRI mounts), devices,
// namespaces joined from the pod, cgroup path, resources and seccomp. Persists nothing.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "berth/container_mounts.h"
#include "berth/container_process.h"
#include "berth/cri_messages.h"
#include "berth/oci_spec.h"
#include "berth/status.h"
#include "berth/user_namespace.h"

namespace berth {

// What the spec needs of the pod the container joins (from the sandbox's own record).
struct PodForContainer {
  std::string id;
  int pid = 0;             // the pause: its ipc/uts/pid namespaces are joined
  std::string netns_path;  // empty: host network
  bool host_network = false, host_ipc = false, host_pid = false;
  std::string files_dir;  // resolv.conf, hostname, hosts
  std::string shm_path;   // the pod's /dev/shm
  std::string hostname;
  std::string name, namespace_, uid;
  bool privileged = false;  // the sandbox's security context
  std::string userns_path;  // the pod's own user namespace; empty: the host's
  std::vector<IdMapping> userns_uids, userns_gids;
};

// The defaults of the image the container runs.
struct ImageForContainer {
  std::string name;  // what the config asked for
  ImageProcessDefaults process;
  std::string stop_signal;
};

struct ContainerSpecInputs {
  std::string id;
  std::string rootfs;  // the mounted root (its /etc/passwd and /etc/group are read)
  std::string cgroups_path;
  std::string mountinfo;          // /proc/self/mountinfo text, for propagation checks
  int min_oom_score_adj = -1000;  // berthd's own when it may not go lower
  // The node's default_ulimits, set in the process of every container. Without RLIMIT_NOFILE in
  // the spec the init's limit would depend on the runtime (runc built with Go < 1.21 raises its
  // soft limit to the hard one and the init inherits that, crun does not) while ExecSync through
  // berth-exec would inherit berthd's: stated, the init and every exec get the same.
  std::vector<oci::Rlimit> rlimits;
  // The devices config.devices names are owned by the container's uid and gid (the resolved
  // user's), not by their host owner (berth.toml's device_ownership_from_security_context).
  bool device_ownership_from_security_context = false;
  int target_pid = 0;                        // for namespace_options.pid TARGET: the target container's init
  bool host_apparmor = false;                // AppArmor enabled on the host
  std::string default_apparmor_profile;      // loaded profile for RuntimeDefault ("" when none)
  bool cgroup_v2 = false;                    // the host runs cgroup v2 (host_cgroup_v2() of cgroups_path.h)
  MountPolicy mounts;                        // how recursive_read_only is honoured
  std::map<int, std::string> image_sources;  // config.mounts index -> its image volume's host path
};

struct ContainerSpec {
  oci::Spec spec;
  ResolvedUser user;
  std::vector<PreparedMount> prepared_mounts;
};

// Errors are INVALID_ARGUMENT naming the config field and why (or FAILED_PRECONDITION for a host
// mount whose propagation does not allow what is asked).
Result<ContainerSpec> build_container_spec(const runtime::v1::ContainerConfig& config, const PodForContainer& pod,
                                           const ImageForContainer& image, const ContainerSpecInputs& in);

// The linux.resources section for a CRI resources message (also what `runc update` takes).
Result<oci::Resources> oci_resources(const runtime::v1::LinuxContainerResources& r, bool cgroup_v2);

// The process section `runc exec` runs: the container's own (user, env, cwd, capabilities,
// security) with other args and no terminal unless asked. INTERNAL when the spec (the bundle's
// config.json, read back from disk) has no process.
Result<oci::Process> exec_process(const oci::Spec& container_spec, const std::vector<std::string>& cmd, bool tty);

// A signal by name ("SIGTERM", "TERM") or number ("15"); 0 when unknown.
int signal_number(const std::string& name);

}  // namespace berth
