// Named fault points: places in a multi-step operation where a test can make berthd die at once
// (SIGKILL to itself, as the OOM killer or a systemd timeout would), to prove that recovery
// finishes or undoes the operation and that nothing leaks. A test arms one point through the
// environment of the berthd it starts:
//   BERTH_FAULT_POINT=<name>        die the first time <name> is reached
//   BERTH_FAULT_POINT=<name>:<n>    die the n-th time
// The whole list lives here, so a test can cover every point. Builds configured with
// -DBERTH_FAULT_POINTS=OFF (the Debian package) compile the points out.
#pragma once

namespace berth {

// X(name, rpc): rpc is the CRI call (or "Recovery") during which the point is first reached in
// kubelet's order of calls (atomic_write_temp_written is in every durable write; the first is the
// pulled image's index). "CheckpointContainer" and "Restore" (a CreateContainer whose image is a
// checkpoint) are not in that life: they need CRIU, and their crash test runs where it works.
#define BERTH_FAULT_POINTS_LIST(X)                             \
  X(run_pod_sandbox_checkpoint_created, "RunPodSandbox")       \
  X(run_pod_sandbox_bundle_made, "RunPodSandbox")              \
  X(run_pod_sandbox_shm_mounted, "RunPodSandbox")              \
  X(run_pod_sandbox_netns_pinned, "RunPodSandbox")             \
  X(run_pod_sandbox_files_written, "RunPodSandbox")            \
  X(run_pod_sandbox_spec_written, "RunPodSandbox")             \
  X(run_pod_sandbox_runtime_created, "RunPodSandbox")          \
  X(run_pod_sandbox_runtime_started, "RunPodSandbox")          \
  X(run_pod_sandbox_cni_entry_saved, "RunPodSandbox")          \
  X(run_pod_sandbox_cni_plugin_added, "RunPodSandbox")         \
  X(run_pod_sandbox_network_ready, "RunPodSandbox")            \
  X(run_pod_sandbox_ready_recorded, "RunPodSandbox")           \
  X(create_container_name_reserved, "CreateContainer")         \
  X(create_container_dirs_made, "CreateContainer")             \
  X(create_container_rootfs_mounted, "CreateContainer")        \
  X(create_container_image_volumes_mounted, "CreateContainer") \
  X(create_container_mounts_prepared, "CreateContainer")       \
  X(create_container_spec_written, "CreateContainer")          \
  X(create_container_log_created, "CreateContainer")           \
  X(create_container_record_written, "CreateContainer")        \
  X(start_container_monitor_spawning, "StartContainer")        \
  X(start_container_monitor_forked, "StartContainer")          \
  X(start_container_monitor_listening, "StartContainer")       \
  X(start_container_runtime_started, "StartContainer")         \
  X(start_container_running_recorded, "StartContainer")        \
  X(stop_container_signal_sent, "StopContainer")               \
  X(stop_container_exit_recorded, "StopContainer")             \
  X(remove_container_killed, "RemoveContainer")                \
  X(remove_container_runtime_deleted, "RemoveContainer")       \
  X(remove_container_rootfs_unmounted, "RemoveContainer")      \
  X(remove_container_dirs_removed, "RemoveContainer")          \
  X(remove_container_record_removed, "RemoveContainer")        \
  X(stop_pod_sandbox_containers_stopped, "StopPodSandbox")     \
  X(stop_pod_sandbox_network_torn_down, "StopPodSandbox")      \
  X(stop_pod_sandbox_pause_killed, "StopPodSandbox")           \
  X(stop_pod_sandbox_runtime_deleted, "StopPodSandbox")        \
  X(stop_pod_sandbox_cgroup_removed, "StopPodSandbox")         \
  X(stop_pod_sandbox_netns_unpinned, "StopPodSandbox")         \
  X(stop_pod_sandbox_mounts_released, "StopPodSandbox")        \
  X(stop_pod_sandbox_stopped_recorded, "StopPodSandbox")       \
  X(remove_pod_sandbox_containers_removed, "RemovePodSandbox") \
  X(remove_pod_sandbox_stopped, "RemovePodSandbox")            \
  X(remove_pod_sandbox_files_removed, "RemovePodSandbox")      \
  X(remove_pod_sandbox_checkpoint_removed, "RemovePodSandbox") \
  X(pull_image_manifest_fetched, "PullImage")                  \
  X(pull_image_blob_stored, "PullImage")                       \
  X(pull_image_layer_unpacking, "PullImage")                   \
  X(pull_image_layer_unpacked, "PullImage")                    \
  X(pull_image_recorded, "PullImage")                          \
  X(atomic_write_temp_written, "PullImage")                    \
  X(recovery_undoing_sandbox, "Recovery")                      \
  X(recovery_removing_container, "Recovery")                   \
  X(checkpoint_container_dumped, "CheckpointContainer")        \
  X(checkpoint_container_files_written, "CheckpointContainer") \
  X(checkpoint_container_packed, "CheckpointContainer")        \
  X(restore_archive_unpacked, "Restore")                       \
  X(restore_layer_applied, "Restore")

enum class FaultPoint {
#define BERTH_FAULT_POINT_ENUM(name, rpc) name,
  BERTH_FAULT_POINTS_LIST(BERTH_FAULT_POINT_ENUM)
#undef BERTH_FAULT_POINT_ENUM
};

#ifdef BERTH_FAULT_POINTS
// Dies here (SIGKILL to the whole process) when this point is the armed one and its hit count is
// reached; otherwise a load of a cached value and a compare.
void fault_point(FaultPoint point);
#else
inline void fault_point(FaultPoint) {}
#endif

}  // namespace berth
