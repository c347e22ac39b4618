// SandboxManager: pod sandboxes from RunPodSandbox to RemovePodSandbox: namespaces (a pinned
// netns), the pause (berth's own started by berth-pause-launch where the runtime handler's
// processes are host processes and the launcher applies all of the pause's spec; an image's, or
// any other, through the OCI runtime), DNS/hostname/hosts files, checkpoints, name reservation,
// and the in-memory index every status and list call is served from. A sandbox is recorded
// (checkpoint, phase "creating") before anything is made for it, so a crash at any step leaves a
// record that recovery turns back into nothing; stop and remove release every resource whatever
// state the sandbox is in.
#pragma once

#include <functional>
#include <future>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "berth/pod_user_namespace.h"
#include "berth/runtime_handlers.h"
#include "berth/cri_messages.h"
#include "berth/sandbox_checkpoint.h"
#include "berth/status.h"

namespace berth {

class SystemdUnits;

// A pause image from the registry (berth.toml's sandbox_image) instead of the embedded berth-pause.
struct PauseImage {
  std::string id;  // the image's id, already held for the sandbox (SandboxImages::release frees it)
  std::vector<std::string> layer_dirs;  // lowest first
  std::vector<std::string> args;        // Entrypoint + Cmd
};

// The pod's DNS config, as its resolv.conf and its network's plugins get it.
struct PodDns {
  std::vector<std::string> servers, searches, options;
};
PodDns pod_dns(const runtime::v1::DNSConfig& config);

// What network setup needs of a pod (filled by SandboxManager from the CRI config, which is
// converted there once; served by the CNI manager).
struct SandboxNetworkRequest {
  std::string id, name, namespace_, uid, netns_path;
  std::vector<CheckpointPortMapping> port_mappings;
  PodDns dns;
  std::map<std::string, std::string> annotations;
  // OK once netns_path is pinned (setup may start before it is); an error calls setup off.
  std::shared_future<Status> netns_ready;
};

// What a sandbox needs of the pod network (the daemon serves it with CNI: server/sandbox_hooks).
class SandboxNetwork {
 public:
  virtual ~SandboxNetwork() = default;
  // Returns the pod IPs; on failure it has already undone what it did.
  virtual Result<std::vector<std::string>> setup(const SandboxNetworkRequest& request) = 0;
  // Must succeed before the netns is released; netns_path may be gone (after a reboot).
  virtual Status teardown(const std::string& id, const std::string& netns_path) = 0;
  // The IPs of a sandbox recovered at start; empty when unknown.
  virtual std::vector<std::string> recorded_ips(const std::string& id) = 0;
  // CNI CHECK of a ready sandbox's network, run for verbose PodSandboxStatus.
  virtual Status check(const std::string& id, const std::string& netns_path) = 0;
};

// What a sandbox needs of the image store. A sandbox holds its image's layers from its start to
// its removal (as a container does), so removing the image never pulls the lower dirs from under a
// running pause: pause_image() returns the image held, recovery takes the holds of recovered
// sandboxes again, and removal releases them.
class SandboxImages {
 public:
  virtual ~SandboxImages() = default;
  // nullopt: no sandbox_image is configured, the pause is the embedded berth-pause.
  virtual Result<std::optional<PauseImage>> pause_image() = 0;
  virtual void hold(const std::string& image_id) = 0;
  virtual void release(const std::string& image_id) = 0;
};

struct SandboxManagerOptions {
  std::string state_dir;     // <state>: bundles, netns pins, pause rootfs
  std::string root_dir;      // <root>: checkpoints
  std::string pause_binary;  // berth-pause
  // berth-pause-launch, which starts the embedded pause without the runtime; empty: the runtime.
  std::string pause_launcher;
  RuntimeHandlers runtimes;  // also says the cgroup driver (systemd_cgroup())
  // With the systemd driver: the units berth asks systemd for (the pauses' scopes, the slices a
  // pod caused to exist); null with cgroupfs.
  std::shared_ptr<SystemdUnits> systemd;
  SandboxImages* images = nullptr;    // unset: the embedded pause, no image holds
  SandboxNetwork* network = nullptr;  // unset: pods get loopback only
  // Whether pods may have user namespaces of their own (the start-up probe of id-mapped overlay
  // layers): ok, or why not, which a userns pod's refusal repeats.
  Status user_namespaces = Status(Code::failed_precondition, "not probed");
};

// What other modules (containers, CNI, stats) need to know of a sandbox.
struct SandboxInfo {
  std::string id;
  bool ready = false;
  int pid = 0;
  std::string netns_path;  // empty: host network
  std::string cgroups_path;
  std::string cgroup_parent;
  std::string bundle_dir;  // resolv.conf, hostname, hosts live here
  std::string shm_path;    // the pod's /dev/shm (the host's with host IPC)
  std::string runtime_handler;
  std::string log_directory;
  bool closing = false;  // stop or remove has begun
  std::string name, namespace_, uid, hostname;
  bool host_network = false, host_ipc = false, host_pid = false, privileged = false;
  PodUserNamespace userns;  // own: the pod's user namespace, pinned at userns_path
  std::string userns_path;
};

// What the stats read of a sandbox: less than SandboxInfo, for every pod every few seconds.
struct PodStatsSource {
  runtime::v1::PodSandboxAttributes attributes;  // id, metadata, labels, annotations
  bool ready = false, host_network = false;
  int pid = 0;
  std::string cgroups_path, cgroup_parent;
};

// A ready sandbox that cannot begin to stop while held: CreateContainer and StartContainer hold
// one, so no container is made in a pod that is being stopped or removed.
struct SandboxLease {
  SandboxInfo info;
  std::shared_ptr<void> hold;  // the lease ends when the last copy goes
};

// What the pod's containers need done before the sandbox itself goes (stop or remove them); run
// once no lease is held and none can be taken any more.
using SandboxContainersStep = std::function<Status(const std::string& sandbox_id)>;

class SandboxManager {
 public:
  // Loads the checkpoints and compares each with the host (no runtime is run): a pause still
  // running is READY again; a sandbox whose RunPodSandbox was cut short is NOTREADY and left for
  // finish_recovery() to undo. Leftovers no checkpoint owns are removed.
  static Result<std::unique_ptr<SandboxManager>> open(SandboxManagerOptions options);
  ~SandboxManager();

