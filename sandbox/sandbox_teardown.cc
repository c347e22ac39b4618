// Stopping and removing sandboxes, and the undo of a RunPodSandbox that failed or was cut short by
// a crash: all three run release(), whose steps are each idempotent and run whatever the state,
// so a sandbox half made, half stopped, recovered with its pause dead or its netns already gone
// always ends with nothing left. A step that fails is logged with its name and the sandbox, and
// the call fails: kubelet calls again, and the steps already done are no-ops the next time.
// The pause is killed through its pidfd and its end seen on the pidfd, so the runtime's delete is
// a plain one: `delete --force` would sleep in 100 ms steps until the pause was gone.
#include <poll.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <spdlog/spdlog.h>

#include "berth/cgroup_removal.h"
#include "berth/cgroups_path.h"
#include "berth/fault_point.h"
#include "berth/file_tree.h"
#include "berth/mutex.h"
#include "berth/systemd_units.h"
#include "netns.h"
#include "pod_mounts.h"
#include "sandbox_state.h"

namespace berth {

namespace fs = std::filesystem;

namespace {

// How long a SIGKILLed pause may take to end before the runtime's forced delete takes over. A
// pause that is the init of its own PID namespace ends only after every process in it; its
// containers are stopped before, so this is a bound for a host in trouble, not a usual wait.
constexpr std::chrono::seconds kPauseExitWait{10};

Status failed_step(const Sandbox& s, const char* step, const Status& st) {
  spdlog::error("sandbox {}: release step '{}' failed: {}", s.cp.id, step, st.message());
  return st.context("release sandbox " + s.cp.id + ": " + step);
}

// SIGKILL through the pidfd; true when it was sent or the pause had already ended (ESRCH).
bool kill_through_pidfd(const Sandbox& s, pid_t pid, int pidfd) {
  if (::syscall(SYS_pidfd_send_signal, pidfd, SIGKILL, nullptr, 0) == 0 || errno == ESRCH) return true;
  spdlog::warn("sandbox {}: SIGKILL of the pause {} through its pidfd: {}; the runtime will kill it", s.cp.id, pid,
               std::strerror(errno));
  return false;
}

// Waits until the pidfd is readable (the process has ended), up to `timeout`.
bool wait_ended(int pidfd, std::chrono::milliseconds timeout) {
  auto deadline = std::chrono::steady_clock::now() + timeout;
  for (;;) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
    pollfd p{pidfd, POLLIN, 0};
    int r = ::poll(&p, 1, static_cast<int>(std::max<long long>(left.count(), 0)));
    if (r > 0) return true;
    if (r == 0 || errno != EINTR) return false;
  }
}

// The runtime's container of the pause goes with a plain delete once the pidfd told that the
// pause ended (`killed`: the SIGKILL went through its pidfd); otherwise (no pidfd: a recovered
// sandbox whose pause could not be identified, a create that never started) or when the plain
// delete is refused, with the runtime's forced delete.
Status delete_pause_container(const Sandbox& s, const OciRuntime& rt, bool killed, pid_t pid, int pidfd) {
  if (killed) {
    if (wait_ended(pidfd, kPauseExitWait)) {
      Status st = rt.remove_stopped(s.cp.id);
      if (st.ok()) return st;
      spdlog::warn("sandbox {}: the runtime refused to delete the ended pause: {}; deleting it by force", s.cp.id,
                   st.message());
    } else {
      spdlog::error("sandbox {}: the pause {} did not end within {}s of SIGKILL; deleting it by force", s.cp.id, pid,
                    kPauseExitWait.count());
    }
  }
  return rt.remove(s.cp.id);
}

}  // namespace

void SandboxManager::Impl::close(Sandbox& s) {
  MutexLock lock(s.mu);
  s.closing = true;
  while (s.leases != 0) s.leases_released.wait(lock.native());
}

