// Sandbox lifecycle outside RunPodSandbox (sandbox_run.cc): opening the manager, leases, pod
// resource updates and the netns/user namespace paths a pod's root may take. RunPodSandbox records
// the sandbox (phase "creating") before it makes anything, and on any failure releases everything
// through the same destroy() that RemovePodSandbox uses, so an undo can never miss a step a later
// version adds. Recovery, tear-down (stop and remove) and the views (status, list, info) have
// their own files.
#include "berth/sandbox_manager.h"

#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <spdlog/spdlog.h>
#include <system_error>

#include "berth/atomic_file.h"
#include "berth/cgroups_path.h"
#include "berth/fault_point.h"
#include "berth/mutex.h"
#include "berth/object_id.h"
#include "berth/systemd_units.h"
#include "berth/own_privileges.h"
#include "berth/private_dir.h"
#include "berth/process_identity.h"
#include "berth/wall_clock.h"
#include "pod_resources.h"
#include "sandbox_state.h"

namespace berth {

namespace v1 = runtime::v1;
namespace fs = std::filesystem;

bool Sandbox::ready_locked() const {
  if (!pause_expected_locked()) return false;
  return pidfd ? pidfd_alive(pidfd.get()) : process_start_time(pid) != 0;
}

std::string sandbox_name_key(const SandboxCheckpoint& cp) {
  return cp.name + "_" + cp.namespace_ + "_" + cp.uid + "_" + std::to_string(cp.attempt);
}

Result<OciRuntime> SandboxManager::Impl::runtime_for(const std::string& handler) const {
  return opt.runtimes.runtime_for(handler);
}

int SandboxManager::Impl::oom_score_adj(int wanted) {
  int floor = own_privileges().oom_floor();
  if (wanted >= floor) return wanted;
  std::call_once(oom_warning, [&] {
    spdlog::warn("berthd lacks CAP_SYS_RESOURCE: OOM score adjustments below its own ({}) are raised to {}", floor,
                 floor);
  });
  return floor;
}

std::shared_ptr<Sandbox> SandboxManager::Impl::find(const std::string& id_or_prefix, Status* err) {
  MutexLock lock(mu);
  return find_by_id_or_prefix(sandboxes, id_or_prefix, "pod sandbox", "pod_sandbox_id", err);
}

SandboxManager::SandboxManager(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
SandboxManager::~SandboxManager() = default;

Result<std::unique_ptr<SandboxManager>> SandboxManager::open(SandboxManagerOptions options) {
  auto impl = std::make_unique<Impl>();
  impl->opt = std::move(options);
  impl->pause_rootfs = impl->opt.state_dir + "/pause/rootfs";
  impl->netns_dir = impl->opt.state_dir + "/netns";
  impl->userns_dir = impl->opt.state_dir + "/userns";
  impl->bundles_dir = impl->opt.state_dir + "/sandboxes";
  impl->checkpoints_dir = impl->opt.root_dir + "/sandboxes";
  impl->quarantine_dir = impl->opt.root_dir + "/sandboxes-quarantine";
  std::error_code ec;
  for (const auto& d :
       {impl->netns_dir, impl->userns_dir, impl->bundles_dir, impl->checkpoints_dir, impl->opt.state_dir + "/pause"})
    if (Status s = make_private_dir(d); !s.ok()) return s.context("sandboxes");
  // The pause rootfs: berth-pause and the mount points runc needs, shared read-only by every pause.
  for (const char* d : {"", "/proc", "/dev", "/sys", "/etc"}) fs::create_directories(impl->pause_rootfs + d, ec);
  // Copied then renamed into place: pauses of recovered sandboxes may be running the old file.
  if (Status s = copy_file_atomically(impl->opt.pause_binary, impl->pause_rootfs + "/pause", 0755); !s.ok())
    return s.context("sandboxes: install pause binary " + impl->opt.pause_binary);

  impl->cgroup_parents =
      std::make_unique<CgroupParents>(impl->opt.root_dir + "/cgroup-parents.json", impl->opt.systemd.get());
  impl->recover();
  return std::unique_ptr<SandboxManager>(new SandboxManager(std::move(impl)));
}

Result<SandboxLease> SandboxManager::lease(const std::string& id_or_prefix) {
  Status err;
  auto s = impl_->find(id_or_prefix, &err);
  if (!s) return err;
  {
    MutexLock lock(s->mu);
    if (s->closing || s->removed)
      return failed_precondition("pod sandbox " + s->cp.id + " is being stopped or removed");
    if (!s->ready_locked()) return failed_precondition("pod sandbox " + s->cp.id + " is not ready");
    ++s->leases;
  }
  auto inf = info(s->cp.id);
  std::shared_ptr<void> hold(nullptr, [s](void*) {
    MutexLock lock(s->mu);
    if (--s->leases == 0) s->leases_released.notify_all();
  });
  if (!inf) return not_found("pod sandbox " + id_or_prefix + " not found");
  return SandboxLease{*inf, std::move(hold)};
}

// Under systemd the limits are the slice's properties first, so systemd keeps them (it writes a
// unit's own settings again at every daemon-reload).
Status SandboxManager::Impl::set_slice_limits(const std::string& pod_dir, const CgroupLimits& limits) {
  if (!opt.systemd) return ok_status();
  auto props = unit_properties(limits, host_cgroup_v2());
  if (!props.ok()) return props.status();
  return opt.systemd->set_properties(pod_dir.substr(pod_dir.rfind('/') + 1), *props);
}

Status SandboxManager::update_resources(const std::string& id_or_prefix, const v1::LinuxContainerResources& overhead,
                                        const v1::LinuxContainerResources& resources) {
  auto limits = pod_cgroup_limits(overhead, resources);
  if (!limits.ok()) return limits.status();
  Status err;
  auto s = impl_->find(id_or_prefix, &err);
  if (!s) return err;
  MutexLock op(s->op);
  const std::string what = "update resources of pod sandbox " + s->cp.id;
  if (!s->ready()) return failed_precondition(what + ": it is not ready");
  // Without a parent of its own the pod shares berth's default cgroup with every other such pod.
  if (s->cp.cgroup_parent.empty())
    return failed_precondition(what + ": it has no cgroup of its own (linux.cgroup_parent is unset)");
  std::string pause_dir = cgroup_dir_of(s->cgroups_path, impl_->opt.runtimes.systemd_cgroup());
  std::string pod_dir = pause_dir.substr(0, pause_dir.rfind('/'));
  // kubelet has already set the pod cgroup it made (and decides whether it has a limit at all):
  // the call informs. Only a pod cgroup berth made for the pod is berth's to resize.
  if (impl_->cgroup_parents->made(pod_dir)) {
    if (Status w = impl_->set_slice_limits(pod_dir, *limits); !w.ok()) return w.context(what);
    if (Status w = write_cgroup_limits(pod_dir, *limits, host_cgroup_v2()); !w.ok()) return w.context(what);
  } else {
    spdlog::debug("sandboxes: {}: recorded; its cgroup {} is not berth's to write", what, pod_dir);
  }
  SandboxCheckpoint cp;
  {
    MutexLock lock(s->mu);
    s->cp.resources = cgroup_limits_json(*limits).dump();
    cp = s->cp;
  }
  return write_checkpoint(impl_->checkpoints_dir, cp, false).context(what);
}

// The runtime starts a userns pod's pause, and its containers, as the pod's root, an unprivileged
// id on the node: the dirs on the way to the rootfs and the pod's files must let it through. The
// shared ones become 0711 (traversable, not listable), as containerd's are; the pod's bundle, which
// holds its /dev/shm and files, only root's and the pod's root group's (0710, root:<group>), so no
// other user of the node reaches what the pod keeps there.
Status SandboxManager::Impl::open_path_to_pod_root(const std::string& bundle, uint32_t root_gid) {
  for (const std::string& d : {opt.state_dir, opt.state_dir + "/pause", bundles_dir})
    if (::chmod(d.c_str(), 0711) != 0) return errno_status(errno, "chmod 0711 " + d);
  if (::chown(bundle.c_str(), 0, root_gid) != 0) return errno_status(errno, "chown " + bundle);
  if (::chmod(bundle.c_str(), 0710) != 0) return errno_status(errno, "chmod 0710 " + bundle);
  return ok_status();
}

void SandboxManager::finish_recovery() {
  std::vector<std::shared_ptr<Sandbox>> pending;
  {
    MutexLock lock(impl_->mu);
    for (const auto& [id, s] : impl_->sandboxes)
      if (s->cp.phase == SandboxPhase::creating) pending.push_back(s);
  }
  for (const auto& s : pending) {
    MutexLock op(s->op);
    {
      MutexLock lock(s->mu);
      if (s->removed) continue;
    }
    fault_point(FaultPoint::recovery_undoing_sandbox);
    if (Status st = impl_->destroy(*s); !st.ok())
      spdlog::error("sandbox {}: undo of a run cut short failed (left NOTREADY for stop/remove): {}", s->cp.id,
                    st.message());
    else
      spdlog::info("sandbox {}: undid a RunPodSandbox cut short by a berthd restart", s->cp.id);
  }
}

void SandboxManager::check_recovered_networks() { impl_->check_recovered_networks(); }

void SandboxManager::stop_network_checks() { impl_->network_checks_stopped = true; }

}  // namespace berth