  // Undoes the sandboxes a crash left half made (the slow part of recovery: runtime, CNI); run
  // once berthd serves. A sandbox whose undo fails stays listed NOTREADY for Stop/Remove to finish.
  void finish_recovery();
  // CNI CHECK of every recovered ready pod with a network of its own: what changed on the node
  // while berthd was down is logged and shown in the pod's verbose status (network_check). Last in
  // recovery's background work, after what it releases.
  void check_recovered_networks();
  // Ends check_recovered_networks() after the pod it is at (berthd is stopping).
  void stop_network_checks();

  Result<std::string> run(const runtime::v1::PodSandboxConfig& config, const std::string& runtime_handler);
  // Stop and remove run `containers` first (after which no container can join the pod). Both are
  // idempotent and total: every resource of the sandbox is released whatever state it is in.
  Status stop(const std::string& id_or_prefix, const SandboxContainersStep& containers = {});
  Status remove(const std::string& id_or_prefix, const SandboxContainersStep& containers = {});
  // FAILED_PRECONDITION when the sandbox is not ready or is being stopped.
  Result<SandboxLease> lease(const std::string& id_or_prefix);
  Status status(const std::string& id_or_prefix, bool verbose, runtime::v1::PodSandboxStatusResponse* out);
  std::vector<runtime::v1::PodSandbox> list(const runtime::v1::PodSandboxFilter& filter);
  std::vector<PodStatsSource> stats_sources(const runtime::v1::PodSandboxFilter& filter);
  std::optional<SandboxInfo> info(const std::string& id_or_prefix);
  // info() for a request's id: NOT_FOUND, or INVALID_ARGUMENT for a prefix of several sandboxes.
  Result<SandboxInfo> lookup(const std::string& id_or_prefix);
  // UpdatePodSandboxResources: the checkpoint and status record the resources plus the overhead;
  // the pod's own cgroup (its cgroup_parent) gets them only where berth made it (CgroupParents),
  // as kubelet sets the ones it made before the call. FAILED_PRECONDITION for a pod that is not
  // ready or has no cgroup of its own, or (a cgroup berth made) a memory limit below its use.
  Status update_resources(const std::string& id_or_prefix, const runtime::v1::LinuxContainerResources& overhead,
                          const runtime::v1::LinuxContainerResources& resources);
  size_t ready_count();

  struct Impl;

 private:
  explicit SandboxManager(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace berth
