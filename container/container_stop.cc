// Stopping containers and recording their exits. A stop sends the stop signal to the container's
// init, waits for the monitor to report the exit, then sends SIGKILL; the exit itself is recorded
// only by on_exit (called on the MonitorWatcher's thread), so every ending is recorded the same
// way, and the runtime's state of an exited container is deleted then, on a worker. Signals go
// through a pidfd of the init, as `runc kill` (without --all) would send them, without a runtime
// exec; the runtime is asked only when the init cannot be told apart.
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <csignal>

#include <spdlog/spdlog.h>

#include "berth/cgroup_removal.h"
#include "berth/cgroups_path.h"
#include "berth/container_rootfs.h"
#include "berth/fault_point.h"
#include "berth/monitor.h"
#include "berth/mutex.h"
#include "berth/process_identity.h"
#include "berth/wall_clock.h"
#include "container_state.h"

namespace berth {

namespace v1 = runtime::v1;

namespace {

// `signal` to the container's init through a pidfd, only while its pid names a process in the
// container's own cgroup (checked after the pidfd is open: a pid recycled after the init's exit
// names a stranger, outside that cgroup, or at worst another process of the container being
// stopped). False when it was not sent: no pid known, the process gone, or not the container's;
// the caller then asks the runtime.
bool signal_init(const Container& c, int signal) {
  pid_t pid;
  {
    MutexLock lock(c.mu);
    pid = c.rec.pid;
  }
  if (pid <= 0) return false;
  UniqueFd fd = open_pidfd(pid);
  if (!fd || !process_in_cgroup_leaf(pid, c.id)) return false;
  return ::syscall(SYS_pidfd_send_signal, fd.get(), signal, nullptr, 0) == 0;
}

// The signal through the pidfd, else through the runtime's kill.
Status send_signal(const Container& c, const OciRuntime& rt, int signal) {
  if (signal_init(c, signal)) return ok_status();
  return rt.kill(c.id, signal);
}

}  // namespace

void ContainerManager::Impl::on_exit(const std::string& id, const ExitInfo& exit) {
  std::shared_ptr<Container> c;
  {
    MutexLock lock(mu);
    auto it = containers.find(id);
    if (it == containers.end()) return;
    c = it->second;
  }
  {
    MutexLock lock(c->mu);
    if (c->removed || c->rec.state == v1::CONTAINER_EXITED) return;
    c->rec.state = v1::CONTAINER_EXITED;
    c->rec.exit_code = exit.exit_code < 0 ? 128 : exit.exit_code;
    c->rec.finished_at = exit.exited_at_ns ? exit.exited_at_ns : wall_clock_ns();
    if (c->rec.started_at == 0) c->rec.started_at = c->rec.finished_at;
    if (exit.exit_code == kUnknownExitCode && exit.signal == 0 && !exit.reason.empty()) {
      c->rec.reason = "Unknown";
      c->rec.message = exit.reason;
    } else if (cgroup_oom_kills(cgroup_dir_of(c->cgroups_path, opt.runtimes.systemd_cgroup())) > 0) {
      c->rec.reason = "OOMKilled";
    } else {
      c->rec.reason = c->rec.exit_code == 0 ? "Completed" : "Error";
    }
    if (Status s = save(*c); !s.ok()) spdlog::error("container {}: {}", id, s.message());
    c->exited.notify_all();
  }
  spdlog::debug("container {} exited with {} ({})", id, exit.exit_code, exit.reason);
  emit(*c, v1::CONTAINER_STOPPED_EVENT);
  if (exited_deletes) exited_deletes->post([this, c] { delete_exited_runtime(*c); });
}

void ContainerManager::Impl::delete_exited_runtime(Container& c) {
  MutexLock op(c.op);  // after the StopContainer that saw this exit, before a RemoveContainer
  delete_exited_runtime_locked(c);
}

void ContainerManager::Impl::delete_exited_runtime_locked(Container& c) {
  if (!c.runtime_may_exist) return;
  {
    MutexLock lock(c.mu);
    if (c.removed || c.rec.state != v1::CONTAINER_EXITED) return;
  }
  auto rt = runtime_for(c.runtime_handler);
  if (!rt.ok()) return;
  // runc's delete of a container whose init ended (libcontainer's destroy of a stopped one) kills
  // what is left in its cgroup, removes the cgroup and the container's state dir, then runs
  // poststop hooks: without hooks berthd does the same here, about 1 ms against 20-30 ms for
  // exec'ing runc, which RemoveContainer right after StopContainer (kubelet, crictl rm -f)
  // would otherwise wait for. A step that fails leaves it to runc's own delete.
  if (c.exit_delete_in_process) {
    Status s = c.cgroups_path.empty() ? ok_status() : remove_cgroup(c.cgroups_path, opt.runtimes.systemd_cgroup());
    if (s.ok()) s = rt->forget(c.id);
    if (s.ok()) {
      c.runtime_may_exist = false;
      release_rootfs_at_exit(c);
      return;
    }
    spdlog::warn("container {}: deleting it at its exit: {}; through {} instead", c.id, s.message(), rt->binary());
  }
  // A plain delete: the init was reaped before its exit was recorded. In a pod-wide PID namespace
  // the runtime kills what the init left in the container's cgroup, as containerd's shim does
  // at the init's exit.
  if (Status s = rt->remove_stopped(c.id); !s.ok()) {
    c.runtime_hung = s.code() == Code::deadline_exceeded;
    spdlog::warn("container {}: deleting it from the runtime at its exit: {}; RemoveContainer will", c.id, s.message());
    return;
  }
  c.runtime_may_exist = false;
  release_rootfs_at_exit(c);
}

// StopContainer finishes the exit's delete itself when berthd does it (runc's, in process: a few
// milliseconds, nothing that can hang), as containerd's StopContainer includes the task's
// delete, so that a RemoveContainer right after it (kubelet, crictl rm -f) has nothing to wait
// for. A runtime's own delete stays on the worker: a hung runtime must not hold up the stop.
void ContainerManager::Impl::finish_exit_in_process(Container& c) {
  if (c.exit_delete_in_process && c.state() == v1::CONTAINER_EXITED) delete_exited_runtime_locked(c);
}

// An ended container's root filesystem serves nothing more (a CRI container never starts again),
// and unmounting an overlay takes milliseconds: done here rather than in RemoveContainer. Its
// writable layer stays until the removal (its usage is still reported).
void ContainerManager::Impl::release_rootfs_at_exit(Container& c) {
  if (Status s = unmount_container_rootfs(c.rootfs); !s.ok())
    spdlog::warn("container {}: unmounting its root filesystem at its exit: {}; RemoveContainer will", c.id,
                 s.message());
}

bool ContainerManager::Impl::wait_exited(Container& c, std::chrono::milliseconds timeout) const {
  MutexLock lock(c.mu);
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (c.rec.state != v1::CONTAINER_EXITED)
    if (c.exited.wait_until(lock.native(), deadline) == std::cv_status::timeout)
      return c.rec.state == v1::CONTAINER_EXITED;
  return true;
}

Status ContainerManager::Impl::kill_and_wait(Container& c, std::chrono::seconds timeout) {
  auto rt = runtime_for(c.runtime_handler);
  if (!rt.ok()) return rt.status();
  Status killed = send_signal(c, *rt, SIGKILL);
  // On cgroup v1 a frozen process takes its SIGKILL only once thawed: a kill that has not ended the
  // container within a second looks for that (one runtime call, only then).
  const auto first = std::min(timeout, std::chrono::seconds(1));
  if (wait_exited(c, first)) return ok_status();
  thaw_if_paused(*rt, c.id, "it was being killed");
  if (wait_exited(c, timeout - first)) return ok_status();
  // No exit came: the monitor could not be watched (logged at start). When the runtime says the
  // container is gone, record the exit from its exit file (or as unknown) rather than fail
  // every stop of it from now on.
  if (auto st = rt->state(c.id); st.ok() ? st->status == "stopped" : st.status().code() == Code::not_found) {
    ExitInfo exit;
    if (auto from_file = read_exit_file(c.exit_file); from_file.ok()) {
      exit = *from_file;
    } else {
      exit.exit_code = kUnknownExitCode;
      exit.reason = "the exit of container " + c.id + " was not reported by its monitor";
    }
    on_exit(c.id, exit);
    return ok_status();
  }
  if (!killed.ok()) return killed.context("kill container " + c.id);
  return deadline_exceeded("container " + c.id + " did not exit within " + std::to_string(timeout.count()) +
                           "s of SIGKILL");
}

Status ContainerManager::stop(const std::string& id_or_prefix, int64_t timeout_seconds) {
  Status err;
  auto c = impl_->find(id_or_prefix, &err);
  if (!c) return err.code() == Code::not_found ? ok_status() : err;  // CRI: stopping an unknown container succeeds
  // EXITED is final, so it is answered without the op: the runtime's delete at the exit holds
  // that op for a runtime start-up or longer, and StopPodSandbox (which stops every container of
  // the pod first) would wait for it.
  if (c->state() == v1::CONTAINER_EXITED) return ok_status();
  MutexLock op(c->op);
  if (c->state() != v1::CONTAINER_RUNNING) return ok_status();
  const std::string id = c->id;
  if (timeout_seconds > 0) {
    auto rt = impl_->runtime_for(c->runtime_handler);
    if (!rt.ok()) return rt.status();
    Status sent = send_signal(*c, *rt, c->stop_signal);
    if (!sent.ok() && c->state() == v1::CONTAINER_RUNNING) spdlog::warn("stop container {}: {}", id, sent.message());
    fault_point(FaultPoint::stop_container_signal_sent);
    if (impl_->wait_exited(*c, std::chrono::seconds(timeout_seconds))) {
      fault_point(FaultPoint::stop_container_exit_recorded);
      impl_->finish_exit_in_process(*c);
      return ok_status();
    }
    spdlog::info("container {} did not stop within {}s of signal {}; killing it", id, timeout_seconds, c->stop_signal);
  }
  Status killed = impl_->kill_and_wait(*c, std::chrono::seconds(30));
  fault_point(FaultPoint::stop_container_exit_recorded);
  if (killed.ok()) impl_->finish_exit_in_process(*c);
  return killed.context("stop container " + id);
}

}  // namespace berth
