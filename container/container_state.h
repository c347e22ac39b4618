// The state ContainerManager's files share (internal to container/): one Container per container,
// and the manager's index. Locking: Impl::mu guards the index and names and is never held across
// an exec; Container::op serializes one container's lifecycle calls (held across execs);
// Container::mu guards its record and is the only lock the exit path takes, so an exit is
// recorded while a stop waits for it.
#pragma once

#include <atomic>
#include <condition_variable>
#include <map>
#include <memory>
#include <mutex>
#include <optional>

#include "berth/container_manager.h"
#include "berth/container_record.h"
#include "berth/cri_messages.h"
#include "berth/monitor.h"
#include "berth/monitor_watcher.h"
#include "berth/oci_spec.h"
#include "berth/mutex.h"
#include "berth/name_reservations.h"
#include "exec_helper.h"
#include "image_volumes.h"
#include "berth/oci_runtime.h"
#include "serial_worker.h"

namespace berth {

struct Container {
  // Set when the container is made or recovered, before it is shared, then read-only (rec holds
  // them too, under mu).
  std::string id, sandbox_id, runtime_handler;
  Mutex op;
  mutable Mutex mu;
  std::condition_variable exited;  // notified (under mu) when rec.state becomes EXITED
  ContainerRecord rec BERTH_GUARDED_BY(mu);
  runtime::v1::ContainerConfig config BERTH_GUARDED_BY(mu);  // resources change
  std::string bundle, rootfs, upper, work, socket, exit_file, cgroups_path;
  int stop_signal = 15;
  bool removed BERTH_GUARDED_BY(mu) = false;
  std::atomic<bool> checkpointing{false};            // one CheckpointContainer at a time
  uint64_t log_bytes_lost BERTH_GUARDED_BY(mu) = 0;  // as the monitor last told (on_log_loss)
  bool log_losing BERTH_GUARDED_BY(mu) = false;      // the monitor repeats it while it lasts
  // Whether the runtime may hold state for it: false from CreateContainer until StartContainer
  // spawns its monitor; true after a restart, when that is not known.
  bool runtime_may_exist BERTH_GUARDED_BY(op) = true;
  // The runtime's delete at the exit did not finish in the handler's timeout: the removal does
  // the delete's work itself rather than wait as long again.
  bool runtime_hung BERTH_GUARDED_BY(op) = false;
  // runc's delete of it, once its init ended, is what berthd does itself at the exit (see
  // delete_exited_runtime): the runtime is runc and the spec has no poststop hooks for it to run.
  // Set at create; false for a recovered container (the runtime's own delete then).
  bool exit_delete_in_process BERTH_GUARDED_BY(op) = false;

  runtime::v1::ContainerState state() const {
    MutexLock lock(mu);
    return static_cast<runtime::v1::ContainerState>(rec.state);
  }
};

// A checkpoint archive unpacked for a restore (container_checkpoint.cc): its dir goes once the
// container is made or refused.
struct RestoreImport {
  std::string dir;  // <state>/restores/<name>: checkpoint/, rootfs-diff.tar, deleted.files, ...
  std::string base_image;
};

struct ContainerManager::Impl {
  ContainerManagerOptions opt;
  std::string containers_state, monitors_dir, layers_dir, records_dir, quarantine_dir;
  std::string checkpoints_dir, restores_dir;  // <state>/checkpoints, <state>/restores
  Mutex mu;
  std::map<std::string, std::shared_ptr<Container>> containers BERTH_GUARDED_BY(mu);
  NameReservations names;  // sandbox id + name + attempt -> id
  std::unique_ptr<MonitorWatcher> watcher;
  // Deletes the runtime's state of containers that exited (on_exit posts), as containerd deletes
  // a task at its exit: RemoveContainer then has no runtime exec left to wait for.
  std::unique_ptr<SerialWorker> exited_deletes;
  std::unique_ptr<ImageVolumes> volumes;  // <state>/image-volumes
  ExecHelperBinary exec_helper;
  SeccompProgramCache seccomp_programs;
  // Recovered containers whose pod is gone, or that run without a monitor: finish_recovery's work.
  std::vector<std::string> orphans BERTH_GUARDED_BY(mu), unmonitored BERTH_GUARDED_BY(mu);
  // opt's default_rlimits and device_ownership_from_security_context as a reload set them last.
  ContainerProcessDefaults process_defaults BERTH_GUARDED_BY(mu);

