// ContainerManager: containers from CreateContainer to RemoveContainer. It owns each container's
// rootfs (overlayfs over the image's snapshots), OCI bundle, record (<root>/container-records),
// its berth-monitor (started at StartContainer: the monitor runs the runtime's create, holds the
// stdio and writes the CRI log and the exit file) and the in-memory index every status and list
// call is served from. Exits arrive from the monitors (MonitorWatcher), never by polling.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "berth/criu_support.h"
#include "berth/runtime_handlers.h"
#include "berth/cri_messages.h"
#include "berth/oci_spec.h"
#include "berth/status.h"
#include "berth/unique_fd.h"

namespace berth {

class SystemdUnits;

class CdiRegistry;
struct RestoreImport;
class ImageHold;
struct ImageRecord;
struct SandboxInfo;
struct SandboxLease;

// What a container needs of its pod (berthd serves it with the sandbox manager).
class ContainerPods {
 public:
  virtual ~ContainerPods() = default;
  // The ready pod, which cannot begin to stop while the lease is held (FAILED_PRECONDITION when
  // it is not ready or is stopping, NOT_FOUND when there is none).
  virtual Result<SandboxLease> lease(const std::string& sandbox_id) = 0;
  // Any pod, ready or not: nullopt once it is removed.
  virtual std::optional<SandboxInfo> info(const std::string& sandbox_id) = 0;
};

// What a container needs of the image store (berthd serves it with the image manager). A
// container holds its image's layers from creation to removal.
class ContainerImages {
 public:
  virtual ~ContainerImages() = default;
  // Found and held in one step; the hold goes with the handle unless kept.
  virtual Result<ImageHold> acquire(const std::string& reference) = 0;
  virtual std::vector<std::string> snapshot_dirs(const ImageRecord& image) = 0;
  virtual std::optional<ImageRecord> find(const std::string& reference) = 0;
  // Its manifest's annotations (a checkpoint image is known by them).
  virtual std::map<std::string, std::string> annotations(const ImageRecord&) { return {}; }
  // Recovery takes the holds of recovered containers again; removal releases them.
  virtual void hold(const std::string& image_id) = 0;
  virtual void release(const std::string& image_id) = 0;
};

// Told after each container lifecycle change (created, started, stopped, deleted); never called
// under a lock of the manager.
class ContainerEventSink {
 public:
  virtual ~ContainerEventSink() = default;
  virtual void container_changed(const std::string& id, const std::string& sandbox_id,
                                 runtime::v1::ContainerEventType type) = 0;
};

// The node's settings for the containers created from now on.
struct ContainerProcessDefaults {
  std::vector<oci::Rlimit> rlimits;  // set in every container's process
  // Devices given by config.devices are owned by the container's user (see ContainerSpecInputs).
  bool device_ownership_from_security_context = false;
};

struct ContainerManagerOptions {
  std::string state_dir;  // <state>: bundles, rootfs mounts, monitor sockets, exit files
  std::string root_dir;   // <root>: writable layers and records
  std::string monitor_binary;
  // berth-exec, which runs ExecSync commands without the runtime; empty: always `runtime exec`.
  std::string exec_helper;
  RuntimeHandlers runtimes;  // also says the cgroup driver (systemd_cgroup())
  // With the systemd driver: a container's scope is forgotten once removed (null with cgroupfs).
  std::shared_ptr<SystemdUnits> systemd;
  ContainerImages* images = nullptr;
  ContainerPods* pods = nullptr;
  ContainerEventSink* events = nullptr;  // unset: no events
  CdiRegistry* cdi = nullptr;            // unset: CDI_devices are refused
  // Bytes of containers' output their log files did not take (a full disk), as monitors tell them.
  std::function<void(uint64_t bytes)> on_log_bytes_lost;
  // What containers created from now on get (berth.toml's default_ulimits and
  // device_ownership_from_security_context); a reload sets them again (set_process_defaults).
  ContainerProcessDefaults process_defaults;
  // Plugins' changes to a new container's spec (NRI), after berth built it and before anything is
  // made of it; an error fails the create. Unset: none.
  std::function<Status(const SandboxInfo& pod, const runtime::v1::ContainerConfig& config, const std::string& id,
                       oci::Spec& spec)>
      adjust_spec;
  // Checkpoint and restore: CRIU's probe (null: neither is offered) and berth-checkpoint-archive.
  std::shared_ptr<CriuSupport> criu;
  std::string checkpoint_archive_helper;
};

// What the streaming server and the stats need of a container.
struct ContainerInfo {
  std::string id, sandbox_id;
  runtime::v1::ContainerState state = runtime::v1::CONTAINER_UNKNOWN;
  int pid = 0;
  bool tty = false, stdin = false, stdin_once = false;
  std::string monitor_socket;
  std::string runtime_binary, runtime_root;
  bool systemd_cgroup = false;
  std::string bundle;        // config.json lives here
  std::string cgroups_path;  // as given to the runtime
  std::string upper_dir;     // the writable layer
  std::string log_path;
  std::map<std::string, std::string> labels, annotations;
  std::string image;  // as the config named it
  runtime::v1::ContainerMetadata metadata;
  int64_t created_at = 0;
};

// What the stats read of a container: less than ContainerInfo (no runtime look-up, no paths the
// stats do not read), since kubelet asks for every container's stats every few seconds.
struct ContainerStatsSource {
  runtime::v1::ContainerAttributes attributes;  // id, metadata, labels, annotations
  std::string sandbox_id, cgroups_path, upper_dir, image;
  runtime::v1::ContainerState state = runtime::v1::CONTAINER_UNKNOWN;
};

// An interactive exec (the streaming server's Exec): the caller owns the fds.
struct ExecSessionRequest {
  std::vector<std::string> cmd;
  bool tty = false, stdin = false, stdout = false, stderr = false;
  uint16_t width = 0, height = 0;  // the terminal's first size (tty)
};

struct ExecSession {
  UniqueFd stdin_fd, stdout_fd, stderr_fd;                      // the process's stdio (a pty master's dups with tty)
  UniqueFd done_fd;                                             // readable once the process ended
  std::function<void(uint16_t width, uint16_t height)> resize;  // tty: TIOCSWINSZ, never blocks
  std::function<Result<int>()> wait;                            // its exit code, or the runtime's error
  std::function<void()> kill;                                   // the client left: kill the process
};

struct ExecSyncOutput {
  std::string out, err;
  int exit_code = 0;
};

class ContainerManager {
 public:
  // Loads the records and compares each with its monitor (no runtime is run): a StartContainer
  // cut short is adopted as RUNNING when its monitor runs, or takes the exit the monitor left.
  // Bundles, writable layers and monitor sockets no record owns are removed.
  static Result<std::unique_ptr<ContainerManager>> open(ContainerManagerOptions options);
  ~ContainerManager();