Status SandboxManager::Impl::release(Sandbox& s) {
  const SandboxCheckpoint& cp = s.cp;
  // CNI DEL first, while the netns still exists. It also runs for a sandbox whose ADD never
  // began (a no-op without a cache entry), so an ADD cut short by a crash is released too.
  // Killing the pause before DEL would be safe (the netns is pinned by its bind mount, not held
  // by the pause) but measured no faster (the pause ends well within a millisecond of SIGKILL),
  // and a stop whose DEL fails would then leave a NOTREADY pod: this order leaves it READY and
  // whole for kubelet's next StopPodSandbox.
  if (!cp.host_network && opt.network) {
    if (Status st = opt.network->teardown(cp.id, cp.netns_path); !st.ok()) return failed_step(s, "network", st);
    MutexLock lock(s.mu);
    s.ips.clear();
  }
  fault_point(FaultPoint::stop_pod_sandbox_network_torn_down);
  // The pidfd is set and reset only under op, which the caller holds: it stays open past mu.
  pid_t pid = 0;
  int pidfd = -1;
  {
    MutexLock lock(s.mu);
    pid = s.pid;
    pidfd = s.pidfd.get();
  }
  bool killed = pidfd >= 0 && kill_through_pidfd(s, pid, pidfd);
  fault_point(FaultPoint::stop_pod_sandbox_pause_killed);
  // A pause berth-pause-launch started has no runtime state: its end is seen on the pidfd, and
  // the cgroup's removal below takes whatever is left.
  if (!s.runtime_may_exist && killed && !wait_ended(pidfd, kPauseExitWait))
    spdlog::error("sandbox {}: the pause {} did not end within {}s of SIGKILL; its cgroup's removal kills it", s.cp.id,
                  pid, kPauseExitWait.count());
  if (s.runtime_may_exist) {
    auto rt = runtime_for(cp.runtime_handler);
    if (!rt.ok()) return failed_step(s, "runtime", rt.status());
    if (Status st = delete_pause_container(s, *rt, killed, pid, pidfd); !st.ok()) return failed_step(s, "runtime", st);
    s.runtime_may_exist = false;
  }
  fault_point(FaultPoint::stop_pod_sandbox_runtime_deleted);
  // The runtime's delete removes the cgroup; one it lost (a create killed midway) is removed here,
  // with whatever process it still holds (a `runc init` blocked for good).
  // Under systemd the pause's scope is then stopped (the runtime's delete stops its own scope): it
  // has nothing left to kill, and a scope that ended failed is forgotten.
  if (!s.cgroups_path.empty()) {
    const bool systemd = opt.runtimes.systemd_cgroup();
    if (Status st = remove_cgroup(s.cgroups_path, systemd); !st.ok()) return failed_step(s, "cgroup", st);
    if (systemd && opt.systemd)
      if (Status st = opt.systemd->stop_unit(systemd_cgroup_of(s.cgroups_path).scope); !st.ok())
        return failed_step(s, "cgroup", st);
    cgroup_parents->release(cgroup_dir_of(s.cgroups_path, systemd));
  }
  fault_point(FaultPoint::stop_pod_sandbox_cgroup_removed);
  if (Status st = remove_pinned_netns(cp.netns_path); !st.ok()) return failed_step(s, "netns", st);
  if (Status st = remove_namespace_pin(cp.userns_path); !st.ok()) return failed_step(s, "userns", st);
  fault_point(FaultPoint::stop_pod_sandbox_netns_unpinned);
  if (Status st = unmount_path(s.bundle + "/rootfs"); !st.ok()) return failed_step(s, "rootfs", st);
  if (cp.ipc_mode != runtime::v1::NODE)
    if (Status st = unmount_path(s.bundle + "/shm"); !st.ok()) return failed_step(s, "shm", st);
  fault_point(FaultPoint::stop_pod_sandbox_mounts_released);
  MutexLock lock(s.mu);
  s.stopped = true;
  s.pidfd.reset();
  s.pid = 0;
  return ok_status();
}