  Result<OciRuntime> runtime_for(const std::string& handler) const;
  // Recovery (container_recovery.cc): records back into the index, checked against the monitors.
  void recover();
  // A CREATED record whose StartContainer a crash cut short: adopts a running monitor, or takes
  // the exit it left, or stays CREATED. Returns true when the container is to be watched.
  // `monitor_lost`: the runtime runs it but no monitor holds it (finish_recovery kills it).
  bool settle_created(Container& c, bool* monitor_lost) BERTH_REQUIRES(c.op, c.mu);
  void remove_leftovers();
  // Every resource of a container, whatever its state (container_remove.cc); call with c.op held.
  Status destroy(Container& c) BERTH_REQUIRES(c.op);
  // Named by the first 128 bits of the id, to keep the path short.
  std::string monitor_socket(const std::string& id) const { return monitors_dir + "/" + id.substr(0, 32) + ".sock"; }
  std::shared_ptr<Container> find(const std::string& id_or_prefix, Status* err);
  void emit(const Container& c, runtime::v1::ContainerEventType type) const;
  // The exit path: records the exit once (reason from the exit code and the cgroup's OOM count).
  void on_exit(const std::string& id, const ExitInfo& exit);
  // The monitor's word that the container's log file stopped or started again taking its output.
  void on_log_loss(const std::string& id, const MonitorWatcher::LogLoss& loss);
  // The runtime's plain delete of an exited container, under its op; on failure, or when it did
  // not run, destroy() deletes it as before.
  void delete_exited_runtime(Container& c);
  void delete_exited_runtime_locked(Container& c) BERTH_REQUIRES(c.op);
  void finish_exit_in_process(Container& c) BERTH_REQUIRES(c.op);
  void release_rootfs_at_exit(Container& c) BERTH_REQUIRES(c.op);
  Status save(Container& c) const BERTH_REQUIRES(c.mu);  // writes c.rec
  // Kills (SIGKILL) a running container and waits for its exit to be recorded.
  Status kill_and_wait(Container& c, std::chrono::seconds timeout);
  bool wait_exited(Container& c, std::chrono::milliseconds timeout) const;
  // ExecSync through berth-exec (container_exec.cc); nullopt when it does not apply (no helper,
  // a spec it does not do, an init it cannot join): the runtime's exec runs instead.
  Result<std::optional<ExecSyncOutput>> exec_with_helper(const Container& c, const oci::Spec& spec,
                                                         const std::vector<std::string>& cmd, int64_t timeout_seconds);
};

Result<RestoreImport> import_checkpoint(const ContainerManager::Impl& impl, const std::string& archive);
// One step of berth-checkpoint-archive; its exit status as a Status (2: the input is refused,
// INVALID_ARGUMENT; 3: no space), the helper's complaint in the message after `what`.
Status run_archive_helper(const std::string& helper, std::vector<std::string> args, std::chrono::milliseconds timeout,
                          const std::string& what);
// The same from an image whose layers hold a checkpoint's files (buildah's way: the archive added
// to an empty image), found by the annotations CRI-O and containerd look for.
Result<RestoreImport> import_checkpoint_image(const ContainerManager::Impl& impl, const std::string& image,
                                              const std::vector<std::string>& snapshot_dirs);
bool is_checkpoint_image(const std::map<std::string, std::string>& annotations);
// What a checkpoint or a restore cut short by a crash left: work dirs and temp archives. Returns
// the id prefixes (12 hex) of the containers whose checkpoint was cut short.
std::vector<std::string> sweep_checkpoint_leftovers(const std::string& checkpoints_dir,
                                                    const std::string& restores_dir);
// A dump cut short (berthd killed, and the runtime and CRIU with it) can leave the container's
// cgroup frozen: those of `prefixes` that the runtime says are paused are resumed (CRI has no
// pause, so berth never leaves one paused on purpose).
void thaw_cut_checkpoints(ContainerManager::Impl& impl, const std::vector<std::string>& prefixes);
// Resumes a container the runtime says is paused (CRI has no pause: CRIU, or a hand, froze it);
// `why` is logged with it.
void thaw_if_paused(const OciRuntime& rt, const std::string& id, const std::string& why);

std::string name_key(const std::string& sandbox_id, const runtime::v1::ContainerMetadata& m);
// The config as records keep it (serialized protobuf, base64), and back.
Result<nlohmann::json> config_to_json(const runtime::v1::ContainerConfig& config);
bool config_from_json(const nlohmann::json& j, runtime::v1::ContainerConfig* config);
// The config's stop signal when it names one, else the image's; SIGTERM by default.
int stop_signal_of(const runtime::v1::ContainerConfig& c, const std::string& image_stop_signal);

}  // namespace berth