  // The slow part of recovery, run once berthd serves: containers whose pod is gone are removed,
  // and containers that run without a monitor are killed.
  void finish_recovery();

  // A config whose image is an absolute path restores the checkpoint archive there: the container
  // is made from the checkpoint's image with its writable layer, and its start restores it.
  Result<std::string> create(const std::string& sandbox_id, const runtime::v1::ContainerConfig& config);
  Status start(const std::string& id_or_prefix);
  // timeout_seconds 0: SIGKILL at once. Idempotent; an unknown id succeeds.
  Status stop(const std::string& id_or_prefix, int64_t timeout_seconds);
  // A running container is killed first. Idempotent; an unknown id succeeds.
  Status remove(const std::string& id_or_prefix);
  Status status(const std::string& id_or_prefix, bool verbose, runtime::v1::ContainerStatusResponse* out);
  std::vector<runtime::v1::Container> list(const runtime::v1::ContainerFilter& filter);
  Result<ExecSession> exec_session(const std::string& id_or_prefix, const ExecSessionRequest& request);
  Result<ExecSyncOutput> exec_sync(const std::string& id_or_prefix, const std::vector<std::string>& cmd,
                                   int64_t timeout_seconds);
  Status update_resources(const std::string& id_or_prefix, const runtime::v1::LinuxContainerResources& resources);
  Status reopen_log(const std::string& id_or_prefix);
  // CheckpointContainer: a running container's processes (CRIU, through the runtime) and writable
  // layer into a new archive at `location`; the container runs on. timeout_seconds 0: 5 minutes.
  Status checkpoint(const std::string& id_or_prefix, const std::string& location, int64_t timeout_seconds);
  // CRIU's probe as it stands; nullopt when checkpoint/restore is off.
  std::optional<CriuProbeResult> criu_status() const;
  // A reload's defaults, for the containers created after it (those that run keep theirs).
  void set_process_defaults(ContainerProcessDefaults defaults);

  std::vector<std::string> ids_in_sandbox(const std::string& sandbox_id);
  std::optional<ContainerInfo> info(const std::string& id_or_prefix);
  // info() for a request's id: NOT_FOUND, or INVALID_ARGUMENT for a prefix of several containers.
  Result<ContainerInfo> lookup(const std::string& id_or_prefix);
  std::vector<ContainerStatsSource> stats_sources();
  Result<ContainerStatsSource> stats_source(const std::string& id_or_prefix);
  size_t running_count();

  struct Impl;

 private:
  explicit ContainerManager(std::unique_ptr<Impl> impl);
  Result<std::string> create_container(const std::string& sandbox_id, const runtime::v1::ContainerConfig& config,
                                       const RestoreImport* restore);
  std::unique_ptr<Impl> impl_;
};

}  // namespace berth
