// The state SandboxManager's files share (internal to sandbox/): one Sandbox per pod sandbox and
// the manager's index. Locking: Impl::mu guards the index and the names and is never held across
// an exec; Sandbox::op serializes one sandbox's run, stop, remove and undo (held across execs);
// Sandbox::mu guards the fields status and list calls read, so they never wait behind an exec.
#pragma once

#include <atomic>
#include <condition_variable>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "berth/cgroup_limits.h"
#include "berth/mutex.h"
#include "berth/name_reservations.h"
#include "cgroup_parents.h"
#include "berth/oci_runtime.h"
#include "berth/oci_spec.h"
#include "berth/seccomp_filter.h"
#include "berth/sandbox_checkpoint.h"
#include "berth/sandbox_manager.h"
#include "berth/unique_fd.h"

namespace berth {

struct Sandbox {
  // Set before the sandbox is shared, then read-only; cp.phase is changed under op and mu.
  SandboxCheckpoint cp;
  std::string bundle, cgroups_path, shm_path;
  Mutex op;

  mutable Mutex mu;
  std::condition_variable leases_released;
  UniqueFd pidfd BERTH_GUARDED_BY(mu);  // the pause, while it is known to run; tells its death without /proc
  int pid BERTH_GUARDED_BY(mu) = 0;
  bool stopped BERTH_GUARDED_BY(mu) = false;  // every resource released (StopPodSandbox finished)
  bool closing BERTH_GUARDED_BY(mu) = false;  // stop or remove begun: no container may be created or started in it
  bool removed BERTH_GUARDED_BY(mu) = false;  // out of the index: a call that waited for op has nothing left to do
  int leases BERTH_GUARDED_BY(mu) = 0;
  std::vector<std::string> ips BERTH_GUARDED_BY(mu);
  // The CNI CHECK berthd ran when it recovered the pod ("ok" or the error); empty: none ran.
  std::string network_check BERTH_GUARDED_BY(mu);
  // Whether the runtime may hold a container for it: unknown after a restart.
  bool runtime_may_exist BERTH_GUARDED_BY(op) = true;

  // Ready as far as the state says: a pause that started and no stop since (its liveness aside).
  bool pause_expected_locked() const BERTH_REQUIRES(mu) {
    return !stopped && cp.phase == SandboxPhase::ready && pid > 0;
  }
  bool ready_locked() const BERTH_REQUIRES(mu);
  bool ready() const {
    MutexLock lock(mu);
    return ready_locked();
  }
};

struct SandboxManager::Impl {
  SandboxManagerOptions opt;
  Status open_path_to_pod_root(const std::string& bundle, uint32_t root_gid);
  Status set_slice_limits(const std::string& pod_dir, const CgroupLimits& limits);
  std::string pause_rootfs, netns_dir, userns_dir, bundles_dir, checkpoints_dir, quarantine_dir;
  std::once_flag oom_warning;
  Mutex mu;
  std::map<std::string, std::shared_ptr<Sandbox>> sandboxes BERTH_GUARDED_BY(mu);
  NameReservations names;
  std::unique_ptr<CgroupParents> cgroup_parents;  // cgroupfs parents made for pods (not with systemd)
  SeccompProgramCache seccomp_programs;           // the pauses' filters, for berth-pause-launch

  Result<OciRuntime> runtime_for(const std::string& handler) const;
  int oom_score_adj(int wanted);
  std::shared_ptr<Sandbox> find(const std::string& id_or_prefix, Status* err);
  // The sandboxes a list filter selects, each with its readiness (read once, sandbox_views.cc).
  std::vector<std::pair<std::shared_ptr<Sandbox>, bool>> select(const runtime::v1::PodSandboxFilter& f);

  // RunPodSandbox's last step (sandbox_run.cc): berth's own pause through berth-pause-launch where
  // it applies, else the runtime's create and start; sb.pid and sb.pidfd set once it runs.
  Status start_pause(Sandbox& sb, const oci::Spec& spec, const std::string& handler, bool image_pause, OciRuntime& rt)
      BERTH_REQUIRES(sb.op);

  // Recovery (sandbox_recovery.cc).
  void recover();
  // CNI CHECK of every ready pod with a network of its own, once recovered: what changed on the
  // node while berthd was down (a bridge deleted, an interface gone) is logged and shown in the
  // pod's verbose status, without a CHECK on each status call.
  void check_recovered_networks();
  std::atomic<bool> network_checks_stopped{false};
  std::shared_ptr<Sandbox> recovered_sandbox(const SandboxCheckpoint& cp);
  void remove_leftovers();

  // Tear-down (sandbox_teardown.cc); call with s.op held.
  // Marks the sandbox closing and waits until no lease is held.
  void close(Sandbox& s) BERTH_REQUIRES(s.op);
  // Releases every resource (network, runtime container, cgroup, netns, mounts); each step is
  // idempotent, so it also finishes a stop cut short or undoes a half-made sandbox.
  Status release(Sandbox& s) BERTH_REQUIRES(s.op);
  // release(), then the bundle, the checkpoint, the image hold, the index entry and the name.
  Status destroy(Sandbox& s) BERTH_REQUIRES(s.op);
};

std::string sandbox_name_key(const SandboxCheckpoint& cp);

}  // namespace berth