Status SandboxManager::Impl::destroy(Sandbox& s) {
  close(s);
  bool stopped;
  {
    MutexLock lock(s.mu);
    stopped = s.stopped;
  }
  if (!stopped)
    if (Status st = release(s); !st.ok()) return st;
  fault_point(FaultPoint::remove_pod_sandbox_stopped);
  // Its containers are gone now: parents made for the pod that they kept busy at stop can go.
  if (!s.cgroups_path.empty()) cgroup_parents->release(cgroup_dir_of(s.cgroups_path, opt.runtimes.systemd_cgroup()));
  // Stopped in an earlier life of berthd: its mounts went then, but unmounting again is cheap and
  // is belt and braces: remove_tree refuses to cross a mount anyway.
  for (const char* m : {"/shm", "/rootfs"})
    if (Status st = unmount_path(s.bundle + m); !st.ok()) return failed_step(s, "mounts", st);
  if (Status st = remove_tree(s.bundle); !st.ok()) return failed_step(s, "files", st);
  fault_point(FaultPoint::remove_pod_sandbox_files_removed);
  if (Status st = remove_checkpoint(checkpoints_dir, s.cp.id); !st.ok()) return failed_step(s, "checkpoint", st);
  fault_point(FaultPoint::remove_pod_sandbox_checkpoint_removed);
  if (!s.cp.image_id.empty() && opt.images) opt.images->release(s.cp.image_id);
  {
    MutexLock lock(s.mu);
    s.removed = true;
  }
  MutexLock lock(mu);
  if (auto it = sandboxes.find(s.cp.id); it != sandboxes.end() && it->second.get() == &s) sandboxes.erase(it);
  names.release(sandbox_name_key(s.cp), s.cp.id);
  return ok_status();
}

Status SandboxManager::stop(const std::string& id_or_prefix, const SandboxContainersStep& containers) {
  Status err;
  auto s = impl_->find(id_or_prefix, &err);
  if (!s) return err.code() == Code::not_found ? ok_status() : err;  // CRI: an unknown sandbox is stopped
  MutexLock op(s->op);
  {
    MutexLock lock(s->mu);
    if (s->removed) return ok_status();
  }
  impl_->close(*s);
  if (containers)
    if (Status st = containers(s->cp.id); !st.ok()) return st.context("stop sandbox " + s->cp.id);
  fault_point(FaultPoint::stop_pod_sandbox_containers_stopped);
  {
    MutexLock lock(s->mu);
    if (s->stopped) return ok_status();
  }
  if (Status st = impl_->release(*s); !st.ok()) return st;
  SandboxCheckpoint cp;
  {
    MutexLock lock(s->mu);
    s->cp.phase = SandboxPhase::stopped;
    cp = s->cp;
  }
  // Not fsync'd: lost in a power cut, the phase is moot (nothing of the pod runs after a reboot).
  if (Status st = write_checkpoint(impl_->checkpoints_dir, cp, false); !st.ok())
    spdlog::warn("sandbox {}: recording the stop: {}", cp.id, st.message());
  fault_point(FaultPoint::stop_pod_sandbox_stopped_recorded);
  return ok_status();
}

Status SandboxManager::remove(const std::string& id_or_prefix, const SandboxContainersStep& containers) {
  Status err;
  auto s = impl_->find(id_or_prefix, &err);
  if (!s) return err.code() == Code::not_found ? ok_status() : err;
  MutexLock op(s->op);
  {
    MutexLock lock(s->mu);
    if (s->removed) return ok_status();
  }
  impl_->close(*s);
  if (containers)
    if (Status st = containers(s->cp.id); !st.ok()) return st.context("remove sandbox " + s->cp.id);
  fault_point(FaultPoint::remove_pod_sandbox_containers_removed);
  return impl_->destroy(*s).context("remove sandbox " + s->cp.id);
}

}  // namespace berth
